package io.redlock.bench;

import io.redlock.Lease;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.FaultProxy;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A stalled minority under load: this project's {@link Redlock}, with the defaults, on five
 * local nodes, driven by 32 and 64 threads on distinct resources (plus four threads contending
 * for one resource, whose critical section checks mutual exclusion), while one or two nodes
 * stop answering for a minute:
 *
 * <ul>
 *   <li>{@code sigstop}: node 0 stopped with {@code SIGSTOP}, then resumed;
 *   <li>{@code blackhole}: node 0 reached through the test kit's {@link FaultProxy}, which
 *       keeps the connection open and answers nothing (a host behind a firewall that drops
 *       packets, or a process that accepts and never reads), then heals;
 *   <li>{@code two-sigstop}: nodes 0 and 1 stopped at once.
 * </ul>
 *
 * <p>Reported per run: cycles per second before, during and after the stall (each the median
 * of the one-second counts in its window), heap in use after a full GC before, at the end of
 * the stall and after, the time from the node's return until every stalled node granted a
 * vote again, failed acquisitions and mutual-exclusion violations. The client runs in this
 * JVM (its heap is the one measured); the figures go into the marked section of {@code
 * docs/performance.md}, which {@link LoadHarness} keeps when it rewrites the file.
 *
 * <pre>
 * ./bench --stall                      # builds, then runs this with the defaults
 * java -Xms512m -Xmx1g -cp redlock-bench/target/benchmarks.jar io.redlock.bench.StallHarness \
 *     --out docs/performance.md --stall 60s --threads 32,64
 * </pre>
 *
 * <p>Not a test: nothing runs it but this main method.
 */
public final class StallHarness {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final int CONTENDERS = 4;
  private static final Duration WARM_UP = Duration.ofSeconds(15);

  /**
   * Each contender starts one attempt per this much time at most: 2 ms. A load of its own,
   * the same whatever the nodes do. Unpaced, the contenders tried again as soon as an attempt
   * failed, and with a node set aside an attempt fails about four times sooner (its vote fails
   * at once, and two refusals of four decide): they went from about 1,200 to 4,500 attempts a
   * second and took the measured threads' CPU, most of the drop that 64 threads showed during
   * a stall.
   */
  private static final long CONTENDER_PACE_NANOS = 2_000_000L;

  private StallHarness() {}

