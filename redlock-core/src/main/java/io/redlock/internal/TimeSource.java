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

  /**
   * Blocks until {@code future} is done, however it ends, as time passes on this clock: the
   * system clock just waits; a fake clock runs its timer meanwhile, so that a blocking call
   * can be tested on one thread.
   *
   * @throws InterruptedException if the thread is interrupted while the future is not done
   */
  default void await(java.util.concurrent.Future<?> future) throws InterruptedException {
    try {
      future.get();
    } catch (java.util.concurrent.ExecutionException
        | java.util.concurrent.CancellationException e) {
      // done; the caller reads how
    }
  }

  /** A scheduled task that may be cancelled; cancelling a task that ran does nothing. */
  @FunctionalInterface
  interface Cancellable {
    void cancel();
  }
}
