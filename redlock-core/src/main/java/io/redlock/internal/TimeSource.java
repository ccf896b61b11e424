package io.redlock.internal;

/**
 * The monotonic clock and the timer the algorithm runs on.
 *
 * <p>In production it is {@link SystemTimeSource} ({@link System#nanoTime()} and one shared
 * timer thread); tests substitute a fake that advances by hand, so that every timeout, retry
 * delay and expiry runs without sleeping and in a repeatable order.
 *
 * <p>Implementations are thread-safe.
 */
public interface TimeSource {
  /** Monotonic time in nanoseconds; only differences between two readings mean anything. */
  long nanoTime();

  /**
   * Runs {@code task} once, {@code delayNanos} from now. Tasks must be short and must not
   * block: they share one thread.
   */
  Cancellable schedule(Runnable task, long delayNanos);

  /** A scheduled task that may be cancelled; cancelling a task that ran does nothing. */
  @FunctionalInterface
  interface Cancellable {
    void cancel();
  }
}
