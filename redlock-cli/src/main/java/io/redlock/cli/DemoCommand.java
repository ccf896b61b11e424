package io.redlock.cli;

import io.redlock.Redlock;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Violation;
import io.redlock.torture.Fault;
import io.redlock.torture.FaultPlan;
import io.redlock.torture.TimelineReport;
import io.redlock.torture.TortureOptions;
import io.redlock.torture.TortureResult;
import io.redlock.torture.TortureRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code redlock demo}: a scripted torture run ({@link TortureRun}) that starts local
 * redis-server processes, lets worker threads of two Redlock clients compete for a few
 * resources while nodes are killed, paused, resumed and restarted empty, and checks that no
 * resource ever has two holders at once: in process while it runs ({@link DemoConsole}), and at
 * the end with the run's history checker. It ends with a summary table and the run's HTML
 * timeline report, titled as a demo run.
 *
 * <p>This class holds the options, checks them, turns them into the run's options and fault
 * script, and stops the nodes from a shutdown hook on Ctrl-C; {@link DemoConsole} prints.
 *
 * <p>Thread-safety: picocli runs {@link #call} once, on one thread; {@link #startedPids} may be
 * read from any thread.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Starts local redis-server nodes and lets workers of two Redlock clients compete for a"
          + " few resources while nodes are killed, paused, resumed and restarted. Every"
          + " critical section checks that it is alone, and at the end the recorded history"
          + " of every lease and every critical section is checked for overlaps; any overlap"
          + " is a safety violation.",
      "",
      "Faults (with 3 or more nodes): at 25%% of the duration node 0 is killed, at 45%% node 1"
          + " is paused, at 60%% resumed, at 75%% node 0 is restarted empty. The clients' restart"
          + " guard then keeps node 0's votes out of the quorum until it has been up for a ttl"
          + " (plus the drift margin), since it may have forgotten locks.",
      "",
      "At the end it prints a summary table, writes an HTML timeline report (--report) and"
          + " stops every redis-server it started, also on Ctrl-C."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:no violation",
      "1:a safety violation was seen",
      "2:bad arguments",
      "3:the demo could not run, or the report could not be written"
    })
final class DemoCommand implements Callable<Integer> {

  private static final int MAX_NODES = 9;

  /** The limits of {@link TortureOptions}, whose run the demo is. */
  private static final int MAX_WORKERS = 64;

  private static final int MAX_RESOURCES = 64;
  private static final Duration MIN_TTL = Duration.ofMillis(200);

  /** The longest critical section. */
  private static final Duration LONGEST_WORK = Duration.ofMillis(4);

  /** The faults, with 3 or more nodes; as the description above says. */
  private static final List<FaultPlan.Step> SCRIPT =
      List.of(
          new FaultPlan.Step(0.25, FaultPlan.Action.KILL, 0),
          new FaultPlan.Step(0.45, FaultPlan.Action.PAUSE, 1),
          new FaultPlan.Step(0.60, FaultPlan.Action.RESUME, 1),
          new FaultPlan.Step(0.75, FaultPlan.Action.RESTART_EMPTY, 0));

  /** With --fencing: two workers paused between their check and their write. */
  private static final List<FaultPlan.Step> FENCING_PAUSES =
      List.of(
          new FaultPlan.Step(0.35, FaultPlan.Action.PAUSE_CLIENT, 0),
          new FaultPlan.Step(0.85, FaultPlan.Action.PAUSE_CLIENT, 1));

  /**
   * The library logs every acquisition that runs out of attempts as a WARN; the demo's workers
   * contend all the time and the demo counts their failures itself, so these would flood the
   * terminal. The logger's name is the one the core documents for it.
   */
  private static final String ACQUISITION_LOG_LEVEL =
      "org.slf4j.simpleLogger.log." + Redlock.ACQUISITION_LOGGER;

  @Spec CommandSpec spec;

  @Option(
      names = "--duration",
      defaultValue = "30s",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "How long to run (default: ${DEFAULT-VALUE}); e.g. 500ms, 30s, 5m, PT30S.")
  Duration duration;

  @Option(
      names = "--nodes",
      defaultValue = "5",
      paramLabel = "<count>",
      description = "Local redis-server nodes to start, 1 to 9 (default: ${DEFAULT-VALUE}).")
  int nodes;

  @Option(
      names = "--workers",
      defaultValue = "8",
      paramLabel = "<count>",
      description =
          "Worker threads, split over two Redlock clients, 1 to 64"
              + " (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(
      names = "--resources",
      defaultValue = "3",
      paramLabel = "<count>",
      description = "Resources the workers compete for, 1 to 64 (default: ${DEFAULT-VALUE}).")
  int resources;

