package io.redlock;

import java.util.List;
import java.util.Objects;

/**
 * What {@link Redlock#init} did on each node.
 *
 * <p>An immutable value; thread-safe.
 *
 * @param nodes one result per node, in configuration order
 * @since 0.1.0
 */
public record InitReport(List<NodeResult> nodes) {

  public InitReport {
    nodes = List.copyOf(nodes);
  }

  /** Whether every node now carries a marker bound to its current process. */
  public boolean complete() {
    return nodes.stream().allMatch(node -> node.outcome() == Outcome.MARKED);
  }

  /** What {@code init} did on one node. */
  public enum Outcome {
    /** The marker was written, bound to the node's current {@code run_id}. */
    MARKED,
    /** The node holds keys that may be locks (under the key prefix): nothing was written. */
    HOLDS_KEYS,
    /**
     * The node's max-ttl register holds a live entry: clients are running, or stopped too
     * recently for their leases to have ended, so nothing was written. {@code init} is for a
     * cluster no client uses; a node that lost its fencing counters is re-admitted instead.
     */
    CLIENTS_RUNNING,
    /**
     * Whether the node holds locks could not be ruled out (unreachable, or it refused the
     * check or the write): nothing was written to it.
     */
    UNCHECKED,
    /** The node looked empty, but another node refused, so nothing was written anywhere. */
    NOT_WRITTEN
  }

  /**
   * One node's result.
   *
   * @param index the node's position in {@link RedlockConfig#nodes()}
   * @param node the node's address, without credentials
   * @param runId the {@code run_id} the marker is bound to, or {@code null} if not read
   * @param outcome what happened
   * @param detail what was found or went wrong, for people; empty when marked
   */
  public record NodeResult(int index, String node, String runId, Outcome outcome, String detail) {
    public NodeResult {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(detail, "detail");
    }

    @Override
    public String toString() {
      return node + " " + outcome + (detail.isEmpty() ? "" : " (" + detail + ")");
    }
  }
}
