package io.redlock.cli;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.History;
import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.SafetyChecker;
import io.redlock.testkit.Violation;
import io.redlock.testkit.WorkRecord;
import io.redlock.torture.Fault;
import io.redlock.torture.FaultRecord;
import io.redlock.torture.TimelineReport;
import io.redlock.torture.TortureOptions;
import io.redlock.torture.TortureResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code redlock demo}: starts local redis-server processes, lets worker threads of two Redlock
 * clients compete for a few resources while nodes are killed, paused, resumed and restarted
 * empty, and checks that no resource ever has two holders at once: in process while it runs,
 * and at the end with {@link SafetyChecker} over the recorded {@link History}. It ends with a
 * summary table and an HTML timeline report.
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
            + " stops every redis-server it started, also on Ctrl-C."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:no violation",
        "1:a safety violation was seen",
        "2:bad arguments",
        "3:the demo could not run, or the report could not be written"})
final class DemoCommand implements Callable<Integer> {

  private static final String RESOURCE_PREFIX = "redlock-demo:resource-";
  private static final Duration RETRY_DELAY = Duration.ofMillis(20);
  private static final Duration RETRY_JITTER = Duration.ofMillis(10);
  private static final Duration MAX_WAIT = Duration.ofSeconds(10);
  private static final Duration LONGEST_WORK = Duration.ofMillis(4);
  private static final int MAX_NODES = 9;
  /** The limits of {@link TortureOptions}, whose report the demo writes. */
  private static final int MAX_WORKERS = 64;
  private static final int MAX_RESOURCES = 64;
  private static final Duration MIN_TTL = Duration.ofMillis(200);
  /**
   * The library logs every acquisition that runs out of attempts as a WARN; the demo makes one
   * attempt per call and counts the failures itself, so these would flood the terminal.
   */
  private static final String ACQUISITION_LOG_LEVEL =
      "org.slf4j.simpleLogger.log.io.redlock.internal.Acquisition";
  /** How the detail of a node's vote begins when the restart guard held the node back. */
  static final String HELD_BACK = "held back by the restart guard";

  @Spec
  CommandSpec spec;

  @Option(names = "--duration", defaultValue = "30s", converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "How long to run (default: ${DEFAULT-VALUE}); e.g. 500ms, 30s, 5m, PT30S.")
  Duration duration;

  @Option(names = "--nodes", defaultValue = "5", paramLabel = "<count>",
      description = "Local redis-server nodes to start, 1 to 9 (default: ${DEFAULT-VALUE}).")
  int nodes;

  @Option(names = "--workers", defaultValue = "8", paramLabel = "<count>",
      description = "Worker threads, split over two Redlock clients, 1 to 64"
          + " (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(names = "--resources", defaultValue = "3", paramLabel = "<count>",
      description = "Resources the workers compete for, 1 to 64 (default: ${DEFAULT-VALUE}).")
  int resources;

