package io.redlock.cli;

import io.redlock.testkit.Violation;
import io.redlock.torture.Fault;
import io.redlock.torture.TimelineReport;
import io.redlock.torture.TortureOptions;
import io.redlock.torture.TortureResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The HTML timeline report of {@code redlock demo}: the torture module's {@link TimelineReport},
 * filled with what the demo did, then renamed and described as a demo run.
 *
 * <p>Thread-safety: not thread-safe; {@link #write} is called once, from the demo's main thread,
 * after the workers and the fault thread have stopped.
 */
final class DemoReport {

  private final DemoSettings settings;

  DemoReport(DemoSettings settings) {
    this.settings = settings;
  }

  /** Writes the timeline report of the torture module, filled with what the demo did. */
  void write(Path report, DemoStats stats, List<Violation> violations) throws IOException {
    Duration duration = settings.duration();
    Duration ttl = settings.ttl();
    int nodes = settings.nodes();
    Duration longestWork = DemoWorker.LONGEST_WORK;
    Duration work = longestWork.compareTo(ttl.dividedBy(2)) <= 0 ? longestWork
        : ttl.dividedBy(2);
    // The demo's four fault steps spread over the middle half of the run.
    Duration interval = duration.dividedBy(6).compareTo(Duration.ofMillis(100)) < 0
        ? Duration.ofMillis(100) : duration.dividedBy(6);
    TortureOptions options = TortureOptions.builder()
        .nodes(nodes)
        .clients(settings.workers())
        .resources(settings.resources())
        .duration(duration)
        .ttl(ttl)
        .work(work)
        .faultInterval(interval)
        .faults(nodes >= 3 ? EnumSet.of(Fault.KILL, Fault.PAUSE, Fault.RESTART_EMPTY)
            : EnumSet.noneOf(Fault.class))
        .seed(0)
        .restartGuard(true)
        .build();
    Map<String, Long> failures = new LinkedHashMap<>();
    failures.put("lock unavailable (one attempt)", stats.unavailable.sum());
    failures.put("of which a restarted node was held back by the restart guard",
        stats.heldBack.sum());
    failures.put("error", stats.errors.sum());
    failures.put("gave up after " + DurationConverter.format(DemoWorker.MAX_WAIT),
        stats.gaveUp.sum());
    TortureResult result = new TortureResult(options, Duration.ofNanos(stats.elapsedNanos),
        stats.attempts.sum(), stats.acquisitions.sum(), stats.lost.sum(), failures,
        List.copyOf(stats.faultRecords), stats.history, violations);
    Path parent = report.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    TimelineReport.write(result, report);
    // The report is the torture run's: name it for the demo and describe the demo's run.
    String html = Files.readString(report, StandardCharsets.UTF_8)
        .replace("<title>Redlock torture run</title>", "<title>Redlock demo run</title>")
        .replace("<h1>Redlock torture run: ", "<h1>Redlock demo run: ")
        .replace("<p>" + escape(options.toString()) + "</p>", "<p>" + escape(String.format(
            Locale.ROOT, "redlock demo: %d nodes, %d workers on 2 Redlock clients (restart guard"
                + " on), %d resources, duration %s, ttl %s; faults: %s.", nodes,
            settings.workers(), settings.resources(), DurationConverter.format(duration),
            DurationConverter.format(ttl), nodes >= 3 ? "node 0 killed at 25%,"
                + " node 1 paused from 45% to 60%, node 0 restarted empty at 75%" : "none"))
            + "</p>");
    Files.writeString(report, html, StandardCharsets.UTF_8);
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("'", "&#39;");
  }
}
