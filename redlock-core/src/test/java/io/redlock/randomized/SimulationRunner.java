package io.redlock.randomized;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs many schedules, seeds derived from one base seed, on all cores (each schedule is
 * single-threaded and deterministic, so the result does not depend on the threads).
 */
final class SimulationRunner {
  private SimulationRunner() {}

  /** The results of a batch; {@code failures} is in schedule order, at most a few kept. */
  record Summary(
      SimulationMode mode,
      long baseSeed,
      int schedules,
      int failedSchedules,
      long firstFailingIndex,
      List<SimulationRun.Outcome> failures,
      long leases,
      long commits,
      long failedAcquisitions,
      long tokenFailingSchedules,
      long elapsedNanos) {
    String describe() {
      return String.format(
          "%s: %d schedules (base seed %d) in %.1f s: %d leases, %d commits,"
              + " %d acquisitions given up; %d failing schedules (%d with tokens out of order)%s",
          mode,
          schedules,
          baseSeed,
          elapsedNanos / 1e9,
          leases,
          commits,
          failedAcquisitions,
          failedSchedules,
          tokenFailingSchedules,
          failedSchedules == 0
              ? ""
              : ", first at schedule #"
                  + firstFailingIndex
                  + " (seed "
                  + seedOf(baseSeed, firstFailingIndex)
                  + ")");
    }
  }

  /** The seed of schedule {@code index} of a batch: a well-mixed function of both. */
  static long seedOf(long baseSeed, long index) {
    long z = baseSeed + (index + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  static Summary run(SimulationMode mode, long baseSeed, int schedules) {
    QuietLogs.apply();
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
    long start = System.nanoTime();
    AtomicLong leases = new AtomicLong();
    AtomicLong commits = new AtomicLong();
    AtomicLong givenUp = new AtomicLong();
    AtomicLong tokenFailing = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<long[]>>> parts = new ArrayList<>();
      List<List<SimulationRun.Outcome>> kept = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        List<SimulationRun.Outcome> keep = new ArrayList<>();
        kept.add(keep);
        parts.add(
            pool.submit(
                () -> {
                  List<long[]> failing = new ArrayList<>();
                  long localLeases = 0;
                  long localCommits = 0;
                  long localGivenUp = 0;
                  for (int i = first; i < schedules; i += threads) {
                    SimulationRun.Outcome outcome =
                        SimulationRun.run(mode, seedOf(baseSeed, i), false);
                    localLeases += outcome.leases();
                    localCommits += outcome.commits();
                    localGivenUp += outcome.failedAcquisitions();
                    if (!outcome.tokenViolations().isEmpty()) {
                      tokenFailing.incrementAndGet();
                    }
                    if (outcome.failed()) {
                      failing.add(new long[] {i});
                      if (keep.size() < 3) {
                        keep.add(outcome);
                      }
                    }
                  }
                  leases.addAndGet(localLeases);
                  commits.addAndGet(localCommits);
                  givenUp.addAndGet(localGivenUp);
                  return failing;
                }));
      }
      int failed = 0;
      long firstIndex = -1;
      for (Future<List<long[]>> part : parts) {
        for (long[] index : part.get()) {
          failed++;
          if (firstIndex < 0 || index[0] < firstIndex) {
            firstIndex = index[0];
          }
        }
      }
      List<SimulationRun.Outcome> failures = new ArrayList<>();
      kept.forEach(failures::addAll);
      failures.sort(
          (a, b) -> Long.compare(indexOf(a, baseSeed, schedules), indexOf(b, baseSeed, schedules)));
      return new Summary(
          mode,
          baseSeed,
          schedules,
          failed,
          firstIndex,
          failures,
          leases.get(),
          commits.get(),
          givenUp.get(),
          tokenFailing.get(),
          System.nanoTime() - start);
    } catch (Exception e) {
      throw new AssertionError("simulation batch failed", e);
    } finally {
      pool.shutdownNow();
    }
  }

  private static long indexOf(SimulationRun.Outcome outcome, long baseSeed, int schedules) {
    for (long i = 0; i < schedules; i++) {
      if (seedOf(baseSeed, i) == outcome.schedule().seed()) {
        return i;
      }
    }
    return Long.MAX_VALUE;
  }
}
