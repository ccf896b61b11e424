package io.redlock.cli;

import io.redlock.testkit.Violation;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The summary table {@code redlock demo} prints at the end: the counters and latencies of the
 * run, what the restart guard held back, and the verdict with up to 10 violations.
 *
 * <p>Thread-safety: not thread-safe; {@link #print} is called once, from the demo's main thread,
 * after the workers and the fault thread have stopped.
 */
final class DemoSummary {

  private final DemoSettings settings;

  DemoSummary(DemoSettings settings) {
    this.settings = settings;
  }

  /**
   * @param checkerViolations how many of {@code violations} the history check found (the
   *     others are the in-process check's)
   */
  void print(PrintWriter table, DemoStats stats, int checkerViolations,
      List<Violation> violations) {
    Histogram latency = stats.total;
    int faults = stats.faults.get();
    int nodes = settings.nodes();
    table.println();
    table.printf(Locale.ROOT, "Summary (%s, %d nodes, %d workers, %d resources, ttl %s)%n",
        DurationConverter.format(settings.duration()), nodes, settings.workers(),
        settings.resources(), DurationConverter.format(settings.ttl()));
    row(table, "acquisitions", Long.toString(stats.acquisitions.sum()));
    row(table, "attempts", Long.toString(stats.attempts.sum()));
    row(table, "failed attempts", Long.toString(stats.failedAttempts()));
    row(table, "acquire latency p50", ms(latency.getValueAtPercentile(50)));
    row(table, "acquire latency p99", ms(latency.getValueAtPercentile(99)));
    row(table, "acquire latency max", ms(latency.getMaxValue()));
    row(table, "faults injected", Integer.toString(faults));
    row(table, "held back (guard)", Long.toString(stats.heldBack.sum()));
    row(table, "leases lost", Long.toString(stats.lost.sum()));
    row(table, "violations", Integer.toString(violations.size()));
    table.printf(Locale.ROOT, "  (violations: %d from the in-process check, %d from the history"
        + " check of %d leases and %d critical sections; latency includes waiting for a busy"
        + " resource)%n", stats.occupancyViolations.size(), checkerViolations,
        stats.history.leases().size(), stats.history.work().size());
    table.println();
    long heldBack = stats.heldBack.sum();
    if (heldBack > 0) {
      table.printf(Locale.ROOT, "Restart guard: %d failed attempt(s) after the restart found the"
          + " restarted node held back (until reconnected, probed and up for %.1fs), from"
          + " +%.1fs to +%.1fs; e.g. \"%s\".%n",
          heldBack, stats.holdBack.toMillis() / 1e3, stats.firstHeldBack.get() / 1e9,
          stats.lastHeldBack.get() / 1e9, stats.heldBackDetail.get());
    } else if (stats.restartedAt.get(0) != 0) {
      table.println("Restart guard: no failed attempt after the restart happened to show the"
          + " restarted node held back (only failed attempts report each node's answer).");
    }
    if (!violations.isEmpty()) {
      table.println("SAFETY VIOLATED: " + violations.size() + " violation(s):");
      for (Violation violation : violations.subList(0, Math.min(10, violations.size()))) {
        table.println("  " + violation);
      }
    } else if (faults == 0) {
      table.println("No violations (no faults were injected).");
    } else if (nodes >= 5) {
      table.println("No violations: the quorum survived a minority failure.");
    } else {
      table.println("No violations: mutual exclusion held, though with " + nodes
          + " nodes two failed nodes left no quorum for a while.");
    }
    table.flush();
  }

  private static void row(PrintWriter table, String name, String value) {
    table.printf(Locale.ROOT, "  %-22s %12s%n", name, value);
  }

  private static String ms(long micros) {
    return String.format(Locale.ROOT, "%.2f ms", DemoStats.millis(micros));
  }
}
