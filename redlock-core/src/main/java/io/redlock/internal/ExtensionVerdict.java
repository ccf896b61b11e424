package io.redlock.internal;

import io.redlock.LossCause;

/**
 * The pure decision on an extension round (DESIGN §2, extension): what the lease becomes,
 * given what the nodes answered and the monotonic clock. Kept apart from the lease's state,
 * logging and listeners so that it can be tested exhaustively.
 *
 * <p>An extension is confirmed only by a majority while both the old and the new validity
 * last. Without a majority the lease is kept only while a majority may still hold its token,
 * and then only until the earlier of the two deadlines: nodes that applied the new ttl expire
 * the key at {@code start + newTtl}, which may be sooner than before.
 *
 * @param kind what the lease becomes
 * @param deadlineNanos the lease's deadline from now on, when it is kept
 */
record ExtensionVerdict(Kind kind, long deadlineNanos) {

  /** What the lease becomes. */
  enum Kind {
    /** Extended: the new deadline applies. */
    EXTENDED(null),
    /** Not confirmed by a majority, still valid until the earlier deadline. */
    KEPT_UNCONFIRMED(null),
    /** Its validity ran out before the extension was decided. */
    LOST_EXPIRED(LossCause.EXPIRED),
    /** A majority confirmed only after the new validity had run out. */
    LOST_CONFIRMED_TOO_LATE(LossCause.CONFIRMED_TOO_LATE),
    /** So many nodes answered that they no longer hold the token that no majority can. */
    LOST_NOT_HELD(LossCause.NOT_HELD),
    /** Not confirmed, and the earlier of the two deadlines has passed. */
    LOST_UNCONFIRMED(LossCause.UNCONFIRMED);

    private final LossCause cause;

    Kind(LossCause cause) {
      this.cause = cause;
    }

    /** Why the lease is lost, or {@code null} if it is kept. */
    LossCause cause() {
      return cause;
    }
  }

  /**
   * Decides an extension round.
   *
   * @param nodes how many nodes there are
   * @param quorum how many make a majority
   * @param reached whether a majority confirmed the extension
   * @param notHeld how many nodes answered that they do not hold the token
   * @param deadlineNanos the lease's deadline before the extension
   * @param newDeadlineNanos the deadline the extension gives, counted from its start
   * @param nowNanos when the round was decided
   */
  static ExtensionVerdict decide(
      int nodes,
      int quorum,
      boolean reached,
      int notHeld,
      long deadlineNanos,
      long newDeadlineNanos,
      long nowNanos) {
    if (!Validity.isValidAt(deadlineNanos, nowNanos)) {
      return new ExtensionVerdict(Kind.LOST_EXPIRED, deadlineNanos);
    }
    if (reached) {
      return Validity.isValidAt(newDeadlineNanos, nowNanos)
          ? new ExtensionVerdict(Kind.EXTENDED, newDeadlineNanos)
          : new ExtensionVerdict(Kind.LOST_CONFIRMED_TOO_LATE, deadlineNanos);
    }
    if (nodes - notHeld < quorum) {
      return new ExtensionVerdict(Kind.LOST_NOT_HELD, deadlineNanos);
    }
    long earlier = newDeadlineNanos - deadlineNanos < 0 ? newDeadlineNanos : deadlineNanos;
    return Validity.isValidAt(earlier, nowNanos)
        ? new ExtensionVerdict(Kind.KEPT_UNCONFIRMED, earlier)
        : new ExtensionVerdict(Kind.LOST_UNCONFIRMED, earlier);
  }
}
