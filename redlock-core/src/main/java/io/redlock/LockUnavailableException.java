package io.redlock;

import io.redlock.internal.Printable;
import java.time.Duration;
import java.util.List;

/**
 * The lock could not be acquired within the retry budget.
 *
 * <p>It carries what each node answered in the last attempt, so that "held by another client"
 * (mostly {@link NodeOutcome.Vote#TAKEN}) can be told apart from "too many nodes are down"
 * (mostly {@link NodeOutcome.Vote#TIMEOUT} or {@link NodeOutcome.Vote#ERROR}).
 *
 * <p>What is left behind: every failed attempt was undone, and this is thrown once the undo of
 * the last one has been sent to every node that may hold its token. On each node the undo runs
 * after the attempt's own request and before any later request of this {@link Redlock}, so
 * this client never meets its own leftovers. A node that does not run the undo (it is down,
 * or the connection broke) keeps such a key until its ttl runs out; the key holds a random
 * token nobody else knows, so it may delay other clients on that node, never mislead them.
 *
 * <p>Serializable with its outcomes, for example across a remote call.
 *
 * @since 0.1.0
 */
public final class LockUnavailableException extends RedlockException {
  private static final long serialVersionUID = 1L;

  private final List<String> resources;
  private final int attempts;
  private final Duration elapsed;
  private final List<NodeOutcome> lastOutcomes;

  public LockUnavailableException(
      List<String> resources,
      int attempts,
      Duration elapsed,
      String reason,
      List<NodeOutcome> lastOutcomes) {
    super(message(resources, attempts, elapsed, reason, lastOutcomes));
    this.resources = List.copyOf(resources);
    this.attempts = attempts;
    this.elapsed = elapsed;
    this.lastOutcomes = List.copyOf(lastOutcomes);
  }

  private static String message(
      List<String> resources,
      int attempts,
      Duration elapsed,
      String reason,
      List<NodeOutcome> outcomes) {
    return "could not acquire "
        + Printable.of(String.join(", ", resources))
        + " in "
        + attempts
        + (attempts == 1 ? " attempt" : " attempts")
        + " over "
        + elapsed.toMillis()
        + " ms: "
        + reason
        + "; last attempt: "
        + outcomes;
  }

  /** The resources that were asked for. */
  public List<String> resources() {
    return resources;
  }

  /** How many attempts were made. */
  public int attempts() {
    return attempts;
  }

  /** Time from the first attempt to giving up, measured with the monotonic clock. */
  public Duration elapsed() {
    return elapsed;
  }

  /**
   * Whether other holders alone kept the last attempt from a majority: the nodes that answered
   * "held by another token" ({@link NodeOutcome.Vote#TAKEN}) were so many that a majority could
   * not have granted even if every node that failed, timed out or was held back by the
   * restart guard had granted. {@code false} means node failures (or the restart guard)
   * decided it: the lock might have been had with the nodes answering, which is an outage to
   * report rather than contention. The same rule as the acquisition's WARN on node failures.
   *
   * @since 0.1.0
   */
  public boolean heldElsewhere() {
    int mightHaveGranted = 0;
    for (NodeOutcome outcome : lastOutcomes) {
      switch (outcome.vote()) {
        case GRANTED, TIMEOUT, ERROR, HELD_BACK, UNTRUSTED -> mightHaveGranted++;
        default -> {} // TAKEN, and PENDING: a round decided early by TAKEN answers
      }
    }
    return mightHaveGranted < lastOutcomes.size() / 2 + 1;
  }

  /** What each node answered in the last attempt, in node order. */
  public List<NodeOutcome> lastOutcomes() {
    return lastOutcomes;
  }
}
