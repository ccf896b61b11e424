package io.redlock.torture;

import io.redlock.testkit.History;
import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.WorkRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a client process hands its history and totals to the run: one tab-separated record
 * per line ({@code L} lease, {@code W} work, {@code C} totals, {@code F} failures by cause).
 * Instants are {@link System#nanoTime()} values, which on Linux come from one clock shared by
 * every process of the machine, so records of several processes compare.
 */
final class HistoryFile {
  private HistoryFile() {}

  static void write(Path file, History history, TortureCounters counters) throws IOException {
    List<String> lines = new ArrayList<>();
    for (LeaseRecord l : history.leases()) {
      lines.add(
          String.join(
              "\t",
              "L",
              l.client(),
              l.resource(),
              l.token(),
              Long.toString(l.grantedNanos()),
              Long.toString(l.validUntilNanos()),
              Long.toString(l.endedNanos()),
              Boolean.toString(l.lost())));
    }
    for (WorkRecord w : history.work()) {
      lines.add(
          String.join(
              "\t",
              "W",
              w.client(),
              w.resource(),
              w.token(),
              Long.toString(w.startNanos()),
              Long.toString(w.endNanos())));
    }
    lines.add(
        String.join(
            "\t",
            "C",
            Long.toString(counters.attempts()),
            Long.toString(counters.acquired()),
            Long.toString(counters.lostBeforeWrite())));
    counters
        .failures()
        .forEach((cause, count) -> lines.add(String.join("\t", "F", cause, Long.toString(count))));
    Files.write(file, lines, StandardCharsets.UTF_8);
  }

  /** Adds the records of {@code file} to {@code history} and its totals to {@code counters}. */
  static void read(Path file, History history, TortureCounters counters) throws IOException {
    long attempts = 0;
    long acquired = 0;
    long lost = 0;
    Map<String, Long> failures = new TreeMap<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String[] f = line.split("\t", -1);
      switch (f[0]) {
        case "L" ->
            history.lease(
                new LeaseRecord(
                    f[1],
                    f[2],
                    f[3],
                    Long.parseLong(f[4]),
                    Long.parseLong(f[5]),
                    Long.parseLong(f[6]),
                    Boolean.parseBoolean(f[7])));
        case "W" ->
            history.work(
                new WorkRecord(f[1], f[2], f[3], Long.parseLong(f[4]), Long.parseLong(f[5])));
        case "C" -> {
          attempts = Long.parseLong(f[1]);
          acquired = Long.parseLong(f[2]);
          lost = Long.parseLong(f[3]);
        }
        case "F" -> failures.merge(f[1], Long.parseLong(f[2]), Long::sum);
        default -> throw new IOException(file + ": unknown record " + f[0]);
      }
    }
    counters.add(attempts, acquired, lost, failures);
  }
}
