package io.redlock.testkit;

import java.time.Instant;
import java.util.Objects;

/**
 * One fault set or healed on a {@link FaultProxy}, as recorded in a {@link FaultLog}.
 *
 * <p>{@code at} is wall-clock time, for reading logs side by side; {@code nanoTime} is
 * {@link System#nanoTime()} taken at the same moment, for measuring intervals between events and
 * against a test's own {@code nanoTime} readings. Events of one log are recorded in the order
 * the faults took effect.
 *
 * <p>Immutable, hence thread-safe.
 *
 * @param at the wall-clock time the fault took effect
 * @param nanoTime {@link System#nanoTime()} at the same moment
 * @param proxy the name of the proxy (and so of the node or client/node pair) it applies to
 * @param kind what was done
 * @param detail a human-readable description, e.g. {@code "base=50ms jitter=10ms"}
 * @since 0.1.0
 */
public record FaultEvent(Instant at, long nanoTime, String proxy, Kind kind, String detail) {

  /**
   * Checks that every component is present.
   *
   * @throws NullPointerException if {@code at}, {@code proxy}, {@code kind} or {@code detail}
   *     is null
   */
  public FaultEvent {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(proxy, "proxy");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(detail, "detail");
  }

  /** What a fault event did. */
  public enum Kind {
    /** Latency and jitter set, changed or (with zero base and jitter) cleared. */
    LATENCY,
    /** Forwarding stopped in both directions, with the data discarded. */
    BLACKHOLE,
    /** Every connection closed, and new ones refused. */
    DROP,
    /** Some or all faults cleared; the detail says which. */
    HEAL,
    /** New connections go to another server from now on; the detail says which port. */
    RETARGET
  }
}
