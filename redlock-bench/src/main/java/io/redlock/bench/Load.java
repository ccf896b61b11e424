package io.redlock.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Drives one implementation with a number of threads for a warm-up and a measured window.
 *
 * <p>Each thread loops acquire, (critical section), release, and records the whole cycle's
 * latency in its own HdrHistogram when the cycle started after the warm-up and ended inside
 * the window. Threads work on distinct resources ({@code prefix:i}) or all on one
 * ({@code prefix}). CPU time of the client and of the servers is sampled at both ends of the
 * window. In the critical section an occupancy counter detects a second holder,
 * and a plain (non-atomic) counter, incremented there, loses updates if two ever overlap.
 */
final class Load {
  private Load() {}

  private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** Written only inside the critical section: a data race if mutual exclusion fails. */
  private static final class Shared {
    volatile long counter;
  }

  static Figure run(
      LockUnderTest impl,
      String prefix,
      int threads,
      boolean oneResource,
      Duration warmup,
      Duration window,
      CpuMeter cpu)
      throws InterruptedException {
    List<Histogram> histograms = new ArrayList<>();
    AtomicLong failures = new AtomicLong();
    AtomicLong violations = new AtomicLong();
    AtomicLong acquired = new AtomicLong();
    AtomicInteger occupancy = new AtomicInteger();
    Shared shared = new Shared();
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    long[] bounds = new long[2];
    List<Thread> workers = new ArrayList<>();
    List<Throwable> errors = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Histogram histogram = new Histogram(HIGHEST_NANOS, 3);
      histograms.add(histogram);
      String resource = oneResource ? prefix : prefix + ":" + t;
      Thread worker =
          new Thread(
              () -> {
                ready.countDown();
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                long measureFrom = bounds[0];
                long end = bounds[1];
                long errorsSeen = 0;
                while (true) {
                  long t0 = System.nanoTime();
                  if (t0 - end >= 0) {
                    break;
                  }
                  boolean measured = t0 - measureFrom >= 0;
                  AutoCloseable held;
                  try {
                    held = impl.lock(resource);
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    if (measured) {
                      failures.incrementAndGet();
                    }
                    if (errorsSeen++ == 0) {
                      synchronized (errors) {
                        errors.add(e);
                      }
                    }
                    sleepQuietly(1);
                    continue;
                  }
                  if (held == null) {
                    if (measured) {
                      failures.incrementAndGet();
                    }
                    continue;
                  }
                  if (oneResource) {
                    if (occupancy.incrementAndGet() != 1) {
                      violations.incrementAndGet();
                    }
                    shared.counter = shared.counter + 1; // deliberately not atomic
                    acquired.incrementAndGet();
                    occupancy.decrementAndGet();
                  }
                  try {
                    held.close();
                  } catch (Exception e) {
                    if (errorsSeen++ == 0) {
                      synchronized (errors) {
                        errors.add(e);
                      }
                    }
                  }
                  long t1 = System.nanoTime();
                  if (measured && t1 - end <= 0) {
                    histogram.recordValue(Math.min(Math.max(1, t1 - t0), HIGHEST_NANOS));
                  }
                }
              },
              "bench-" + impl.name() + "-" + t);
      worker.setDaemon(true);
      workers.add(worker);
      worker.start();
    }
    ready.await();
    long start = System.nanoTime();
    bounds[0] = start + warmup.toNanos();
    bounds[1] = bounds[0] + window.toNanos();
    go.countDown(); // publishes bounds to the workers
    sleepUntil(bounds[0]);
    double[] cpuFrom = cpu.sample();
    sleepUntil(bounds[1]);
    double[] cpuTo = cpu.sample();
    for (Thread worker : workers) {
      worker.join(window.toMillis() + warmup.toMillis() + 60_000);
      if (worker.isAlive()) {
        worker.interrupt();
        worker.join(5_000);
      }
    }
    synchronized (errors) {
      for (Throwable e : errors) {
        System.err.printf(
            Locale.ROOT, "  %s: error in a cycle (counted as failure): %s%n", impl.name(), e);
      }
    }
    Histogram total = new Histogram(HIGHEST_NANOS, 3);
    histograms.forEach(total::add);
    long lost = oneResource ? acquired.get() - shared.counter : 0;
    return Figure.of(
        total, window.toNanos() / 1e9, failures.get(), violations.get(), lost, cpuFrom, cpuTo);
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
