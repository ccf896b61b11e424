package io.redlock.cli;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import io.redlock.testkit.WorkRecord;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One worker of {@code redlock demo}: until the demo stops, it picks a resource at random,
 * acquires it one attempt at a time, runs a short critical section that checks it is alone in
 * it, releases the lease, and records the lease and its work in the {@link DemoStats#history}.
 *
 * <p>Thread-safety: an instance runs on one thread of its own; what it shares (the Redlock
 * client, the {@link DemoStats}, the {@link DemoOutput}, the stop flag) is thread-safe.
 */
final class DemoWorker implements Runnable {

  static final String RESOURCE_PREFIX = "redlock-demo:resource-";
  static final Duration RETRY_DELAY = Duration.ofMillis(20);
  static final Duration RETRY_JITTER = Duration.ofMillis(10);
  /** How long one acquisition is retried before the worker gives up on it. */
  static final Duration MAX_WAIT = Duration.ofSeconds(10);
  /** The longest critical section. */
  static final Duration LONGEST_WORK = Duration.ofMillis(4);

  private final String name;
  private final Redlock redlock;
  private final int resources;
  private final Duration ttl;
  private final DemoStats stats;
  private final DemoOutput out;
  private final AtomicBoolean stopping;

  DemoWorker(String name, Redlock redlock, int resources, Duration ttl, DemoStats stats,
      DemoOutput out, AtomicBoolean stopping) {
    this.name = name;
    this.redlock = redlock;
    this.resources = resources;
    this.ttl = ttl;
    this.stats = stats;
    this.out = out;
    this.stopping = stopping;
  }

  /** Runs on the worker's thread until the demo stops. */
  @Override
  public void run() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    try {
      while (!stopping.get()) {
        int resource = random.nextInt(resources);
        String resourceName = RESOURCE_PREFIX + resource;
        Lease lease = acquire(resourceName, random);
        if (lease != null) {
          hold(resource, lease, random);
        }
      }
    } catch (InterruptedException e) {
      // stopping
    }
  }

  /**
   * Tries to acquire {@code resourceName}, one attempt at a time, until it succeeds, the demo
   * stops or {@link #MAX_WAIT} has passed; returns the lease, or null.
   */
  private Lease acquire(String resourceName, ThreadLocalRandom random)
      throws InterruptedException {
    long waitStart = System.nanoTime();
    while (!stopping.get()) {
      long attemptStart = System.nanoTime();
      stats.attempts.increment();
      try {
        Lease lease = redlock.acquire(resourceName, ttl);
        stats.latency.recordValue(Math.max(0, (System.nanoTime() - waitStart) / 1_000));
        stats.acquisitions.increment();
        return lease;
      } catch (LockUnavailableException e) {
        stats.unavailable.increment();
        stats.noteHeldBack(e.lastOutcomes(), attemptStart);
      } catch (RuntimeException e) {
        if (stopping.get()) {
          return null;
        }
        stats.errors.increment();
        reportOnce("acquire failed, counted as a failed attempt", e);
      }
      if (System.nanoTime() - waitStart > MAX_WAIT.toNanos()) {
        stats.gaveUp.increment();
        return null;
      }
      Thread.sleep(RETRY_DELAY.toMillis() + random.nextLong(RETRY_JITTER.toMillis() + 1));
    }
    return null;
  }

  /** The critical section, then the release; records the lease and its work. */
  private void hold(int resource, Lease lease, ThreadLocalRandom random)
      throws InterruptedException {
    long granted = System.nanoTime();
    long validUntil = granted + lease.remaining().toNanos();
    String resourceName = RESOURCE_PREFIX + resource;
    boolean lost = false;
    InterruptedException interrupted = null;
    try {
      AtomicInteger occupancy = stats.occupancy[resource];
      int holders = occupancy.incrementAndGet();
      try {
        if (holders != 1) {
          String when = out.timestamp();
          stats.occupancyViolations.add(new Violation(Violation.Kind.OVERLAPPING_WORK,
              resourceName, "in-process check: " + holders + " workers held it at once ("
                  + name + " at " + when + ")"));
          out.line(when + " VIOLATION: " + holders + " holders of " + resourceName + " at once");
        }
        lease.ensureValid();
        long workStart = System.nanoTime();
        Thread.sleep(1 + random.nextInt((int) LONGEST_WORK.toMillis()));
        long workEnd = System.nanoTime();
        stats.history.work(new WorkRecord(name, resourceName, lease.token(), workStart,
            workEnd));
      } finally {
        occupancy.decrementAndGet();
      }
    } catch (LeaseLostException e) {
      lost = true;
      stats.lost.increment();
    } catch (InterruptedException e) {
      interrupted = e;
    } catch (RuntimeException e) {
      if (!stopping.get()) {
        reportOnce("lease failed", e);
      }
    } finally {
      long ended = System.nanoTime();
      lost |= !lease.isValid();
      lease.close();
      stats.history.lease(new LeaseRecord(name, resourceName, lease.token(), granted,
          validUntil, ended, lost));
    }
    if (interrupted != null) {
      throw interrupted;
    }
  }

  /** Prints the first error of the whole demo only, so that errors do not flood the terminal. */
  private void reportOnce(String what, RuntimeException e) {
    if (stats.errorReported.compareAndSet(false, true)) {
      out.line(out.timestamp() + " " + what + " (further errors not shown): " + e);
    }
  }
}
