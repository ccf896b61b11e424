package io.redlock.internal;

/**
 * The validity arithmetic of DESIGN §2, step 5, on the monotonic clock.
 *
 * <p>A lease asked for with ttl {@code T} at monotonic instant {@code t0} is valid until
 * {@code t0 + T − drift}, with {@code drift = T × driftFactor + 2 ms} rounded up to the next
 * nanosecond. {@code t0} is read before the first request leaves, so the time the requests
 * took is already inside the interval and never has to be subtracted twice.
 */
public final class Validity {
  /** The fixed part of the drift margin: 2 ms, for the granularity of Redis expiry. */
  public static final long DRIFT_FLOOR_NANOS = 2_000_000L;

  private Validity() {}

  /** The drift margin for a ttl, in nanoseconds; always at least {@link #DRIFT_FLOOR_NANOS}. */
  public static long driftNanos(long ttlMillis, double driftFactor) {
    return (long) Math.ceil(ttlMillis * 1_000_000.0 * driftFactor) + DRIFT_FLOOR_NANOS;
  }

  /** The monotonic instant until which a lease that started at {@code startNanos} is valid. */
  public static long validUntil(long startNanos, long ttlMillis, double driftFactor) {
    return startNanos + ttlMillis * 1_000_000L - driftNanos(ttlMillis, driftFactor);
  }

  /**
   * Whether a lease that became known at {@code decidedAtNanos} still has validity left.
   * Compared by subtraction, as {@link System#nanoTime()} values must be.
   */
  public static boolean isValidAt(long validUntilNanos, long nowNanos) {
    return validUntilNanos - nowNanos > 0;
  }
}
