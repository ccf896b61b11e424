package io.redlock;

import java.util.Objects;

/**
 * What {@link Redlock#readmit} did with one node: whether its fencing counters are trusted again,
 * and if not, why.
 *
 * <p>An immutable value; thread-safe.
 *
 * @param node the node's address, without credentials
 * @param outcome what happened
 * @param countersRaised how many counters were raised on it (0 unless {@link Outcome#READMITTED})
 * @param detail what was found or went wrong, for people
 * @since 0.1.0
 */
public record ReadmitReport(String node, Outcome outcome, int countersRaised, String detail) {

  public ReadmitReport {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(detail, "detail");
  }

  /** What re-admission did. */
  public enum Outcome {
    /** Its counters were raised to the largest of the trusted nodes', and its process admitted. */
    READMITTED,
    /** Its data is already trusted complete in its current process: nothing was written. */
    ALREADY_TRUSTED,
    /**
     * Its restart guard window has not passed since a client first saw its process (a lease it
     * forgot may still be valid), or no client has seen it yet: nothing was written.
     */
    TOO_SOON,
    /**
     * Too many nodes are untrusted: some confirmed token may be on none of the trusted ones, so
     * no counter value can be known to cover it. Nothing was written.
     */
    TOO_FEW_TRUSTED,
    /**
     * It may evict keys without a ttl ({@code allkeys-*} with a memory limit): its counters
     * would not be trusted even once raised. Nothing was written.
     */
    EVICTS_COUNTERS,
    /** A node could not be read, refused, or changed meanwhile: nothing was written. */
    UNCHECKED
  }

  @Override
  public String toString() {
    return node + " " + outcome + (detail.isEmpty() ? "" : " (" + detail + ")");
  }
}
