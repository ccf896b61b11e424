package io.redlock.torture;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.FaultLog;
import io.redlock.testkit.History;
import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.SafetyChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A Jepsen-style run against real Redis: N redis-server processes, each client reaching them
 * through its own fault proxies, clients that lock and work, a nemesis that injects faults,
 * and {@link SafetyChecker} deciding on the recorded history.
 *
 * <p>Clients are threads of this JVM, each with its own {@link Redlock} (its own connections,
 * timer and restart guard), as separate processes would have. All times are read from
 * {@link System#nanoTime()}.
 */
public final class TortureRun {

  /** How a run is doing, about once a second. */
  public record Progress(Duration elapsed, long attempts, long acquisitions, int faults) {}

  private TortureRun() {}

  private static RedlockConfig config(TortureOptions options, List<String> nodes) {
    return RedlockConfig.builder()
        .nodes(nodes)
        .ttl(options.ttl())
        .restartGuard(options.restartGuard())
        .retryCount(3)
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(10))
        .connectTimeout(Duration.ofSeconds(2))
        .build();
  }

  /**
   * Waits until a lock can be taken at all: the servers were just started, so the restart
   * guard holds them back for a ttl. The run's clock starts after this.
   */
  private static void awaitUsable(Redlock redlock, TortureOptions options)
      throws InterruptedException {
    long giveUp = System.nanoTime() + options.ttl().multipliedBy(2).plusSeconds(10).toNanos();
    while (System.nanoTime() - giveUp < 0) {
      var lease = redlock.tryAcquire("torture:warm-up:" + options.seed(), options.ttl());
      if (lease.isPresent()) {
        lease.get().release();
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("no lock could be taken on the fresh servers within "
        + Duration.ofNanos(options.ttl().multipliedBy(2).plusSeconds(10).toNanos()));
  }

  /**
   * Runs the torture and returns what happened; every server and proxy it started is stopped
   * when it returns, also when it throws.
   */
  public static TortureResult run(TortureOptions options, Consumer<Progress> progress)
      throws InterruptedException {
    History history = new History();
    TortureCounters counters = new TortureCounters();
    try (RedisServers servers = RedisServers.builder().count(options.nodes())
            .appendOnly(options.persistence()).start();
        ProxiedFleet proxies = ProxiedFleet.of(servers, new FaultLog())) {
      List<String> resources = new ArrayList<>();
      for (int i = 0; i < options.resources(); i++) {
        resources.add("torture:" + options.seed() + ":" + i);
      }
      List<Redlock> redlocks = new ArrayList<>();
      List<TortureClient> clients = new ArrayList<>();
      try {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < options.clients(); i++) {
          String name = "client-" + i;
          names.add(name);
          redlocks.add(Redlock.create(config(options, proxies.urisFor(name))));
        }
        awaitUsable(redlocks.get(0), options);
        long start = System.nanoTime();
        long end = start + options.duration().toNanos();
        for (int i = 0; i < options.clients(); i++) {
          clients.add(new TortureClient(names.get(i), redlocks.get(i), resources, options,
              history, counters, options.seed() * 1_000 + i, end));
        }
        Nemesis nemesis = new Nemesis(servers, proxies, clients, options, end);
        List<Thread> threads = new ArrayList<>();
        for (TortureClient client : clients) {
          threads.add(new Thread(client, "torture-" + client.name()));
        }
        Thread nemesisThread = new Thread(nemesis, "torture-nemesis");
        threads.forEach(Thread::start);
        nemesisThread.start();
        try {
          while (threads.stream().anyMatch(Thread::isAlive) || nemesisThread.isAlive()) {
            Thread.sleep(1_000);
            progress.accept(new Progress(Duration.ofNanos(System.nanoTime() - start),
                counters.attempts(), counters.acquired(), nemesis.records().size()));
          }
        } finally {
          nemesisThread.interrupt();
          threads.forEach(Thread::interrupt);
          for (Thread thread : threads) {
            thread.join();
          }
          nemesisThread.join();
        }
        return new TortureResult(options, Duration.ofNanos(System.nanoTime() - start),
            counters.attempts(), counters.acquired(), counters.lostBeforeWrite(),
            counters.failures(), nemesis.records(), history, SafetyChecker.check(history));
      } finally {
        redlocks.forEach(Redlock::close);
      }
    }
  }
}
