package io.redlock.testkit;

/**
 * A breach of mutual exclusion that {@link SafetyChecker} found.
 *
 * @param kind what was breached
 * @param resource on which resource
 * @param description the two leases (or the lease and the work) involved, with their times
 * @since 0.1.0
 */
public record Violation(Kind kind, String resource, String description) {

  /** The kinds of breach. */
  public enum Kind {
    /** Two leases on one resource were valid at the same time. */
    OVERLAPPING_LEASES,
    /** Two pieces of work under different leases on one resource ran at the same time. */
    OVERLAPPING_WORK,
    /** A client finished work after its own lease had ended. */
    WORK_AFTER_LEASE_ENDED,
    /**
     * A lease was granted a fencing token not larger than that of a lease on the same resource
     * granted before it.
     */
    FENCING_TOKEN_NOT_INCREASING,
    /** A fenced resource refused a holder whose lease was still valid. */
    VALID_HOLDER_REFUSED,
    /**
     * A fenced resource took a read or write from a holder after a later holder had already
     * used it: a stale write got through, and an update may be lost.
     */
    STALE_ACCESS_ACCEPTED
  }

  @Override
  public String toString() {
    return kind + " on " + resource + ": " + description;
  }
}
