package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.History;
import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML report of runs made up here: a long run's page stays small, with every fault and
 * violation kept and every lease counted; a short run's page draws each lease.
 */
class TimelineReportTest {

  private static final long SECOND = 1_000_000_000L;
  private static final long ORIGIN = 5_000 * SECOND; // any monotonic instant

  private static final Pattern SLICE =
      Pattern.compile(
          "<rect [^\\n]*<title>\\d+ s to \\d+ s: (\\d+) lease\\(s\\) began, (\\d+) lost;[^\\n]*");
  private static final Pattern TICK =
      Pattern.compile("<text class='tick' x='([0-9.]+)'[^>]*>([^<]+)</text>");

  @TempDir Path dir;

  /**
   * A run as the default options make it, for {@code minutes}: 4 clients taking turns on 2
   * resources with leases of 10 to 60 ms (one in 200 lost), a fault every 2 s (kills and pauses
   * with their ends, empty restarts, client pauses), and {@code violations} violations.
   */
  private static TortureResult run(int minutes, long leasesPerResource, int violations) {
    Random random = new Random(42);
    long span = minutes * 60 * SECOND;
    History history = new History();
    long count = 0;
    for (int r = 0; r < 2; r++) {
      long gap = span / leasesPerResource;
      for (long i = 0; i < leasesPerResource; i++) {
        long granted = ORIGIN + i * gap + random.nextInt(1_000_000);
        long valid = (10 + random.nextInt(50)) * 1_000_000L;
        boolean lost = random.nextInt(200) == 0;
        history.lease(
            new LeaseRecord(
                "client-" + random.nextInt(4),
                "torture:1:" + r,
                String.format("%040x", count++),
                granted,
                granted + 2 * SECOND,
                granted + valid,
                lost));
      }
    }
    List<FaultRecord> faults = new ArrayList<>();
    Instant wall = Instant.parse("2025-01-01T00:00:00Z");
    int f = 0;
    for (long t = 2 * SECOND; t < span; t += 2 * SECOND, f++) {
      long at = ORIGIN + t;
      Instant when = wall.plusNanos(t);
      int node = f % 5;
      switch (f % 4) {
        case 0 -> {
          faults.add(new FaultRecord(at, when, Fault.KILL, "start", List.of(node), "", ""));
          faults.add(
              new FaultRecord(
                  at + SECOND / 2, when.plusMillis(500), Fault.KILL, "end", List.of(node), "", ""));
        }
        case 1 -> {
          faults.add(new FaultRecord(at, when, Fault.PAUSE, "start", List.of(node), "", ""));
          faults.add(
              new FaultRecord(
                  at + SECOND / 4,
                  when.plusMillis(250),
                  Fault.PAUSE,
                  "end",
                  List.of(node),
                  "",
                  ""));
        }
        case 2 ->
            faults.add(new FaultRecord(at, when, Fault.RESTART_EMPTY, "at", List.of(node), "", ""));
        default ->
            faults.add(
                new FaultRecord(
                    at, when, Fault.CLIENT_PAUSE, "at", List.of(), "client-" + f % 4, "3000ms"));
      }
    }
    List<Violation> found = new ArrayList<>();
    for (int v = 0; v < violations; v++) {
      found.add(
          new Violation(
              Violation.Kind.OVERLAPPING_LEASES,
              "torture:1:" + v % 2,
              "lease " + v + " of client-1 and lease " + v + " of client-2 overlap by 12.0 ms"));
    }
    TortureOptions options = TortureOptions.builder().duration(Duration.ofMinutes(minutes)).build();
    return new TortureResult(
        options,
        Duration.ofMinutes(minutes),
        2 * leasesPerResource + 100,
        2 * leasesPerResource,
        0,
        Map.of(),
        faults,
        history,
        found,
        null,
        null);
  }

  private String write(TortureResult result) throws IOException {
    Path file = dir.resolve("report.html");
    TimelineReport.write(result, file);
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  @Test
  void aSixtyMinuteRunWritesUnderAMegabyteWithEveryFaultAndViolation() throws Exception {
    // 55,000 leases per resource: what the default options take in an hour (drawn one by one,
    // 14.9 MB)
    TortureResult result = run(60, 55_000, 25);
    String html = write(result);
    long bytes = Files.size(dir.resolve("report.html"));

    int resources = 2;
    long bound =
        20_000
            + (long) resources * LeaseBuckets.MOST * TimelineReport.BYTES_PER_SLICE
            + (long) result.faults().size() * TimelineReport.BYTES_PER_FAULT
            + result.violations().size() * 400L;
    assertThat(bytes).isLessThan(bound).isLessThan(1_000_000);

    // every fault drawn (its start or instant) and listed, every violation listed
    for (FaultRecord fault : result.faults()) {
      String text = fault.toString();
      int times = count(html, text);
      assertThat(times).as(text).isGreaterThanOrEqualTo(fault.phase().equals("end") ? 1 : 2);
    }
    for (Violation violation : result.violations()) {
      assertThat(html).contains("<li class='bad'>" + violation + "</li>");
    }
    assertThat(html).contains("25 violations");

    // each lane at most MOST slices, each slice within its bytes, every lease counted once
    Matcher slices = SLICE.matcher(html);
    long leases = 0;
    long lost = 0;
    int bars = 0;
    while (slices.find()) {
      bars++;
      leases += Long.parseLong(slices.group(1));
      lost += Long.parseLong(slices.group(2));
      assertThat(slices.group().length() + 1).isLessThanOrEqualTo(TimelineReport.BYTES_PER_SLICE);
    }
    assertThat(bars).isPositive().isLessThanOrEqualTo(resources * LeaseBuckets.MOST);
    assertThat(leases).isEqualTo(result.history().leases().size());
    assertThat(lost)
        .isEqualTo(result.history().leases().stream().filter(LeaseRecord::lost).count());
    assertThat(html).contains("each bar is a slice of 10 s");

    // fault records within their bytes: the page less the slices, per fault record
    long rest =
        bytes - html.lines().filter(l -> SLICE.matcher(l).find()).mapToLong(String::length).sum();
    assertThat((rest - 20_000 - 25 * 400) / result.faults().size())
        .isLessThanOrEqualTo(TimelineReport.BYTES_PER_FAULT);

    assertTicksApart(html);
  }

  @Test
  void aShortRunDrawsEachLease() throws Exception {
    TortureResult result = run(1, 1_000, 1);
    String html = write(result);
    // a lease's bar is titled with its client and token
    assertThat(count(html, "<title>client-")).isEqualTo(result.history().leases().size());
    assertThat(SLICE.matcher(html).find()).isFalse();
    assertThat(html).contains("each lease is a bar");
    assertTicksApart(html);
  }

  /** The axis labels as drawn: left to right, each clear of the next at 8 px a character. */
  private static void assertTicksApart(String html) {
    Matcher ticks = TICK.matcher(html);
    List<double[]> drawn = new ArrayList<>();
    while (ticks.find()) {
      drawn.add(new double[] {Double.parseDouble(ticks.group(1)), ticks.group(2).length()});
    }
    assertThat(drawn).hasSizeGreaterThan(2);
    for (int i = 1; i < drawn.size(); i++) {
      double apart = drawn.get(i)[0] - drawn.get(i - 1)[0];
      assertThat(apart).isGreaterThan((drawn.get(i)[1] + drawn.get(i - 1)[1]) * 8 / 2);
    }
  }

  private static int count(String text, String part) {
    int count = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
      count++;
    }
    return count;
  }
}
