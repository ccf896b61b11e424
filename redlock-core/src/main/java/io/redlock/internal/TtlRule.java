package io.redlock.internal;

import io.redlock.RedlockConfigException;
import java.time.Duration;

/**
 * The one rule a lease's ttl obeys, for the configured default ttl ({@code RedlockConfig}) and
 * for the ttl of every call (acquire, extend, the lock view) alike.
 *
 * <p>A ttl is accepted when it is at least 1 ms, at most {@code maxTtl} (the restart guard's
 * window: a longer lease could outlive it on a node that restarted and forgot it), longer than
 * the node timeout (a vote may take that long), and long enough to leave validity after the
 * drift margin.
 *
 * <p>A ttl refused is a {@link RedlockConfigException} wherever it was given, in the
 * configuration or to a method ({@link #refused}): the rule weighs the ttl against the
 * configuration ({@code maxTtl}, {@code nodeTimeout}, {@code driftFactor}), so a refusal is a
 * mismatch between the two, fixed by changing one or the other, and a caller catches the
 * same type (or {@link io.redlock.RedlockException}, the root of the library's exceptions) for
 * it whether the ttl came from {@code RedlockConfig.build()} or from {@code acquire},
 * {@code extend} or a lock view. Misuse that has nothing to do with the configuration (a null
 * ttl, a resource name refused) keeps the JDK's types.
 *
 * <p>Stateless, so thread-safe.
 */
public final class TtlRule {
  /** Why a ttl is not accepted. */
  public enum Problem {
    /** Under 1 ms: Redis expiry is in whole milliseconds. */
    UNDER_ONE_MILLISECOND,
    /** Over {@code maxTtl}. */
    OVER_MAX_TTL,
    /** Not longer than the node timeout. */
    NOT_OVER_NODE_TIMEOUT,
    /** No validity left after the drift margin. */
    NO_VALIDITY;

    /** What is accepted, as the end of a sentence "… is not accepted: it must be …". */
    public String accepted(Duration maxTtl, Duration nodeTimeout) {
      return switch (this) {
        case UNDER_ONE_MILLISECOND -> "at least 1 ms";
        case OVER_MAX_TTL ->
            "at most maxTtl ("
                + Durations.format(maxTtl)
                + "); use a shorter"
                + " ttl and extend the lease, or raise maxTtl on every client of the cluster";
        case NOT_OVER_NODE_TIMEOUT ->
            "longer than nodeTimeout ("
                + Durations.format(nodeTimeout)
                + "), and should be much longer";
        case NO_VALIDITY ->
            "long enough to leave validity after the drift margin" + " (ttl × driftFactor + 2 ms)";
      };
    }
  }

  private TtlRule() {}

  /**
   * The exception for {@code ttl} refused for {@code problem}: one sentence naming the ttl
   * and what is accepted, as every refused setting reads.
   */
  public static RedlockConfigException refused(
      Duration ttl, Problem problem, Duration maxTtl, Duration nodeTimeout) {
    return new RedlockConfigException(
        "ttl "
            + Durations.format(ttl)
            + " is not accepted: it must be "
            + problem.accepted(maxTtl, nodeTimeout));
  }

  /**
   * The first problem with {@code ttl}, or {@code null} if it is accepted. The other settings
   * must already be valid (a positive node timeout, a drift factor in [0, 0.5)).
   */
  public static Problem check(
      Duration ttl, Duration maxTtl, Duration nodeTimeout, double driftFactor) {
    if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
      return Problem.UNDER_ONE_MILLISECOND;
    }
    if (ttl.compareTo(maxTtl) > 0) {
      return Problem.OVER_MAX_TTL;
    }
    if (ttl.compareTo(nodeTimeout) <= 0) {
      return Problem.NOT_OVER_NODE_TIMEOUT;
    }
    long millis = ttl.toMillis();
    if (millis * 1_000_000L - Validity.driftNanos(millis, driftFactor) <= 0) {
      return Problem.NO_VALIDITY;
    }
    return null;
  }
}
