package io.redlock;

import java.time.Duration;
import java.util.List;

/**
 * The lock could not be acquired within the retry budget.
 *
 * <p>It carries what each node answered in the last attempt, so that "held by another client"
 * (mostly {@link NodeOutcome.Vote#TAKEN}) can be told apart from "too many nodes are down"
 * (mostly {@link NodeOutcome.Vote#TIMEOUT} or {@link NodeOutcome.Vote#ERROR}).
 *
 * <p>Every failed attempt was undone on all nodes, and this is thrown only after the undoing
 * of the last one settled: every node that answered has deleted what the attempts set. A node
 * that did not answer in time may still hold such a key until its ttl runs out; it holds a
 * random token nobody else knows, so it only delays other clients, never misleads them.
 */
public final class LockUnavailableException extends RedlockException {
  private static final long serialVersionUID = 1L;

  private final List<String> resources;
  private final int attempts;
  private final Duration elapsed;
  private final transient List<NodeOutcome> lastOutcomes;

  public LockUnavailableException(
      List<String> resources, int attempts, Duration elapsed, String reason,
      List<NodeOutcome> lastOutcomes) {
    super(message(resources, attempts, elapsed, reason, lastOutcomes));
    this.resources = List.copyOf(resources);
    this.attempts = attempts;
    this.elapsed = elapsed;
    this.lastOutcomes = List.copyOf(lastOutcomes);
  }

  private static String message(
      List<String> resources, int attempts, Duration elapsed, String reason,
      List<NodeOutcome> outcomes) {
    return "could not acquire " + String.join(", ", resources) + " in " + attempts
        + (attempts == 1 ? " attempt" : " attempts") + " over " + elapsed.toMillis() + " ms: "
        + reason + "; last attempt: " + outcomes;
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

  /** What each node answered in the last attempt, in node order. */
  public List<NodeOutcome> lastOutcomes() {
    return lastOutcomes;
  }
}
