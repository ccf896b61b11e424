package io.redlock.cli;

import io.redlock.NodeOutcome;
import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Violation;
import io.redlock.torture.Fault;
import io.redlock.torture.FaultPlan;
import io.redlock.torture.FaultRecord;
import io.redlock.torture.TortureListener;
import io.redlock.torture.TortureOptions;
import io.redlock.torture.TortureResult;
import io.redlock.torture.TortureRun;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What {@code redlock demo} shows of its torture run while it runs and at the end: the nodes
 * and the fault script, each fault as it happens, a progress line (every second on a
 * terminal, updated in place with {@code \r}; every 5 seconds otherwise), an in-process check
 * that no resource has two holders at once, what the restart guard held back, and the
 * summary table. Event lines carry the wall-clock time and the seconds since the run started.
 *
 * <p>Thread-safe: the run's clients, nemesis and progress thread call it at once; counters
 * are concurrent types and every print is synchronized, so that lines and the progress line
 * do not interleave. {@link #progress} keeps its own tick state: the run calls it from one
 * thread only.
 */
final class DemoConsole implements TortureListener {

  private final PrintWriter stream;
  private final boolean tty;
  private final TortureOptions options;
  private final List<FaultPlan.Step> script;
  private final Duration holdBack;
  private final List<Long> startedPids;

  /** The run's servers, once started; for the shutdown hook. */
  final AtomicReference<RedisServers> servers = new AtomicReference<>();

  private volatile long startNanos;
  private int progressWidth;
  private int ticks;
  private long lastCount;
  private long lastTick;

  private final Recorder latency = new Recorder(3);
  private final Histogram total = new Histogram(3);
  private Histogram interval;
  private final LongAdder failedAttempts = new LongAdder();
  private final AtomicInteger faults = new AtomicInteger();

  /** Failed attempts, begun after a restart, in which the guard held the node back. */
  private final LongAdder heldBack = new LongAdder();

  /** First and last such attempt, in nanoseconds since the start; -1 before any. */
  private final AtomicLong firstHeldBack = new AtomicLong(-1);

  private final AtomicLong lastHeldBack = new AtomicLong(-1);

  /** An example of what a held-back node's vote said: the latest. */
  private final AtomicReference<String> heldBackDetail = new AtomicReference<>("");

  /** When each node was restarted empty (System.nanoTime()), or 0. */
  private final AtomicLongArray restartedAt;

  /** How many clients hold each resource now, and what each client holds. */
  private final Map<String, AtomicInteger> holders = new ConcurrentHashMap<>();

  private final Map<String, String> heldBy = new ConcurrentHashMap<>();

  /** Until when (System.nanoTime()) each client's lease is valid, as the client computed it. */
  private final Map<String, Long> validUntil = new ConcurrentHashMap<>();

  /** With fencing, how often a holder overlapped a paused worker whose lease had ended. */
  private final java.util.concurrent.atomic.LongAdder expiredOverlaps =
      new java.util.concurrent.atomic.LongAdder();

  private final List<Violation> occupancyViolations = new CopyOnWriteArrayList<>();

  /**
   * @param holdBack how long the restart guard holds a restarted node back
   * @param startedPids where the process id of every node started, restarts included, goes
   */
  DemoConsole(
      PrintWriter stream,
      boolean tty,
      TortureOptions options,
      List<FaultPlan.Step> script,
      Duration holdBack,
      List<Long> startedPids) {
    this.stream = stream;
    this.tty = tty;
    this.options = options;
    this.script = script;
    this.holdBack = holdBack;
    this.startedPids = startedPids;
    this.restartedAt = new AtomicLongArray(options.nodes());
  }

  @Override
  public void started(RedisServers started, long start) {
    servers.set(started);
    startNanos = start;
    lastTick = start;
    for (int i = 0; i < started.size(); i++) {
      startedPids.add(started.pid(i));
    }
    line(
        "Started "
            + started.size()
            + " redis-server node(s) ("
            + RedisBinary.version()
                .map(v -> RedisBinary.serverName().orElse("version") + " " + v + ", ")
                .orElse("")
            + RedisBinary.locate()
            + "):");
    for (int i = 0; i < started.size(); i++) {
      line(
          String.format(
              Locale.ROOT, "  node %d  %s  pid %d", i, started.address(i), started.pid(i)));
    }
    line(
        String.format(
            Locale.ROOT,
            "Running %s: %d workers on %d Redlock clients (quorum %d of %d, restart guard %s),"
                + " %d resource(s), ttl %s",
            format(options.duration()),
            options.clients(),
            options.redlocks(),
            TortureRun.quorum(options),
            options.nodes(),
            options.restartGuard() ? "on" : "off",
            options.resources(),
            format(options.ttl())));
    if (script.isEmpty()) {
      line("No faults: they need at least 3 nodes.");
      return;
    }
    StringBuilder plan = new StringBuilder("Fault schedule:");
    for (FaultPlan.Step step : script) {
      plan.append(
          String.format(
              Locale.ROOT,
              " %s at %.1fs;",
              planned(step),
              options.duration().toNanos() * step.at() / 1e9));
    }
    plan.setLength(plan.length() - 1);
    line(plan.toString());
  }

  private static String planned(FaultPlan.Step step) {
    return switch (step.action()) {
      case KILL -> "kill node " + step.node();
      case PAUSE -> "pause node " + step.node();
      case RESUME -> "resume node " + step.node();
      case RESTART_EMPTY -> "restart node " + step.node() + " (empty)";
      case PAUSE_CLIENT -> "pause worker " + step.node() + " between check and write";
    };
  }

  @Override
  public void fault(FaultRecord fault) {
    if (fault.fault() == Fault.CLIENT_PAUSE) {
      faults.incrementAndGet();
      line(
          timestamp()
              + " fault: "
              + fault.client()
              + " will pause between its check and its write, for longer than its lease");
      return;
    }
    int node = fault.nodes().get(0);
    String done =
        switch (fault.fault()) {
          case KILL -> fault.phase().equals("start") ? "killed" : null; // its end is the restart
          case PAUSE -> fault.phase().equals("start") ? "paused" : "resumed";
          case RESTART_EMPTY -> "restarted";
          default -> fault.fault().toString();
        };
    if (done == null) {
      return;
    }
    RedisServers nodes = servers.get();
    boolean restarted = fault.fault() == Fault.RESTART_EMPTY;
    if (restarted) {
      restartedAt.set(node, fault.nanos());
      startedPids.add(nodes.pid(node));
    }
    faults.incrementAndGet();
    line(
        timestamp()
            + " fault: "
            + done
            + " node "
            + node
            + (restarted ? " (empty) " : " ")
            + nodes.address(node)
            + (nodes.isRunning(node) ? " pid " + nodes.pid(node) : ""));
    if (restarted && options.restartGuard()) {
      line(
          timestamp()
              + String.format(
                  Locale.ROOT,
                  " restart guard: node %d is held back"
                      + " until it has been seen for %.1fs (it may have forgotten locks)",
                  node,
                  holdBack.toMillis() / 1e3));
    }
  }

  @Override
  public void acquired(String client, Duration waited) {
    latency.recordValue(Math.max(0, waited.toNanos() / 1_000));
  }

  /**
   * Counts a failed attempt that a restart guard held a restarted node back in: only for
   * attempts begun after that node's restart (while a node is down, the guard holds it back
   * too, until it is probed again; that is not counted here).
   */
  @Override
  public void failed(String client, List<NodeOutcome> outcomes, long attemptStart) {
    failedAttempts.increment();
    boolean seen = false;
    for (NodeOutcome outcome : outcomes) {
      long restarted =
          outcome.index() < restartedAt.length() ? restartedAt.get(outcome.index()) : 0;
      if (restarted != 0
          && attemptStart - restarted >= 0
          && outcome.vote() == NodeOutcome.Vote.HELD_BACK) {
        seen = true;
        heldBackDetail.set("node " + outcome.index() + ": " + outcome.detail());
      }
    }
    if (seen) {
      long now = System.nanoTime() - startNanos;
      heldBack.increment();
      firstHeldBack.accumulateAndGet(now, (a, b) -> a < 0 ? b : Math.min(a, b));
      lastHeldBack.accumulateAndGet(now, Math::max);
    }
  }

  /** The in-process check: a resource that two clients hold at once is a violation. */
  @Override
  public void holding(String client, String resource) {
    holding(client, resource, Long.MAX_VALUE);
  }

  /**
   * The in-process check: a resource that two clients hold at once is a violation, except,
   * with fencing, when every other holder's lease had already ended: a worker paused past its
   * validity still believes it holds the resource, which is the overlap fencing is for (the
   * fenced store refuses its write). Two valid leases at once are a violation in every mode.
   */
  @Override
  public void holding(String client, String resource, long validUntilNanos) {
    if (resource == null) {
      validUntil.remove(client);
      String released = heldBy.remove(client);
      if (released != null) {
        holders.get(released).decrementAndGet();
      }
      return;
    }
    validUntil.put(client, validUntilNanos);
    heldBy.put(client, resource);
    int now = holders.computeIfAbsent(resource, r -> new AtomicInteger()).incrementAndGet();
    if (now != 1) {
      String when = timestamp();
      long at = System.nanoTime();
      boolean anotherValid = false;
      for (Map.Entry<String, String> other : heldBy.entrySet()) {
        if (!other.getKey().equals(client) && other.getValue().equals(resource)) {
          Long until = validUntil.get(other.getKey());
          anotherValid |= until == null || until - at > 0;
        }
      }
      if (options.fencing() && !anotherValid) {
        // Expected with fencing: a paused worker still believes it holds the resource.
        expiredOverlaps.increment();
        if (overlapsShown.add(resource + " " + client)) {
          line(
              when
                  + " overlap: "
                  + client
                  + " holds "
                  + resource
                  + " while a paused worker, whose lease has ended, still believes it does;"
                  + " the fenced store will refuse the paused worker's write");
        }
        return;
      }
      occupancyViolations.add(
          new Violation(
              Violation.Kind.OVERLAPPING_WORK,
              resource,
              "in-process check: "
                  + now
                  + " workers held it at once ("
                  + client
                  + " at "
                  + when
                  + (options.fencing() ? ", with another lease still valid" : "")
                  + ")"));
      line(when + " VIOLATION: " + now + " holders of " + resource + " at once");
    }
  }

  /** With fencing, the overlaps already shown, one line for each resource and new holder. */
  private final java.util.Set<String> overlapsShown = ConcurrentHashMap.newKeySet();

  @Override
  public void progress(TortureRun.Progress progress) {
    long now = startNanos + progress.elapsed().toNanos();
    if (progress.elapsed().compareTo(options.duration()) >= 0) {
      return;
    }
    Histogram latencies = drain();
    if (tty || ++ticks % 5 == 0) {
      long count = progress.acquisitions();
      double rate = (count - lastCount) / ((now - lastTick) / 1e9);
      lastCount = count;
      lastTick = now;
      progressLine(
          String.format(
              Locale.ROOT,
              "%6.1fs  acquisitions %d (%.0f/s)  p50 %.2f ms  p99 %.2f ms  failed attempts %d"
                  + "  faults %d  held back %d  violations %d",
              progress.elapsed().toNanos() / 1e9,
              count,
              rate,
              millis(latencies.getValueAtPercentile(50)),
              millis(latencies.getValueAtPercentile(99)),
              failedAttempts.sum(),
              faults.get(),
              heldBack.sum(),
              occupancyViolations.size()));
    }
  }

  /** What the in-process check found. */
  List<Violation> occupancyViolations() {
    return List.copyOf(occupancyViolations);
  }

  /**
   * Prints the summary table: the counters and latencies of the run, what the restart guard
   * held back, and the verdict with up to 10 violations.
   *
   * @param violations the in-process check's and then the history check's
   */
  void summary(TortureResult result, List<Violation> violations) {
    Histogram latencies = drain();
    int nodes = options.nodes();
    PrintWriter table = stream;
    synchronized (this) {
      table.println();
      table.printf(
          Locale.ROOT,
          "Summary (%s, %d nodes, %d workers, %d resources, ttl %s)%n",
          format(options.duration()),
          nodes,
          options.clients(),
          options.resources(),
          format(options.ttl()));
      row("acquisitions", Long.toString(result.acquisitions()));
      row("attempts", Long.toString(result.attempts()));
      row(
          "failed attempts",
          Long.toString(result.failures().values().stream().mapToLong(Long::longValue).sum()));
      row("acquire latency p50", ms(latencies.getValueAtPercentile(50)));
      row("acquire latency p99", ms(latencies.getValueAtPercentile(99)));
      row("acquire latency max", ms(latencies.getMaxValue()));
      row("faults injected", Integer.toString(faults.get()));
      row("held back (guard)", Long.toString(heldBack.sum()));
      row("leases lost", Long.toString(result.lostBeforeWrite()));
      if (result.fenced() != null) {
        row("fenced writes", Long.toString(result.fenced().committed()));
        row("stale writes refused", Long.toString(result.fenced().refused()));
        row("overtaken writes", Long.toString(result.fenced().overtaken()));
        row("lost updates", Long.toString(result.fenced().lostUpdates()));
      }
      row("violations", Integer.toString(violations.size()));
      if (result.fenced() != null) {
        table.printf(
            Locale.ROOT,
            "  (fencing: paused workers, their leases ended, overlapped their successors %d"
                + " time(s) in the in-process check; the store refused %d stale read(s) or"
                + " write(s), so no overlap reached it)%n",
            expiredOverlaps.sum(),
            result.fenced().refused());
      }
      table.printf(
          Locale.ROOT,
          "  (violations: %d from the in-process check, %d from the"
              + " history check of %d leases and %d critical sections; latency includes waiting"
              + " for a busy resource)%n",
          occupancyViolations.size(),
          result.violations().size(),
          result.history().leases().size(),
          result.history().work().size());
      table.println();
      if (heldBack.sum() > 0) {
        table.printf(
            Locale.ROOT,
            "Restart guard: %d failed attempt(s) after the restart found"
                + " the restarted node held back (until reconnected, probed and seen for %.1fs), from"
                + " +%.1fs to +%.1fs; e.g. \"%s\".%n",
            heldBack.sum(),
            holdBack.toMillis() / 1e3,
            firstHeldBack.get() / 1e9,
            lastHeldBack.get() / 1e9,
            heldBackDetail.get());
      } else if (restartedAt.get(0) != 0) {
        table.println(
            "Restart guard: no failed attempt after the restart happened to show the"
                + " restarted node held back (only failed attempts report each node's answer).");
      }
      if (!violations.isEmpty()) {
        table.println("SAFETY VIOLATED: " + violations.size() + " violation(s):");
        for (Violation violation : violations.subList(0, Math.min(10, violations.size()))) {
          table.println("  " + violation);
        }
      } else if (faults.get() == 0) {
        table.println("No violations (no faults were injected).");
      } else if (nodes >= 5) {
        table.println("No violations: the quorum survived a minority failure.");
      } else {
        table.println(
            "No violations: mutual exclusion held, though with "
                + nodes
                + " nodes two failed nodes left no quorum for a while.");
      }
      table.flush();
    }
  }

  private void row(String name, String value) {
    stream.printf(Locale.ROOT, "  %-22s %12s%n", name, value);
  }

  /** Moves what the clients recorded into the total and returns it. */
  private synchronized Histogram drain() {
    interval = latency.getIntervalHistogram(interval);
    total.add(interval);
    return total;
  }

  /** The wall-clock time and the seconds since the run started: {@code [12:00:01.250 +2.0s]}. */
  private String timestamp() {
    return String.format(
        Locale.ROOT,
        "[%s +%.1fs]",
        LocalTime.now().truncatedTo(ChronoUnit.MILLIS),
        (System.nanoTime() - startNanos) / 1e9);
  }

  /** Prints a line of its own, clearing the progress line first. */
  synchronized void line(String text) {
    if (progressWidth > 0) {
      stream.print("\r" + " ".repeat(progressWidth) + "\r");
      progressWidth = 0;
    }
    stream.println(text);
    stream.flush();
  }

  private synchronized void progressLine(String text) {
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

  private static String ms(long micros) {
    return String.format(Locale.ROOT, "%.2f ms", millis(micros));
  }

  /** A latency the histograms recorded, in microseconds, in milliseconds. */
  private static double millis(long micros) {
    return micros / 1_000.0;
  }

  private static String format(Duration d) {
    return DurationConverter.format(d);
  }
}
