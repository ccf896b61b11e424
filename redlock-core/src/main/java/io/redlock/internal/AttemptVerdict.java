package io.redlock.internal;

/**
 * The pure decisions on one acquisition attempt (DESIGN §2, steps 4 to 6): whether its round
 * won the lock, whether another attempt fits the retry budget, and, for a final failure, what
 * stood in the way. Kept apart from the acquisition's state, logging and undo so that each can
 * be tested exhaustively.
 */
final class AttemptVerdict {

  /** What one attempt's round gave. */
  enum Outcome {
    /** A majority granted while validity was left: the lease is ours. */
    ACQUIRED,
    /** A majority granted, but only after the validity had run out. */
    TOO_LATE,
    /** No majority granted. */
    NO_MAJORITY
  }

  /** What kept a majority from granting, for the log and the failure's message. */
  enum Obstacle {
    /** Other holders: the nodes that failed or were held back could not have made up for them. */
    CONTENTION,
    /** Node errors and timeouts: without them, a majority might have granted. */
    NODE_FAILURES,
    /** Nodes held back by the restart guard, with errors and timeouts, denied the majority. */
    RESTART_GUARD
  }

  private AttemptVerdict() {}

  /**
   * The outcome of a decided round.
   *
   * @param reached whether a majority granted
   * @param validUntilNanos the lease's deadline, counted from before the first request
   * @param decidedAtNanos when the round was decided
   */
  static Outcome outcome(boolean reached, long validUntilNanos, long decidedAtNanos) {
    if (!reached) {
      return Outcome.NO_MAJORITY;
    }
    return Validity.isValidAt(validUntilNanos, decidedAtNanos)
        ? Outcome.ACQUIRED
        : Outcome.TOO_LATE;
  }

  /**
   * Whether a failed attempt may be followed by another.
   *
   * @param retry whether the caller asked for retries at all
   * @param attempts the attempts made so far, the failed one included
   * @param retryCount how many retries the budget allows after the first attempt
   * @param elapsedAtNextNanos the time from the acquisition's start to the next attempt
   * @param maxWaitNanos the longest an acquisition may take
   */
  static boolean mayRetry(
      boolean retry, int attempts, int retryCount, long elapsedAtNextNanos, long maxWaitNanos) {
    return retry && attempts <= retryCount && elapsedAtNextNanos <= maxWaitNanos;
  }

  /**
   * What kept a majority from granting, in a round decided without one.
   *
   * @param quorum how many make a majority
   * @param granted nodes that granted
   * @param failed nodes that answered with an error or not in time
   * @param heldBack nodes the restart guard held back
   */
  static Obstacle obstacle(int quorum, int granted, int failed, int heldBack) {
    if (granted + failed >= quorum) {
      return Obstacle.NODE_FAILURES;
    }
    if (granted + failed + heldBack >= quorum) {
      return Obstacle.RESTART_GUARD;
    }
    return Obstacle.CONTENTION;
  }
}
