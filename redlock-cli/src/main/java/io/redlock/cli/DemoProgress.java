package io.redlock.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;

/**
 * The progress line of {@code redlock demo}: acquisitions and their rate, acquire latency
 * percentiles, failed attempts, faults, held-back attempts and violations so far; every second
 * on a terminal (updated in place), every 5 seconds otherwise.
 *
 * <p>Thread-safety: {@link #run} runs on the demo's main thread only; it reads the thread-safe
 * {@link DemoStats} while the workers update it.
 */
final class DemoProgress {

  private final DemoStats stats;
  private final DemoOutput out;
  private final Duration duration;
  private final AtomicBoolean stopping;

  DemoProgress(DemoStats stats, DemoOutput out, Duration duration, AtomicBoolean stopping) {
    this.stats = stats;
    this.out = out;
    this.duration = duration;
    this.stopping = stopping;
  }

  /** Prints the progress line until the duration is over (or Ctrl-C). */
  void run() throws InterruptedException {
    long startNanos = stats.startNanos;
    long end = startNanos + duration.toNanos();
    long second = TimeUnit.SECONDS.toNanos(1);
    long lastCount = 0;
    long lastTick = startNanos;
    for (int tick = 1; !stopping.get(); tick++) {
      long next = Math.min(startNanos + tick * second, end);
      long now;
      while ((now = System.nanoTime()) < next && !stopping.get()) {
        TimeUnit.NANOSECONDS.sleep(Math.min(next - now, TimeUnit.MILLISECONDS.toNanos(100)));
      }
      if (now >= end || stopping.get()) {
        return;
      }
      Histogram total = stats.drain();
      if (out.tty || tick % 5 == 0) {
        long count = stats.acquisitions.sum();
        double rate = (count - lastCount) / ((now - lastTick) / 1e9);
        lastCount = count;
        lastTick = now;
        out.progress(String.format(Locale.ROOT,
            "%6.1fs  acquisitions %d (%.0f/s)  p50 %.2f ms  p99 %.2f ms  failed attempts %d"
                + "  faults %d  held back %d  violations %d",
            (now - startNanos) / 1e9, count, rate,
            DemoStats.millis(total.getValueAtPercentile(50)),
            DemoStats.millis(total.getValueAtPercentile(99)), stats.failedAttempts(),
            stats.faults.get(), stats.heldBack.sum(), stats.occupancyViolations.size()));
      }
    }
  }
}
