package io.redlock.cli;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
 * clients compete for a few resources while nodes are killed, paused, resumed and restarted,
 * and checks in process that no resource ever has two holders at once.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
        "Starts local redis-server nodes and lets workers of two Redlock clients compete for a"
            + " few resources while nodes are killed, paused, resumed and restarted. Every"
            + " critical section checks that it is alone; any overlap is a safety violation.",
        "",
        "Faults (with 3 or more nodes): at 25%% of the duration node 0 is killed, at 45%% node 1"
            + " is paused, at 60%% resumed, at 75%% node 0 is restarted empty."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:no violation",
        "1:a safety violation was seen",
        "2:bad arguments",
        "3:the demo could not run"})
final class DemoCommand implements Callable<Integer> {

  private static final String RESOURCE_PREFIX = "redlock-demo:resource-";
  private static final Duration RETRY_DELAY = Duration.ofMillis(20);
  private static final Duration RETRY_JITTER = Duration.ofMillis(10);
  private static final Duration MAX_WAIT = Duration.ofSeconds(10);
  private static final int RETRY_COUNT = 1_000;
  private static final int MAX_NODES = 9;

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
      description = "Worker threads, split over two Redlock clients (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(names = "--resources", defaultValue = "3", paramLabel = "<count>",
      description = "Resources the workers compete for (default: ${DEFAULT-VALUE}).")
  int resources;

  @Option(names = "--ttl", defaultValue = "2s", converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Lease time to live, at least 100ms (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  private final Output out = new Output(System.out, System.console() != null);
  private final AtomicBoolean stopping = new AtomicBoolean();
  private long startNanos;

  @Override
  public Integer call() throws InterruptedException {
    checkArguments();
    out.line("Starting " + nodes + " local redis-server node(s)...");
    RedisServers servers = RedisServers.start(nodes);
    Thread hook = new Thread(() -> {
      stopping.set(true);
      System.err.println("\nredlock demo: interrupted; stopping the redis-server nodes");
      servers.close();
    }, "redlock-demo-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    Stats stats;
    try {
      printNodes(servers);
      stats = run(servers);
    } finally {
      servers.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException alreadyShuttingDown) {
        // the hook is running or has run
      }
    }
    out.line("Stopped the workers, both Redlock clients and all " + nodes
        + " redis-server node(s).");
    printSummary(stats);
    return stats.violations.sum() > 0 ? Main.EXIT_VIOLATION : 0;
  }

  private void checkArguments() {
    if (nodes < 1 || nodes > MAX_NODES) {
      throw invalid("--nodes", nodes + " is not accepted: it must be from 1 to " + MAX_NODES);
    }
    if (workers < 1 || workers > 1_000) {
      throw invalid("--workers", workers + " is not accepted: it must be from 1 to 1000");
    }
    if (resources < 1) {
      throw invalid("--resources", resources + " is not accepted: it must be at least 1");
    }
    if (ttl.compareTo(Duration.ofMillis(100)) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
      throw invalid("--ttl", format(ttl) + " is not accepted: it must be from 100ms to 1 day");
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
    RedlockConfig config = RedlockConfig.builder()
        .nodes(servers.uris())
        .ttl(ttl)
        .retryCount(RETRY_COUNT)
        .retryDelay(RETRY_DELAY)
        .retryJitter(RETRY_JITTER)
        .maxWait(MAX_WAIT)
        .build();
    Stats stats = new Stats(resources);
    try (Redlock first = Redlock.create(config);
        Redlock second = Redlock.create(config)) {
      out.line(String.format(Locale.ROOT,
          "Running %s: %d workers on 2 Redlock clients (quorum %d of %d), %d resource(s),"
              + " ttl %s", format(duration), workers, first.quorum(), nodes, resources,
          format(ttl)));
      startNanos = System.nanoTime();
      ScheduledExecutorService faults = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "redlock-demo-faults");
        thread.setDaemon(true);
        return thread;
      });
      List<Thread> threads = new ArrayList<>();
      try {
        scheduleFaults(faults, servers, stats);
        for (int w = 0; w < workers; w++) {
          Redlock redlock = w % 2 == 0 ? first : second;
          Thread thread = new Thread(() -> work(redlock, stats), "redlock-demo-worker-" + w);
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
      out.endProgress();
      stats.drain();
    }
    return stats;
  }

  private void scheduleFaults(ScheduledExecutorService faults, RedisServers servers,
      Stats stats) {
    if (nodes < 3) {
      out.line("No faults: they need at least 3 nodes.");
      return;
    }
    List<Fault> schedule = List.of(
        new Fault(0.25, "kill node 0", "killed node 0", 0, () -> servers.kill(0)),
        new Fault(0.45, "pause node 1", "paused node 1", 1, () -> servers.pause(1)),
        new Fault(0.60, "resume node 1", "resumed node 1", 1, () -> servers.resume(1)),
        new Fault(0.75, "restart node 0 (empty)", "restarted node 0 (empty)", 0,
            () -> servers.restart(0)));
    StringBuilder plan = new StringBuilder("Fault schedule:");
    for (Fault fault : schedule) {
      long atNanos = (long) (duration.toNanos() * fault.share());
      plan.append(String.format(Locale.ROOT, " %s at %.1fs;", fault.plan(), atNanos / 1e9));
      faults.schedule(() -> {
        try {
          fault.action().run();
          stats.faults.incrementAndGet();
          out.line(timestamp() + " fault: " + fault.done() + " " + servers.uri(fault.node()));
        } catch (RuntimeException e) {
          if (!stopping.get()) {
            out.line(timestamp() + " fault failed: " + fault.plan() + ": " + e.getMessage());
          }
        }
      }, atNanos, TimeUnit.NANOSECONDS);
    }
    plan.setLength(plan.length() - 1);
    out.line(plan.toString());
  }

  /** Runs on one worker thread until the demo stops. */
  private void work(Redlock redlock, Stats stats) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    while (!stopping.get()) {
      int resource = random.nextInt(resources);
      long start = System.nanoTime();
      Lease lease;
      try {
        lease = redlock.acquire(RESOURCE_PREFIX + resource, ttl);
      } catch (LockUnavailableException e) {
        stats.failures.increment();
        continue;
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (stopping.get()) {
          return;
        }
        stats.failures.increment();
        reportOnce(stats, "acquire failed, counted as a failed attempt", e);
        continue;
      }
      stats.latency.recordValue(Math.max(0, (System.nanoTime() - start) / 1_000));
      stats.acquisitions.increment();
      try (lease) {
        AtomicInteger occupancy = stats.occupancy[resource];
        int holders = occupancy.incrementAndGet();
        try {
          if (holders != 1) {
            stats.violations.increment();
            out.line(timestamp() + " VIOLATION: " + holders + " holders of "
                + RESOURCE_PREFIX + resource + " at once");
          }
          lease.ensureValid();
          Thread.sleep(1 + random.nextInt(4));
        } finally {
          occupancy.decrementAndGet();
        }
      } catch (LeaseLostException e) {
        stats.lost.increment();
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (stopping.get()) {
          return;
        }
        reportOnce(stats, "lease failed", e);
      }
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
            "%6.1fs  acquisitions %d (%.0f/s)  p50 %.2f ms  failures %d  faults %d"
                + "  violations %d",
            (now - startNanos) / 1e9, count, rate, millis(total.getValueAtPercentile(50)),
            stats.failures.sum(), stats.faults.get(), stats.violations.sum()));
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

  private void printSummary(Stats stats) {
    Histogram latency = stats.total;
    long violations = stats.violations.sum();
    int faults = stats.faults.get();
    PrintStream table = out.stream;
    table.println();
    table.printf(Locale.ROOT, "Summary (%s, %d nodes, %d workers, %d resources, ttl %s)%n",
        format(duration), nodes, workers, resources, format(ttl));
    row(table, "acquisitions", Long.toString(stats.acquisitions.sum()));
    row(table, "failed attempts", Long.toString(stats.failures.sum()));
    row(table, "acquire latency p50", ms(latency.getValueAtPercentile(50)));
    row(table, "acquire latency p99", ms(latency.getValueAtPercentile(99)));
    row(table, "acquire latency max", ms(latency.getMaxValue()));
    row(table, "faults injected", Integer.toString(faults));
    row(table, "leases lost", Long.toString(stats.lost.sum()));
    row(table, "violations", Long.toString(violations));
    table.println();
    if (violations > 0) {
      table.println("SAFETY VIOLATED: " + violations
          + " time(s) two workers held the same resource at once.");
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

  private static void row(PrintStream table, String name, String value) {
    table.printf(Locale.ROOT, "  %-22s %12s%n", name, value);
  }

  private static String ms(long micros) {
    return String.format(Locale.ROOT, "%.2f ms", millis(micros));
  }

  private static double millis(long micros) {
    return micros / 1_000.0;
  }

  private static String format(Duration d) {
    if (d.toMillis() % 1_000 != 0) {
      return d.toMillis() + "ms";
    }
    long seconds = d.toSeconds();
    return seconds % 60 == 0 && seconds > 0 ? seconds / 60 + "m" : seconds + "s";
  }

  private String timestamp() {
    return String.format(Locale.ROOT, "[%s +%.1fs]",
        LocalTime.now().truncatedTo(ChronoUnit.MILLIS), (System.nanoTime() - startNanos) / 1e9);
  }

  /** One scheduled fault: when (share of the duration), what, on which node. */
  private record Fault(double share, String plan, String done, int node, Runnable action) {}

  /** Counters shared by the workers, the fault thread and the progress line. */
  private static final class Stats {
    final AtomicInteger[] occupancy;
    final LongAdder acquisitions = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder lost = new LongAdder();
    final LongAdder violations = new LongAdder();
    final AtomicInteger faults = new AtomicInteger();
    final AtomicBoolean errorReported = new AtomicBoolean();
    /** Acquire latency in microseconds, recorded by the workers. */
    final Recorder latency = new Recorder(3);
    /** Everything recorded so far; guarded by this. */
    final Histogram total = new Histogram(3);
    private Histogram interval;

    Stats(int resources) {
      occupancy = new AtomicInteger[resources];
      for (int i = 0; i < resources; i++) {
        occupancy[i] = new AtomicInteger();
      }
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
    final PrintStream stream;
    final boolean tty;
    private int progressWidth;

    Output(PrintStream stream, boolean tty) {
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
