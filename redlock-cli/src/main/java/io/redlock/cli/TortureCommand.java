package io.redlock.cli;

import io.redlock.torture.Fault;
import io.redlock.torture.HistoryJson;
import io.redlock.torture.TimelineReport;
import io.redlock.torture.TortureOptions;
import io.redlock.torture.TortureResult;
import io.redlock.torture.TortureRun;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code redlock torture}: the fault-injection run of {@code redlock-torture} from the shell,
 * with its progress line, its summary, a JSON history and an HTML timeline.
 */
@Command(
    name = "torture",
    mixinStandardHelpOptions = true,
    description = {
      "Runs clients against local Redis servers it starts, while a nemesis injects"
          + " faults, and checks the recorded history for violations of mutual exclusion.",
      "Writes history.json and report.html into --out."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:no violation",
      "1:violations found",
      "2:bad arguments",
      "3:the run could not be done"
    })
final class TortureCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--nodes",
      paramLabel = "<n>",
      defaultValue = "5",
      description = "Redis servers to start (default: ${DEFAULT-VALUE}).")
  int nodes;

  @Option(
      names = "--clients",
      paramLabel = "<n>",
      defaultValue = "4",
      description = "Clients, each with its own Redlock (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--processes",
      paramLabel = "<n>",
      defaultValue = "0",
      description =
          "Spread the clients over this many JVM processes (default: 0, threads of" + " this one).")
  int processes;

  @Option(
      names = "--resources",
      paramLabel = "<n>",
      defaultValue = "2",
      description = "Resources the clients contend for (default: ${DEFAULT-VALUE}).")
  int resources;

  @Option(
      names = "--duration",
      converter = DurationConverter.class,
      defaultValue = "30s",
      paramLabel = "<duration>",
      description = "How long the clients run (default: 30s).")
  Duration duration;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      defaultValue = "2s",
      paramLabel = "<duration>",
      description = "Lease ttl (default: 2s).")
  Duration ttl;

  @Option(
      names = "--work",
      converter = DurationConverter.class,
      defaultValue = "50ms",
      paramLabel = "<duration>",
      description = "Longest piece of work under a lease (default: 50ms; at most ttl/2).")
  Duration work;

  @Option(
      names = "--fault-interval",
      converter = DurationConverter.class,
      defaultValue = "2s",
      paramLabel = "<duration>",
      description = "Mean time between faults (default: 2s).")
  Duration faultInterval;

  @Option(
      names = "--faults",
      split = ",",
      paramLabel = "<fault>",
      description =
          "Faults to inject, comma-separated, from: ${COMPLETION-CANDIDATES}"
              + " (default: every one but MAJORITY_RESTART).")
  List<Fault> faults;

  @Option(
      names = "--seed",
      paramLabel = "<n>",
      defaultValue = "1",
      description = "Seed of the nemesis and the clients (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--no-restart-guard",
      description = "Run the clients without the restart guard (unsafe with empty restarts).")
  boolean noRestartGuard;

  @Option(
      names = "--persistence",
      description = "Servers persist every write (AOF, fsync always): restarts keep keys.")
  boolean persistence;

  @Option(
      names = "--pause-between-check-and-write",
      description =
          "A paused client pauses after checking its lease and before writing:"
              + " the unsafe case that fencing tokens exist for.")
  boolean pauseBetweenCheckAndWrite;

  @Option(
      names = "--fencing",
      description =
          "Fenced leases; every client reads, works on and writes a number in a store that"
              + " refuses stale fencing tokens, and the summary counts the writes it refused"
              + " and the updates lost (threads only, not with --processes).")
  boolean fencing;

  @Option(
      names = "--out",
      paramLabel = "<dir>",
      defaultValue = "redlock-torture-report",
      description = "Where history.json and report.html go (default: ${DEFAULT-VALUE}).")
  Path out;

  @Override
  public Integer call() throws InterruptedException {
    TortureOptions options;
    try {
      options =
          TortureOptions.builder()
              .nodes(nodes)
              .clients(clients)
              .processes(processes)
              .resources(resources)
              .duration(duration)
              .ttl(ttl)
              .work(work)
              .faultInterval(faultInterval)
              .faults(
                  faults == null
                      ? EnumSet.complementOf(EnumSet.of(Fault.MAJORITY_RESTART))
                      : EnumSet.copyOf(faults))
              .seed(seed)
              .restartGuard(!noRestartGuard)
              .persistence(persistence)
              .pauseBetweenCheckAndWrite(pauseBetweenCheckAndWrite)
              .fencing(fencing)
              .build();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(
          spec.commandLine(),
          "Invalid value: --" + e.getMessage().replaceFirst("^faultInterval", "fault-interval"));
    }
    PrintWriter stdout = spec.commandLine().getOut();
    PrintWriter stderr = spec.commandLine().getErr();
    boolean terminal = System.console() != null;
    stdout.println("torture: " + options);
    stdout.flush();
    TortureResult result;
    try {
      result =
          TortureRun.run(
              options,
              progress -> {
                String line =
                    String.format(
                        Locale.ROOT,
                        "%6.1fs  attempts %d  acquisitions %d  faults %d",
                        progress.elapsed().toMillis() / 1000.0,
                        progress.attempts(),
                        progress.acquisitions(),
                        progress.faults());
                stdout.print(terminal ? "\r" + line : line + System.lineSeparator());
                stdout.flush();
              });
    } catch (RuntimeException e) {
      stderr.println("redlock torture: could not run: " + e.getMessage());
      return ExitCodes.FAILURE;
    }
    if (terminal) {
      stdout.println();
    }
    stdout.println();
    stdout.print(result.summary());
    try {
      Files.createDirectories(out);
      HistoryJson.write(result, out.resolve("history.json"));
      TimelineReport.write(result, out.resolve("report.html"));
      stdout.println("wrote " + out.resolve("history.json") + " and " + out.resolve("report.html"));
    } catch (IOException e) {
      stderr.println("redlock torture: could not write the report into " + out + ": " + e);
      return ExitCodes.FAILURE;
    }
    stdout.flush();
    return result.violations().isEmpty() ? ExitCodes.OK : ExitCodes.VIOLATION;
  }
}