  @Option(names = "--ttl", defaultValue = "2s", converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Lease time to live, at least 200ms (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(names = "--report", defaultValue = "redlock-demo.html", paramLabel = "<file>",
      description = "Where the HTML timeline report goes (default: ${DEFAULT-VALUE}, in the"
          + " current directory).")
  Path report;

  /**
   * Every redis-server process id this demo started (restarts included), in order; for tests
   * that check every one of them is gone once the demo returned.
   */
  final List<Long> startedPids = new CopyOnWriteArrayList<>();

  private final AtomicBoolean stopping = new AtomicBoolean();
  private Output out;
  private long startNanos;

  @Override
  public Integer call() throws InterruptedException {
    checkArguments();
    if (System.getProperty(ACQUISITION_LOG_LEVEL) == null) {
      System.setProperty(ACQUISITION_LOG_LEVEL, "error"); // before the logger is created
    }
    out = new Output(spec.commandLine().getOut(), System.console() != null);
    AtomicReference<RedisServers> started = new AtomicReference<>();
    Thread hook = new Thread(() -> {
      stopping.set(true);
      RedisServers servers = started.get();
      if (servers != null) {
        System.err.println("\nredlock demo: interrupted; stopping the redis-server nodes");
        servers.close();
      }
    }, "redlock-demo-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    Stats stats;
    try {
      out.line("Starting " + nodes + " local redis-server node(s)...");
      RedisServers servers = RedisServers.start(nodes);
      started.set(servers);
      try {
        for (int i = 0; i < servers.size(); i++) {
          startedPids.add(servers.pid(i));
        }
        printNodes(servers);
        stats = run(servers);
      } finally {
        servers.close();
      }
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException alreadyShuttingDown) {
        // the hook is running or has run
      }
    }
    out.line("Stopped the workers, both Redlock clients and all " + nodes
        + " redis-server node(s).");
    List<Violation> checked = SafetyChecker.check(stats.history);
    List<Violation> violations = new ArrayList<>(stats.occupancyViolations);
    violations.addAll(checked);
    printSummary(stats, checked.size(), violations);
    int exit = violations.isEmpty() ? ExitCodes.OK : ExitCodes.VIOLATION;
    try {
      writeReport(stats, violations);
      out.line("Timeline report: " + report.toAbsolutePath().normalize());
    } catch (IOException | RuntimeException e) {
      spec.commandLine().getErr().println("redlock demo: could not write the report to "
          + report + ": " + e);
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
      throw invalid("--workers", workers + " is not accepted: it must be from 1 to "
          + MAX_WORKERS);
    }
    if (resources < 1 || resources > MAX_RESOURCES) {
      throw invalid("--resources", resources + " is not accepted: it must be from 1 to "
          + MAX_RESOURCES);
    }
    if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
      throw invalid("--ttl", format(ttl) + " is not accepted: it must be from "
          + format(MIN_TTL) + " to 1 day");
    }
  }

  private ParameterException invalid(String option, String message) {
    return new ParameterException(spec.commandLine(),
        "Invalid value for option '" + option + "': " + message);
  }

  private void printNodes(RedisServers servers) {
    out.line("Started " + servers.size() + " redis-server node(s) ("
        + RedisBinary.version().map(v -> "version " + v + ", ").orElse("")
        + RedisBinary.locate() + "):");
    for (int i = 0; i < servers.size(); i++) {
      out.line(String.format(Locale.ROOT, "  node %d  %s  pid %d", i, servers.uri(i),
          servers.pid(i)));
    }
  }

  private Stats run(RedisServers servers) throws InterruptedException {
    // One attempt per acquire call: the workers retry themselves, so that every failed
    // attempt, with what each node answered, is seen (and the restart guard with it).
    RedlockConfig config = RedlockConfig.builder()
        .nodes(servers.uris())
        .ttl(ttl)
        .retryCount(0)
        .build();
    Stats stats = new Stats(resources, nodes);
    try (Redlock first = Redlock.create(config);
        Redlock second = Redlock.create(config)) {
      out.line(String.format(Locale.ROOT,
          "Running %s: %d workers on 2 Redlock clients (quorum %d of %d, restart guard %s),"
              + " %d resource(s), ttl %s", format(duration), workers, first.quorum(), nodes,
          config.restartGuard() ? "on" : "off", resources, format(ttl)));
      startNanos = System.nanoTime();
      ScheduledExecutorService faults = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "redlock-demo-faults");
        thread.setDaemon(true);
        return thread;
      });
      List<Thread> threads = new ArrayList<>();
      try {
        scheduleFaults(faults, servers, stats, config);
        for (int w = 0; w < workers; w++) {
          Redlock redlock = w % 2 == 0 ? first : second;
          String name = "worker-" + w;
          Thread thread = new Thread(() -> work(name, redlock, stats), "redlock-demo-" + name);
          thread.setDaemon(true);
          threads.add(thread);
          thread.start();
        }
        reportProgress(stats);
      } finally {
        stopping.set(true);
        faults.shutdownNow();
        stopWorkers(threads);
        faults.awaitTermination(10, TimeUnit.SECONDS);
      }
      stats.elapsedNanos = System.nanoTime() - startNanos;
      out.endProgress();
      stats.drain();
    }
    return stats;
  }

  private void scheduleFaults(ScheduledExecutorService faults, RedisServers servers,
      Stats stats, RedlockConfig config) {
    if (nodes < 3) {
      out.line("No faults: they need at least 3 nodes.");
      return;
    }
    stats.holdBack = ttl.plus(config.driftFor(ttl));
    Runnable nothing = () -> { };
    List<Step> schedule = List.of(
        new Step(0.25, "kill node 0", "killed node 0", 0, () -> {
          servers.kill(0);
          stats.fault(Fault.KILL, "start", 0, "");
        }, nothing),
        new Step(0.45, "pause node 1", "paused node 1", 1, () -> {
          servers.pause(1);
          stats.fault(Fault.PAUSE, "start", 1, "");
        }, nothing),
        new Step(0.60, "resume node 1", "resumed node 1", 1, () -> {
          servers.resume(1);
          stats.fault(Fault.PAUSE, "end", 1, "");
        }, nothing),
        new Step(0.75, "restart node 0 (empty)", "restarted node 0 (empty)", 0, () -> {
          servers.restart(0);
          startedPids.add(servers.pid(0));
          stats.restartedAt.set(0, System.nanoTime());
          stats.fault(Fault.KILL, "end", 0, "");
          stats.fault(Fault.RESTART_EMPTY, "at", 0, "empty");
        }, () -> {
          if (config.restartGuard()) {
            out.line(timestamp() + String.format(Locale.ROOT, " restart guard: node 0 is held"
                + " back until it has been up for %.1fs (it may have forgotten locks)",
                stats.holdBack.toMillis() / 1e3));
          }
        }));
    StringBuilder plan = new StringBuilder("Fault schedule:");
    for (Step step : schedule) {
      long atNanos = (long) (duration.toNanos() * step.share());
      plan.append(String.format(Locale.ROOT, " %s at %.1fs;", step.plan(), atNanos / 1e9));
      faults.schedule(() -> {
        try {
          step.action().run();
          stats.faults.incrementAndGet();
          out.line(timestamp() + " fault: " + step.done() + " " + servers.uri(step.node())
              + (servers.isRunning(step.node()) ? " pid " + servers.pid(step.node()) : ""));
          step.after().run();
        } catch (RuntimeException e) {
          if (!stopping.get()) {
            out.line(timestamp() + " fault failed: " + step.plan() + ": " + e.getMessage());
          }
        }
      }, atNanos, TimeUnit.NANOSECONDS);
    }
    plan.setLength(plan.length() - 1);
    out.line(plan.toString());
  }

  /** Runs on one worker thread until the demo stops. */
  private void work(String worker, Redlock redlock, Stats stats) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    try {
      while (!stopping.get()) {
        int resource = random.nextInt(resources);
        String name = RESOURCE_PREFIX + resource;
        Lease lease = acquire(redlock, name, stats, random);
        if (lease != null) {
          hold(worker, resource, lease, stats, random);
        }
      }
    } catch (InterruptedException e) {
      // stopping
    }
  }

  /**
   * Tries to acquire {@code name}, one attempt at a time, until it succeeds, the demo stops or
   * {@link #MAX_WAIT} has passed; returns the lease, or null.
   */
  private Lease acquire(Redlock redlock, String name, Stats stats, ThreadLocalRandom random)
      throws InterruptedException {
    long waitStart = System.nanoTime();
    while (!stopping.get()) {
      long attemptStart = System.nanoTime();
      stats.attempts.increment();
      try {
        Lease lease = redlock.acquire(name, ttl);
        stats.latency.recordValue(Math.max(0, (System.nanoTime() - waitStart) / 1_000));
        stats.acquisitions.increment();
        return lease;
      } catch (LockUnavailableException e) {
        stats.unavailable.increment();
        noteHeldBack(e.lastOutcomes(), attemptStart, stats);
      } catch (RuntimeException e) {
        if (stopping.get()) {
          return null;
        }
        stats.errors.increment();
        reportOnce(stats, "acquire failed, counted as a failed attempt", e);
      }
      if (System.nanoTime() - waitStart > MAX_WAIT.toNanos()) {
        stats.gaveUp.increment();
        return null;
      }
      Thread.sleep(RETRY_DELAY.toMillis() + random.nextLong(RETRY_JITTER.toMillis() + 1));
    }
    return null;
  }

  /**
   * Counts a failed attempt that a restart guard held a restarted node back in: only for
   * attempts begun after that node's restart (while a node is down, the guard holds it back
   * too, until it is probed again; that is not counted here).
   */
  private void noteHeldBack(List<NodeOutcome> outcomes, long attemptStart, Stats stats) {
    boolean seen = false;
    boolean recent = false;
    for (NodeOutcome outcome : outcomes) {
      long restarted = outcome.index() < stats.restartedAt.length()
          ? stats.restartedAt.get(outcome.index()) : 0;
      if (restarted != 0 && attemptStart - restarted >= 0
          && outcome.detail().startsWith(HELD_BACK)) {
        seen = true;
        // "up for X of Y": reconnected and probed, but not up for the hold-back time yet;
        // otherwise not yet probed since the connection came back.
        boolean upFor = outcome.detail().contains("up for");
        recent |= upFor;
        String detail = "node " + outcome.index() + ": " + outcome.detail();
        stats.heldBackDetail.accumulateAndGet(detail,
            (old, now) -> old.isEmpty() || upFor ? now : old);
      }
    }
    if (seen) {
      long now = System.nanoTime() - startNanos;
      stats.heldBack.increment();
      if (recent) {
        stats.heldBackRecent.increment();
      }
      stats.firstHeldBack.accumulateAndGet(now, (a, b) -> a < 0 ? b : Math.min(a, b));
      stats.lastHeldBack.accumulateAndGet(now, Math::max);
    }
  }

  /** The critical section, then the release; records the lease and its work. */
  private void hold(String worker, int resource, Lease lease, Stats stats,
      ThreadLocalRandom random) throws InterruptedException {
    long granted = System.nanoTime();
    long validUntil = granted + lease.remaining().toNanos();
    String name = RESOURCE_PREFIX + resource;
    boolean lost = false;
    InterruptedException interrupted = null;
    try {
      AtomicInteger occupancy = stats.occupancy[resource];
      int holders = occupancy.incrementAndGet();
      try {
        if (holders != 1) {
          String when = timestamp();
          stats.occupancyViolations.add(new Violation(Violation.Kind.OVERLAPPING_WORK, name,
              "in-process check: " + holders + " workers held it at once (" + worker + " at "
                  + when + ")"));
          out.line(when + " VIOLATION: " + holders + " holders of " + name + " at once");
        }
        lease.ensureValid();
        long workStart = System.nanoTime();
        Thread.sleep(1 + random.nextInt((int) LONGEST_WORK.toMillis()));
        long workEnd = System.nanoTime();
        stats.history.work(new WorkRecord(worker, name, lease.token(), workStart, workEnd));
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
        reportOnce(stats, "lease failed", e);
      }
    } finally {
      long ended = System.nanoTime();
      lost |= !lease.isValid();
      lease.close();
      stats.history.lease(new LeaseRecord(worker, name, lease.token(), granted, validUntil,
          ended, lost));
    }
    if (interrupted != null) {
      throw interrupted;
    }
  }

  private void reportOnce(Stats stats, String what, RuntimeException e) {
    if (stats.errorReported.compareAndSet(false, true)) {
      out.line(timestamp() + " " + what + " (further errors not shown): " + e);
    }
  }

  /** Prints the progress line until the duration is over (or Ctrl-C). */
  private void reportProgress(Stats stats) throws InterruptedException {
    long end = startNanos + duration.toNanos();
    long second = TimeUnit.SECONDS.toNanos(1);
    long lastCount = 0;
    long lastTick = startNanos;
    for (int tick = 1; !stopping.get(); tick++) {
      long next = Math.min(startNanos + tick * second, end);
      long now;
      while ((now = System.nanoTime()) < next && !stopping.get()) {
        TimeUnit.NANOSECONDS.sleep(Math.min(next - now, TimeUnit.MILLISECONDS.toNanos(100)));
      }
      if (now >= end || stopping.get()) {
        return;
      }
      Histogram total = stats.drain();
      if (out.tty || tick % 5 == 0) {
        long count = stats.acquisitions.sum();
        double rate = (count - lastCount) / ((now - lastTick) / 1e9);
        lastCount = count;
        lastTick = now;
        out.progress(String.format(Locale.ROOT,
            "%6.1fs  acquisitions %d (%.0f/s)  p50 %.2f ms  p99 %.2f ms  failed attempts %d"
                + "  faults %d  held back %d  violations %d",
            (now - startNanos) / 1e9, count, rate, millis(total.getValueAtPercentile(50)),
            millis(total.getValueAtPercentile(99)), stats.failedAttempts(), stats.faults.get(),
            stats.heldBack.sum(), stats.occupancyViolations.size()));
      }
    }
  }

  private static void stopWorkers(List<Thread> threads) throws InterruptedException {
    long graceEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    for (Thread thread : threads) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(graceEnd - System.nanoTime())));
    }
    for (Thread thread : threads) {
      thread.interrupt(); // still retrying an acquisition
    }
    for (Thread thread : threads) {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    }
  }

  private void printSummary(Stats stats, int checkerViolations, List<Violation> violations) {
    Histogram latency = stats.total;
    int faults = stats.faults.get();
    PrintWriter table = out.stream;
    table.println();
    table.printf(Locale.ROOT, "Summary (%s, %d nodes, %d workers, %d resources, ttl %s)%n",
        format(duration), nodes, workers, resources, format(ttl));
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
      long recent = stats.heldBackRecent.sum();
      table.printf(Locale.ROOT, "Restart guard: %d failed attempt(s) after the restart found the"
          + " restarted node held back, from +%.1fs to +%.1fs: %d while its connection was not"
          + " yet back and probed, %d while it had been up for less than %.1fs; e.g. \"%s\".%n",
          heldBack, stats.firstHeldBack.get() / 1e9, stats.lastHeldBack.get() / 1e9,
          heldBack - recent, recent, stats.holdBack.toMillis() / 1e3,
          stats.heldBackDetail.get());
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

  /** Writes the timeline report of the torture module, filled with what the demo did. */
  private void writeReport(Stats stats, List<Violation> violations) throws IOException {
    Duration work = LONGEST_WORK.compareTo(ttl.dividedBy(2)) <= 0 ? LONGEST_WORK
        : ttl.dividedBy(2);
    // The demo's four fault steps spread over the middle half of the run.
    Duration interval = duration.dividedBy(6).compareTo(Duration.ofMillis(100)) < 0
        ? Duration.ofMillis(100) : duration.dividedBy(6);
    TortureOptions options = TortureOptions.builder()
        .nodes(nodes)
        .clients(workers)
        .resources(resources)
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
    failures.put("gave up after " + format(MAX_WAIT), stats.gaveUp.sum());
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
                + " on), %d resources, duration %s, ttl %s; faults: %s.", nodes, workers,
            resources, format(duration), format(ttl), nodes >= 3 ? "node 0 killed at 25%,"
                + " node 1 paused from 45% to 60%, node 0 restarted empty at 75%" : "none"))
            + "</p>");
    Files.writeString(report, html, StandardCharsets.UTF_8);
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("'", "&#39;");
  }

  private static void row(PrintWriter table, String name, String value) {
    table.printf(Locale.ROOT, "  %-22s %12s%n", name, value);
  }

  private static String ms(long micros) {
    return String.format(Locale.ROOT, "%.2f ms", millis(micros));
  }

  private static double millis(long micros) {
    return micros / 1_000.0;
  }

  private static String format(Duration d) {
    return DurationConverter.format(d);
  }

  private String timestamp() {
    return String.format(Locale.ROOT, "[%s +%.1fs]",
        LocalTime.now().truncatedTo(ChronoUnit.MILLIS), (System.nanoTime() - startNanos) / 1e9);
  }

  /** One scheduled fault: when (share of the duration), what, on which node. */
  private record Step(double share, String plan, String done, int node, Runnable action,
      Runnable after) {}

  /** Counters and records shared by the workers, the fault thread and the progress line. */
  private static final class Stats {
    final AtomicInteger[] occupancy;
    final LongAdder attempts = new LongAdder();
    final LongAdder acquisitions = new LongAdder();
    /** Attempts that a majority did not grant. */
    final LongAdder unavailable = new LongAdder();
    /** Attempts that failed otherwise (an exception other than LockUnavailableException). */
    final LongAdder errors = new LongAdder();
    /** Acquisitions given up after {@link #MAX_WAIT}. */
    final LongAdder gaveUp = new LongAdder();
    /** Failed attempts, begun after a restart, in which the guard held the node back. */
    final LongAdder heldBack = new LongAdder();
    /** First and last such attempt, in nanoseconds since the start; -1 before any. */
    final AtomicLong firstHeldBack = new AtomicLong(-1);
    final AtomicLong lastHeldBack = new AtomicLong(-1);
    /** Of those, the ones in which it answered probes but had not been up long enough. */
    final LongAdder heldBackRecent = new LongAdder();
    /** An example of what a held-back node's vote said; preferably an "up for" one. */
    final AtomicReference<String> heldBackDetail = new AtomicReference<>("");
    /** How long the restart guard holds a restarted node back: ttl plus drift margin. */
    volatile Duration holdBack = Duration.ZERO;
    /** When each node was restarted empty (System.nanoTime()), or 0. */
    final AtomicLongArray restartedAt;
    final LongAdder lost = new LongAdder();
    final List<Violation> occupancyViolations = new CopyOnWriteArrayList<>();
    final AtomicInteger faults = new AtomicInteger();
    final List<FaultRecord> faultRecords = Collections.synchronizedList(new ArrayList<>());
    final History history = new History();
    final AtomicBoolean errorReported = new AtomicBoolean();
    /** Acquire latency in microseconds, recorded by the workers. */
    final Recorder latency = new Recorder(3);
    /** Everything recorded so far; guarded by this. */
    final Histogram total = new Histogram(3);
    private Histogram interval;
    long elapsedNanos;

    Stats(int resources, int nodes) {
      occupancy = new AtomicInteger[resources];
      for (int i = 0; i < resources; i++) {
        occupancy[i] = new AtomicInteger();
      }
      restartedAt = new AtomicLongArray(nodes);
    }

    long failedAttempts() {
      return unavailable.sum() + errors.sum();
    }

    void fault(Fault fault, String phase, int node, String detail) {
      faultRecords.add(new FaultRecord(System.nanoTime(), Instant.now(), fault, phase,
          List.of(node), "", detail));
    }

    /** Moves what the workers recorded into {@link #total} and returns it. */
    synchronized Histogram drain() {
      interval = latency.getIntervalHistogram(interval);
      total.add(interval);
      return total;
    }
  }

  /** Standard output, with a {@code \r}-updated progress line on a terminal. */
  private static final class Output {
    final PrintWriter stream;
    final boolean tty;
    private int progressWidth;

    Output(PrintWriter stream, boolean tty) {
      this.stream = stream;
      this.tty = tty;
    }

    /** Prints a line of its own, clearing the progress line first. */
    synchronized void line(String text) {
      clearProgress();
      stream.println(text);
      stream.flush();
    }

    synchronized void progress(String text) {
      if (tty) {
        stream.print("\r" + text + " ".repeat(Math.max(0, progressWidth - text.length())));
        progressWidth = text.length();
      } else {
        stream.println(text);
      }
      stream.flush();
    }

    /** Leaves the last progress line on screen and moves to the next line. */
    synchronized void endProgress() {
      if (progressWidth > 0) {
        stream.println();
        progressWidth = 0;
      }
      stream.flush();
    }

    private void clearProgress() {
      if (progressWidth > 0) {
        stream.print("\r" + " ".repeat(progressWidth) + "\r");
        progressWidth = 0;
      }
    }
  }
}