  /** One measured run. */
  record Run(
      String scenario,
      int threads,
      double before,
      double during,
      double after,
      double heapBefore,
      double heapDuring,
      double heapAfter,
      double recoverSeconds,
      long failures,
      long violations) {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of("docs/performance.md");
    Duration stall = Duration.ofSeconds(60);
    Duration window = Duration.ofSeconds(10);
    List<Integer> threads = List.of(32, 64);
    List<String> scenarios = List.of("sigstop", "blackhole", "two-sigstop");
    for (int i = 0; i < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--out" -> out = Path.of(value);
        case "--stall" -> stall = LoadHarness.Options.duration(value);
        case "--window" -> window = LoadHarness.Options.duration(value);
        case "--threads" ->
            threads = Arrays.stream(value.split(",")).map(Integer::valueOf).toList();
        case "--scenarios" -> scenarios = List.of(value.split(","));
        default ->
            throw new IllegalArgumentException(
                "unknown option "
                    + args[i]
                    + "; accepted: --out PATH --stall 60s --window 10s --threads 32,64"
                    + " --scenarios sigstop,blackhole,two-sigstop");
      }
    }
    String load = loadAverage();
    Instant started = Instant.now();
    List<Run> runs = new ArrayList<>();
    for (String scenario : scenarios) {
      for (int t : threads) {
        Run run = measure(scenario, t, stall, window);
        System.out.println(run);
        runs.add(run);
      }
    }
    String section = section(runs, stall, window, load + ", at the end " + loadAverage(), started);
    MarkedSection.STALL.write(out, section);
    System.out.println(section);
    System.exit(0);
  }

  private static Run measure(String scenario, int threads, Duration stall, Duration window)
      throws Exception {
    boolean proxied = scenario.equals("blackhole");
    int stalled = scenario.equals("two-sigstop") ? 2 : 1;
    try (RedisServers servers = RedisServers.startFresh(5)) {
      FaultProxy proxy =
          proxied ? FaultProxy.start("node0", servers.host(), servers.port(0)) : null;
      try {
        List<String> uris = new ArrayList<>(servers.uris());
        if (proxy != null) {
          // the fleet requires its password, the proxy passes it on
          uris.set(0, "redis://:" + servers.password() + "@" + servers.host() + ":" + proxy.port());
        }
        AtomicLongArray granted = new AtomicLongArray(5);
        RedlockListener listener =
            new RedlockListener() {
              @Override
              public void nodeVoted(RedlockEvent.NodeVote event) {
                if (event.outcome().vote() == Vote.GRANTED) {
                  granted.incrementAndGet(event.outcome().index());
                }
              }
            };
        try (Redlock redlock =
            Redlock.create(RedlockConfig.builder().nodes(uris).listener(listener).build())) {
          Driver driver = new Driver(redlock, threads, scenario);
          try {
            // Warm-up: with 5 s, the "before" window still ran while the JIT compiled (its
            // first seconds slower than the rest), which flattered the ratio.
            sleep(WARM_UP);
            double heapBefore = heapAfterGc();
            double before = driver.rate(window);
            Runnable stop;
            Runnable resume;
            if (proxy != null) {
              stop = proxy::blackhole;
              resume = proxy::heal;
            } else {
              stop =
                  () -> {
                    for (int i = 0; i < stalled; i++) {
                      servers.pause(i);
                    }
                  };
              resume =
                  () -> {
                    for (int i = 0; i < stalled; i++) {
                      servers.resume(i);
                    }
                  };
            }
            stop.run();
            double during = driver.rate(stall.minusSeconds(1));
            double heapDuring = heapAfterGc();
            sleep(Duration.ofSeconds(1));
            long[] grantedAtResume = new long[stalled];
            for (int i = 0; i < stalled; i++) {
              grantedAtResume[i] = granted.get(i);
            }
            long resumed = System.nanoTime();
            resume.run();
            double recover = -1;
            long deadline = resumed + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
              boolean all = true;
              for (int i = 0; i < stalled; i++) {
                all &= granted.get(i) > grantedAtResume[i];
              }
              if (all) {
                recover = (System.nanoTime() - resumed) / 1e9;
                break;
              }
              Thread.sleep(10);
            }
            double after = driver.rate(window);
            double heapAfter = heapAfterGc();
            return new Run(
                scenario,
                threads,
                before,
                during,
                after,
                heapBefore,
                heapDuring,
                heapAfter,
                recover,
                driver.failures.get(),
                driver.violations.get());
          } finally {
            driver.stop();
          }
        }
      } finally {
        if (proxy != null) {
          proxy.close();
        }
      }
    }
  }

  /** The load: threads on distinct resources, and contenders on one resource. */
  private static final class Driver {
    final AtomicLong cycles = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong violations = new AtomicLong();
    final AtomicInteger occupancy = new AtomicInteger();
    final AtomicBoolean running = new AtomicBoolean(true);
    final List<Thread> workers = new ArrayList<>();

    Driver(Redlock redlock, int threads, String prefix) {
      for (int t = 0; t < threads + CONTENDERS; t++) {
        boolean contender = t >= threads;
        String resource = contender ? "stall:" + prefix + ":shared" : "stall:" + prefix + ":" + t;
        Thread worker =
            new Thread(
                () -> {
                  long next = System.nanoTime();
                  while (running.get()) {
                    try {
                      if (contender) {
                        next += CONTENDER_PACE_NANOS;
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                          LockSupport.parkNanos(wait);
                        } else {
                          next = System.nanoTime(); // late: no burst to catch up
                        }
                      }
                      Optional<Lease> lease = redlock.tryAcquire(resource, TTL);
                      if (lease.isEmpty()) {
                        if (!contender) {
                          failures.incrementAndGet();
                        }
                        continue;
                      }
                      try (Lease held = lease.get()) {
                        if (contender) {
                          if (occupancy.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                          }
                          occupancy.decrementAndGet();
                        } else {
                          cycles.incrementAndGet();
                        }
                      }
                    } catch (InterruptedException e) {
                      return;
                    } catch (RuntimeException e) {
                      failures.incrementAndGet();
                    }
                  }
                },
                "stall-load-" + t);
        worker.setDaemon(true);
        workers.add(worker);
        worker.start();
      }
    }

    /** The median of the one-second cycle counts over {@code window}. */
    double rate(Duration window) throws InterruptedException {
      int seconds = (int) Math.max(1, window.toSeconds());
      long[] counts = new long[seconds];
      long previous = cycles.get();
      long next = System.nanoTime();
      for (int s = 0; s < seconds; s++) {
        next += 1_000_000_000L;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
        long now = cycles.get();
        counts[s] = now - previous;
        previous = now;
      }
      Arrays.sort(counts);
      return counts.length % 2 == 1
          ? counts[counts.length / 2]
          : (counts[counts.length / 2 - 1] + counts[counts.length / 2]) / 2.0;
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread worker : workers) {
        worker.join(30_000);
      }
    }
  }

  /** Heap in use after a full collection, in MiB. */
  static double heapAfterGc() throws InterruptedException {
    for (int i = 0; i < 2; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }

  private static void sleep(Duration duration) throws InterruptedException {
    Thread.sleep(duration.toMillis());
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  static String section(
      List<Run> runs, Duration stall, Duration window, String load, Instant started) {
    StringBuilder md = new StringBuilder();
    md.append(MarkedSection.STALL.begin()).append('\n');
    md.append("## A stalled minority under load\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Made by `StallHarness` (`./bench --stall`) on %s, load average at start %s, one"
                + " run. Five local nodes, `Redlock` with the defaults (restart guard on, fleet"
                + " declared fresh), in the harness's JVM (-Xmx1g); N threads lock and release"
                + " resources of their own (ttl 10 s) while %d more contend for one resource"
                + " and check mutual exclusion, each starting at most one attempt per %d ms"
                + " (a load of their own, the same in every phase). After %d s of warm-up, the"
                + " stall lasts %d s. Cycles/s is the median of"
                + " the one-second counts in each window (%d s before, the stall, %d s after);"
                + " heap is the heap in use after a full GC; recovery is the time from the"
                + " node's return until every stalled node granted a vote again.\n\n",
            started,
            load,
            CONTENDERS,
            CONTENDER_PACE_NANOS / 1_000_000L,
            WARM_UP.toSeconds(),
            stall.toSeconds(),
            window.toSeconds(),
            window.toSeconds()));
    md.append(
        "| Stall | Threads | Cycles/s before | during | after | During / before | Heap MiB"
            + " before | during | after | Growth | Recovery | Failed | Violations |\n");
    md.append(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            + " ---: |\n");
    for (Run r : runs) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.0f | %.0f | %.0f | %.2f× | %.1f | %.1f | %.1f | %+.1f | %s | %d | %d |\n",
              describe(r.scenario()),
              r.threads(),
              r.before(),
              r.during(),
              r.after(),
              r.before() == 0 ? 0 : r.during() / r.before(),
              r.heapBefore(),
              r.heapDuring(),
              r.heapAfter(),
              Math.max(r.heapDuring(), r.heapAfter()) - r.heapBefore(),
              r.recoverSeconds() < 0
                  ? "not within 60 s"
                  : String.format(Locale.ROOT, "%.2f s", r.recoverSeconds()),
              r.failures(),
              r.violations()));
    }
    md.append(
        "\nTargets: heap growth under 32 MiB, throughput during the stall at least 0.8× of"
            + " before, recovery within 5 s, no violation. What bounds the memory and why the"
            + " stalled node's releases may be dropped: docs/safety.md, \"A stalled node\".\n");
    md.append(MarkedSection.STALL.end()).append('\n');
    return md.toString();
  }

  private static String describe(String scenario) {
    return switch (scenario) {
      case "sigstop" -> "1 of 5 SIGSTOP";
      case "blackhole" -> "1 of 5 black hole";
      case "two-sigstop" -> "2 of 5 SIGSTOP";
      default -> scenario;
    };
  }
}
