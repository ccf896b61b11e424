package io.redlock.cli;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The timed part of {@code redlock demo}, on nodes already started: two Redlock clients, the
 * {@link DemoWorker} threads split over them, the {@link DemoFaults} schedule and the
 * {@link DemoProgress} line, for the duration or until the stop flag is set (Ctrl-C); then it
 * stops the workers and the fault thread and closes the clients.
 *
 * <p>Thread-safety: {@link #run} is called once, from the demo's main thread, which it blocks
 * until everything it started has stopped; the stop flag may be set from any thread.
 */
final class DemoRun {

  private final Duration duration;
  private final int nodes;
  private final int workers;
  private final int resources;
  private final Duration ttl;
  private final DemoOutput out;
  private final AtomicBoolean stopping;
  private final List<Long> startedPids;

  /**
   * @param stopping set to stop the run early; set by the run itself once it is over
   * @param startedPids where the fault schedule adds the process id of a restarted node
   */
  DemoRun(DemoSettings settings, DemoOutput out, AtomicBoolean stopping,
      List<Long> startedPids) {
    this.duration = settings.duration();
    this.nodes = settings.nodes();
    this.workers = settings.workers();
    this.resources = settings.resources();
    this.ttl = settings.ttl();
    this.out = out;
    this.stopping = stopping;
    this.startedPids = startedPids;
  }

  /**
   * Runs the workers on two Redlock clients, the fault schedule and the progress line for the
   * duration (or until Ctrl-C), then stops them all; returns what they recorded.
   */
  DemoStats run(RedisServers servers) throws InterruptedException {
    // One attempt per acquire call: the workers retry themselves, so that every failed
    // attempt, with what each node answered, is seen (and the restart guard with it).
    // maxTtl = ttl: a node restarted empty is held back for one ttl (plus drift), which the
    // demo shows within its run.
    RedlockConfig config = RedlockConfig.builder()
        .nodes(servers.uris())
        .ttl(ttl)
        .maxTtl(ttl)
        .retryCount(0)
        .build();
    // The servers were just started and hold nothing: declare them fresh, as an operator
    // does for a new cluster with 'redlock init', so that they count at once.
    io.redlock.InitReport init = Redlock.init(config, false);
    if (!init.complete()) {
      throw new IllegalStateException("could not declare the demo's servers fresh: "
          + init.nodes());
    }
    DemoStats stats;
    try (Redlock first = Redlock.create(config);
        Redlock second = Redlock.create(config)) {
      out.line(String.format(Locale.ROOT,
          "Running %s: %d workers on 2 Redlock clients (quorum %d of %d, restart guard %s),"
              + " %d resource(s), ttl %s", format(duration), workers, first.quorum(), nodes,
          config.restartGuard() ? "on" : "off", resources, format(ttl)));
      long startNanos = System.nanoTime();
      out.startClock(startNanos);
      stats = new DemoStats(resources, nodes, startNanos);
      ScheduledExecutorService faults = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "redlock-demo-faults");
        thread.setDaemon(true);
        return thread;
      });
      List<Thread> threads = new ArrayList<>();
      try {
        new DemoFaults(servers, config, duration, ttl, stats, out, stopping, startedPids)
            .schedule(faults);
        for (int w = 0; w < workers; w++) {
          Redlock redlock = w % 2 == 0 ? first : second;
          String name = "worker-" + w;
          Thread thread = new Thread(
              new DemoWorker(name, redlock, resources, ttl, stats, out, stopping),
              "redlock-demo-" + name);
          thread.setDaemon(true);
          threads.add(thread);
          thread.start();
        }
        new DemoProgress(stats, out, duration, stopping).run();
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

  /** Gives the workers a second to finish what they hold, then interrupts the rest. */
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

  private static String format(Duration d) {
    return DurationConverter.format(d);
  }
}
