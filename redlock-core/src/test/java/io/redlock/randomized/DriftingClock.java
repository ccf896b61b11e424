package io.redlock.randomized;

import io.redlock.fake.FakeTime;
import io.redlock.internal.TimeSource;

/**
 * A client's own monotonic clock and timer over the simulation's true time: it runs at
 * {@code rate} (1 + ρ) true nanoseconds per nanosecond, from an arbitrary origin (any
 * {@code long}, so readings may wrap, as {@link System#nanoTime()} may). A delay asked for
 * on this clock is converted to true time ({@code delay / rate}); the task then runs through
 * the client's {@link ClientProcess}, so a paused client runs it late.
 */
final class DriftingClock implements TimeSource {
  private final FakeTime truth;
  private final double rate;
  private final long offset;
  private final ClientProcess process;

  DriftingClock(FakeTime truth, double rate, long offset, ClientProcess process) {
    this.truth = truth;
    this.rate = rate;
    this.offset = offset;
    this.process = process;
  }

  @Override
  public long nanoTime() {
    return offset + (long) Math.floor(truth.nanoTime() * rate);
  }

  @Override
  public Cancellable schedule(Runnable task, long delayNanos) {
    long trueDelay = (long) Math.ceil(Math.max(0, delayNanos) / rate);
    boolean[] cancelled = new boolean[1];
    Cancellable timer =
        truth.schedule(
            () ->
                process.run(
                    () -> {
                      if (!cancelled[0]) {
                        task.run();
                      }
                    }),
            trueDelay);
    return () -> {
      cancelled[0] = true;
      timer.cancel();
    };
  }

  /** The true instant at which this clock reads {@code localNanos} (wrap-safe). */
  long toTrue(long localNanos) {
    return (long) Math.ceil((localNanos - offset) / rate);
  }

  double rate() {
    return rate;
  }
}
