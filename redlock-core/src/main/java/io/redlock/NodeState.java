package io.redlock;

import java.util.Objects;

/**
 * One node as a {@link Redlock} sees it now: whether it answers, and whether its votes count
 * toward the quorum. Read by {@link Redlock#nodeStates()}; health checks and gauges are made
 * from it.
 *
 * <p>It is what the library already knows, not a new request: the restart guard probes every
 * node once a second (with the guard off too, for this alone), and a lost connection is known
 * at once. So a node that stops answering shows as unreachable within a probe interval plus
 * the transport's probe timeout (with {@code redlock-lettuce}: the larger of 1 s and ten node
 * timeouts), and one that answers again within a probe interval of its answer.
 *
 * <p>An immutable value; thread-safe.
 *
 * @param index the node's position in {@link RedlockConfig#nodes()}
 * @param node the node's address, without credentials
 * @param reachable whether the node answered its last probe on its current connection (an
 *     error reply such as an ACL refusal is an answer; a timeout, a lost or refused
 *     connection is not)
 * @param counted whether the restart guard counts the node's votes now: with the guard off,
 *     every independent master is counted, reachable or not
 * @param status the one condition that code acts on: {@link Status#COUNTED} exactly when the
 *     node is both reachable and counted
 * @param reason why the node is not {@link Status#COUNTED} (for a node held back, also for
 *     how long), or an empty string; for people only: code acts on {@code status}
 * @since 0.1.0
 */
public record NodeState(
    int index, String node, boolean reachable, boolean counted, Status status, String reason) {

  /** What keeps a node from voting, the first that applies, in the order of the values below. */
  public enum Status {
    /** The node did not answer its last probe, or its connection was lost since. */
    UNREACHABLE,
    /** The node answers but is not an independent master (a replica, or a second URI of one). */
    EXCLUDED,
    /**
     * The node answers but refused the restart guard's probe (an ACL without {@code INFO} or
     * {@code TIME}): it does not count while the guard is on.
     */
    PROBE_REFUSED,
    /**
     * The node answers, but this client's entry in its max-ttl register is not confirmed (a
     * raise failed, or the first is on its way): it counts again after a successful probe.
     */
    UNCONFIRMED,
    /**
     * The node answers and the restart guard holds it back until it has been seen for the
     * guard's window ({@link RedlockConfig#restartGuardWindow()}): it restarted, lost data or
     * its clock jumped, or no client has seen it long enough yet. It counts by itself once the
     * window has passed; the reason says when.
     */
    HELD_BACK,
    /** The node answers and its votes count. */
    COUNTED
  }

  public NodeState {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(reason, "reason");
    if ((status == Status.COUNTED) != (reachable && counted)) {
      throw new IllegalArgumentException(
          "status " + status + " with reachable " + reachable + " and counted " + counted);
    }
  }

  @Override
  public String toString() {
    return reason.isEmpty() ? node + " " + status : node + " " + status + " (" + reason + ")";
  }
}
