package io.redlock.cli;

import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.torture.Fault;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The fault schedule of {@code redlock demo}: with 3 or more nodes, node 0 is killed at 25% of
 * the duration, node 1 paused at 45% and resumed at 60%, and node 0 restarted empty at 75%,
 * after which it says how long the restart guard holds node 0 back. Each fault is printed and
 * recorded in the {@link DemoStats}.
 *
 * <p>Thread-safety: {@link #schedule} is called once, from the demo's main thread; the faults
 * then run one at a time on the given single-threaded executor, and only touch thread-safe
 * state.
 */
final class DemoFaults {

  private final RedisServers servers;
  private final RedlockConfig config;
  private final Duration duration;
  private final Duration ttl;
  private final DemoStats stats;
  private final DemoOutput out;
  private final AtomicBoolean stopping;
  private final List<Long> startedPids;

  /**
   * @param startedPids where the process id of a restarted node is added, after those of the
   *     nodes first started
   */
  DemoFaults(RedisServers servers, RedlockConfig config, Duration duration, Duration ttl,
      DemoStats stats, DemoOutput out, AtomicBoolean stopping, List<Long> startedPids) {
    this.servers = servers;
    this.config = config;
    this.duration = duration;
    this.ttl = ttl;
    this.stats = stats;
    this.out = out;
    this.stopping = stopping;
    this.startedPids = startedPids;
  }

  /** Prints the fault schedule and schedules it on {@code faults}; no faults below 3 nodes. */
  void schedule(ScheduledExecutorService faults) {
    if (servers.size() < 3) {
      out.line("No faults: they need at least 3 nodes.");
      return;
    }
    stats.holdBack = ttl.plus(config.driftFor(ttl));
    StringBuilder plan = new StringBuilder("Fault schedule:");
    for (Step step : steps()) {
      long atNanos = (long) (duration.toNanos() * step.share());
      plan.append(String.format(Locale.ROOT, " %s at %.1fs;", step.plan(), atNanos / 1e9));
      faults.schedule(() -> inject(step), atNanos, TimeUnit.NANOSECONDS);
    }
    plan.setLength(plan.length() - 1);
    out.line(plan.toString());
  }

  private List<Step> steps() {
    Runnable nothing = () -> { };
    return List.of(
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
        }, this::announceRestartGuard));
  }

  /** Runs one step on the fault thread and prints what it did. */
  private void inject(Step step) {
    try {
      step.action().run();
      stats.faults.incrementAndGet();
      out.line(out.timestamp() + " fault: " + step.done() + " " + servers.uri(step.node())
          + (servers.isRunning(step.node()) ? " pid " + servers.pid(step.node()) : ""));
      step.after().run();
    } catch (RuntimeException e) {
      // Once the demo is stopping (Ctrl-C closes the nodes), a failing step is expected.
      if (!stopping.get()) {
        out.line(out.timestamp() + " fault failed: " + step.plan() + ": " + e.getMessage());
      }
    }
  }

  private void announceRestartGuard() {
    if (config.restartGuard()) {
      out.line(out.timestamp() + String.format(Locale.ROOT, " restart guard: node 0 is held"
          + " back until it has been up for %.1fs (it may have forgotten locks)",
          stats.holdBack.toMillis() / 1e3));
    }
  }

  /** One scheduled fault: when (share of the duration), what, on which node. */
  private record Step(double share, String plan, String done, int node, Runnable action,
      Runnable after) {}
}