  @Option(
      names = "--ttl",
      defaultValue = "2s",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Lease time to live, at least 200ms (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--fencing",
      description =
          "Fenced leases, and workers that write to a store that refuses stale fencing"
              + " tokens. Two workers are paused between their check and their write for"
              + " longer than their lease (at 35%% and 85%% of the duration): their leases"
              + " overlap their successors' in time, and the store refuses their stale writes."
              + " See docs/fencing.md.")
  boolean fencing;

  @Option(
      names = "--report",
      defaultValue = "redlock-demo.html",
      paramLabel = "<file>",
      description =
          "Where the HTML timeline report goes (default: ${DEFAULT-VALUE}, in the"
              + " current directory).")
  Path report;

  /**
   * Every redis-server process id this demo started (restarts included), in order; for tests
   * that check every one of them is gone once the demo returned.
   */
  final List<Long> startedPids = new CopyOnWriteArrayList<>();

  @Override
  public Integer call() throws InterruptedException {
    checkArguments();
    if (System.getProperty(ACQUISITION_LOG_LEVEL) == null) {
      System.setProperty(ACQUISITION_LOG_LEVEL, "error"); // before the logger is created
    }
    // The workers are the run's clients, split over two Redlocks that reach the nodes
    // directly; the faults are a fixed script; the run's history checker decides, and the
    // console's in-process check runs beside it.
    TortureOptions options =
        TortureOptions.builder()
            .nodes(nodes)
            .clients(workers)
            .redlocks(Math.min(2, workers))
            .proxies(false)
            .clientPrefix("worker-")
            .resourcePrefix("redlock-demo:resource-")
            .resources(resources)
            .duration(duration)
            .ttl(ttl)
            .work(LONGEST_WORK)
            .faults(EnumSet.noneOf(Fault.class))
            .seed(0)
            .restartGuard(true)
            .fencing(fencing)
            .pauseBetweenCheckAndWrite(fencing)
            .build();
    List<FaultPlan.Step> script = new ArrayList<>(nodes >= 3 ? SCRIPT : List.of());
    if (fencing) {
      script.addAll(FENCING_PAUSES);
      script.sort(java.util.Comparator.comparingDouble(FaultPlan.Step::at));
    }
    Duration holdBack = TortureRun.restartGuardWindow(options);
    DemoConsole console =
        new DemoConsole(
            spec.commandLine().getOut(),
            System.console() != null,
            options,
            script,
            holdBack,
            startedPids);
    Thread hook =
        new Thread(
            () -> {
              RedisServers servers = console.servers.get();
              if (servers != null) {
                System.err.println("\nredlock demo: interrupted; stopping the redis-server nodes");
                servers.close();
              }
            },
            "redlock-demo-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    TortureResult result;
    try {
      console.line("Starting " + nodes + " local redis-server node(s)...");
      result = TortureRun.run(options, FaultPlan.script(script), console);
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException alreadyShuttingDown) {
        // the hook is running or has run
      }
    }
    console.endProgress();
    console.line(
        "Stopped the workers, both Redlock clients and all " + nodes + " redis-server node(s).");
    // With fencing, paused workers overlap their successors on purpose: the in-process check
    // exempts a holder whose lease had ended (never two valid leases), and the run's fencing
    // checker (in the result's violations) fails the run for a token out of grant order, a
    // stale write the store took, or a valid holder it refused.
    List<Violation> violations = new ArrayList<>(console.occupancyViolations());
    violations.addAll(result.violations());
    if (result.fenced() != null && result.fenced().lostUpdates() != 0) {
      violations.add(
          new Violation(
              Violation.Kind.STALE_ACCESS_ACCEPTED,
              "fenced store",
              result.fenced().lostUpdates() + " update(s) lost: a stale write got through"));
    }
    console.summary(result, violations);
    int exit = violations.isEmpty() ? ExitCodes.OK : ExitCodes.VIOLATION;
    try {
      Path parent = report.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      TimelineReport.write(
          new TortureResult(
              options,
              result.elapsed(),
              result.attempts(),
              result.acquisitions(),
              result.lostBeforeWrite(),
              result.failures(),
              result.faults(),
              result.history(),
              violations,
              result.fenced(),
              result.heap()),
          report,
          "Redlock demo run",
          String.format(
              Locale.ROOT,
              "redlock demo: %d nodes, %d workers on %d Redlock clients (restart guard on),"
                  + " %d resources, duration %s, ttl %s; faults: %s.",
              nodes,
              workers,
              options.redlocks(),
              resources,
              format(duration),
              format(ttl),
              script.isEmpty()
                  ? "none"
                  : "node 0 killed at 25%, node 1 paused from 45% to 60%, node 0"
                      + " restarted empty at 75%"));
      console.line("Timeline report: " + report.toAbsolutePath().normalize());
    } catch (IOException | RuntimeException e) {
      spec.commandLine()
          .getErr()
          .println("redlock demo: could not write the report to " + report + ": " + e);
      spec.commandLine().getErr().flush();
      return exit == ExitCodes.OK ? ExitCodes.FAILURE : exit;
    }
    return exit;
  }

  private void checkArguments() {
    if (nodes < 1 || nodes > MAX_NODES) {
      throw invalid("--nodes", nodes + " is not accepted: it must be from 1 to " + MAX_NODES);
    }
    if (workers < 1 || workers > MAX_WORKERS) {
      throw invalid("--workers", workers + " is not accepted: it must be from 1 to " + MAX_WORKERS);
    }
    if (resources < 1 || resources > MAX_RESOURCES) {
      throw invalid(
          "--resources", resources + " is not accepted: it must be from 1 to " + MAX_RESOURCES);
    }
    if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
      throw invalid(
          "--ttl",
          format(ttl) + " is not accepted: it must be from " + format(MIN_TTL) + " to 1 day");
    }
  }

  private ParameterException invalid(String option, String message) {
    return new ParameterException(
        spec.commandLine(), "Invalid value for option '" + option + "': " + message);
  }

  private static String format(Duration d) {
    return DurationConverter.format(d);
  }
}
