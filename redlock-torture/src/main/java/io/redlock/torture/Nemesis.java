package io.redlock.torture;

import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Injects faults as its {@link FaultPlan} says, and records each with its time (also telling
 * the run's {@link TortureListener}). A random plan injects one fault at a time, at random
 * intervals drawn from the run's seed: single-node faults never overlap, so at any moment at
 * most one node is faulty, except during {@link Fault#MAJORITY_RESTART}, which exists to break
 * that rule. A scripted plan runs its steps at their times, whatever they overlap.
 *
 * <p>Runs on its own thread until interrupted or past its end; {@link #records()} is
 * thread-safe.
 */
final class Nemesis implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Nemesis.class);

  private final RedisServers servers;
  private final ProxiedFleet proxies;
  private final List<? extends ClientHandle> clients;
  private final TortureOptions options;
  private final Random random;
  private final long endNanos;
  private final List<Fault> faults;
  private final List<FaultRecord> records = new CopyOnWriteArrayList<>();
  private final FaultPlan plan;
  private final TortureListener listener;

  /** Nodes a scripted KILL left down; only the nemesis thread uses it. */
  private final Set<Integer> killed = new HashSet<>();

  Nemesis(
      RedisServers servers,
      ProxiedFleet proxies,
      List<? extends ClientHandle> clients,
      TortureOptions options,
      long endNanos,
      FaultPlan plan,
      TortureListener listener) {
    this.plan = plan;
    this.listener = listener;
    this.servers = servers;
    this.proxies = proxies;
    this.clients = clients;
    this.options = options;
    this.random = new Random(options.seed() * 31 + 7);
    this.endNanos = endNanos;
    this.faults = new ArrayList<>(options.faults());
    this.faults.sort(null); // enum order: the seed alone decides what happens
  }

  List<FaultRecord> records() {
    return List.copyOf(records);
  }

  @Override
  public void run() {
    try {
      if (plan instanceof FaultPlan.Script script) {
        runScript(script.steps());
        return;
      }
      while (!faults.isEmpty()) {
        long interval = options.faultInterval().toMillis();
        sleepUntilOrEnd(interval / 2 + random.nextInt((int) interval + 1));
        if (pastEnd()) {
          return;
        }
        inject(faults.get(random.nextInt(faults.size())));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      proxies.healAll();
    }
  }

  private void runScript(List<FaultPlan.Step> steps) throws InterruptedException {
    long duration = options.duration().toNanos();
    long start = endNanos - duration;
    for (FaultPlan.Step step : steps) {
      long at = start + (long) (duration * step.at());
      sleepUntilOrEnd(Math.max(0, (at - System.nanoTime()) / 1_000_000));
      if (pastEnd()) {
        return;
      }
      try {
        step(step.action(), step.node());
      } catch (RuntimeException e) {
        log.warn("fault step {} on node {} failed: {}", step.action(), step.node(), e.toString());
      }
    }
  }

  private void step(FaultPlan.Action action, int node) {
    switch (action) {
      case KILL -> {
        servers.kill(node);
        killed.add(node);
        record(Fault.KILL, "start", List.of(node), "", "");
      }
      case PAUSE -> {
        servers.pause(node);
        record(Fault.PAUSE, "start", List.of(node), "", "");
      }
      case RESUME -> {
        servers.resume(node);
        record(Fault.PAUSE, "end", List.of(node), "", "");
      }
      case RESTART_EMPTY -> {
        servers.restart(node);
        if (killed.remove(node)) {
          record(Fault.KILL, "end", List.of(node), "", "");
        }
        record(Fault.RESTART_EMPTY, "at", List.of(node), "", "");
      }
      case PAUSE_CLIENT -> {
        ClientHandle client = clients.get(node % clients.size());
        client.requestPause();
        record(Fault.CLIENT_PAUSE, "at", List.of(), client.name(), "");
      }
    }
  }

  private void inject(Fault fault) throws InterruptedException {
    int node = random.nextInt(servers.size());
    long ttl = options.ttl().toMillis();
    switch (fault) {
      case KILL -> {
        servers.kill(node);
        record(fault, "start", List.of(node), "", "");
        sleepUntilOrEnd(ttl / 2 + random.nextInt((int) ttl + 1));
        servers.restart(node);
        record(fault, "end", List.of(node), "", "");
      }
      case RESTART_EMPTY -> {
        servers.restart(node);
        record(fault, "at", List.of(node), "", "");
      }
      case PAUSE -> {
        servers.pause(node);
        record(fault, "start", List.of(node), "", "");
        sleepUntilOrEnd(stallMillis());
        servers.resume(node);
        record(fault, "end", List.of(node), "", "");
      }
      case SLOW_COMMAND -> {
        long sleep = ttl / 4 + random.nextInt((int) ttl / 4 + 1);
        servers.debugSleep(node, Duration.ofMillis(sleep));
        record(fault, "start", List.of(node), "", "DEBUG SLEEP " + sleep + " ms");
        sleepUntilOrEnd(sleep);
        record(fault, "end", List.of(node), "", "");
      }
      case PARTITION -> {
        ClientHandle client = clients.get(random.nextInt(clients.size()));
        int[] cut = randomNodes(1 + random.nextInt(servers.size()));
        proxies.partition(client.name(), cut);
        List<Integer> cutNodes = java.util.Arrays.stream(cut).boxed().toList();
        record(fault, "start", cutNodes, client.name(), "");
        sleepUntilOrEnd(ttl / 2 + random.nextInt((int) ttl + 1));
        proxies.heal(client.name());
        record(fault, "end", cutNodes, client.name(), "");
      }
      case LATENCY -> {
        Duration base = Duration.ofMillis(10 + random.nextInt(60));
        proxies.latency(node, base, base.dividedBy(2));
        record(
            fault,
            "start",
            List.of(node),
            "",
            base.toMillis() + " ms ± " + base.dividedBy(2).toMillis() + " ms");
        sleepUntilOrEnd(ttl / 2 + random.nextInt((int) ttl + 1));
        proxies.healNode(node);
        record(fault, "end", List.of(node), "", "");
      }
      case BLACKHOLE -> {
        proxies.blackhole(node);
        record(fault, "start", List.of(node), "", "");
        sleepUntilOrEnd(stallMillis());
        proxies.healNode(node);
        record(fault, "end", List.of(node), "", "");
      }
      case CLIENT_PAUSE -> {
        ClientHandle client = clients.get(random.nextInt(clients.size()));
        client.requestPause();
        record(fault, "at", List.of(), client.name(), "");
      }
      case MAJORITY_RESTART -> majorityRestart();
      case RESTORE_BACKUP -> {
        servers.command(node, "SAVE"); // an RDB file beside the AOF, if AOF is on
        java.nio.file.Path backup = servers.copyData(node);
        record(fault, "start", List.of(node), "", "backup copied");
        sleepUntilOrEnd(ttl / 2 + random.nextInt((int) ttl + 1));
        servers.restartFrom(node, backup);
        record(fault, "end", List.of(node), "", "restarted on the backup");
      }
      case EVICTION -> {
        long evicted = evict(node);
        record(fault, "at", List.of(node), "", evicted + " keys evicted");
      }
    }
  }

  /** The filler values {@link #evict} writes: 20 KB each, at most this many. */
  private static final int MOST_FILLERS = 2_000;

  /**
   * Drives node {@code node} into eviction, as an operator's emergency {@code maxmemory} and
   * {@code allkeys-random} would, and sets it back; returns how many keys it evicted.
   */
  private long evict(int node) {
    long before = field(servers.command(node, "INFO", "stats"), "evicted_keys");
    long used = field(servers.command(node, "INFO", "memory"), "used_memory");
    servers.command(node, "CONFIG", "SET", "maxmemory-policy", "allkeys-random");
    servers.command(node, "CONFIG", "SET", "maxmemory", Long.toString(used + 200_000));
    String filler = "x".repeat(20_000);
    int written = 0;
    long evicted = 0;
    try {
      // Past the first eviction, as many writes again: enough for the random policy to reach
      // lock keys and counters, not only fillers.
      int stopAt = MOST_FILLERS;
      boolean evicting = false;
      while (written < stopAt) {
        servers.command(node, "SET", "torture-filler:" + written++, filler);
        evicted = field(servers.command(node, "INFO", "stats"), "evicted_keys") - before;
        if (evicted > 0 && !evicting) {
          evicting = true;
          stopAt = Math.min(MOST_FILLERS, 2 * written);
        }
      }
    } finally {
      servers.command(node, "CONFIG", "SET", "maxmemory", "0");
      servers.command(node, "CONFIG", "SET", "maxmemory-policy", "noeviction");
      for (int i = 0; i < written; i++) {
        servers.command(node, "DEL", "torture-filler:" + i);
      }
    }
    return evicted;
  }

  private static long field(Object info, String name) {
    for (String line : String.valueOf(info).split("\\r?\\n")) {
      if (line.startsWith(name + ":")) {
        return Long.parseLong(line.substring(name.length() + 1).trim());
      }
    }
    throw new IllegalStateException("INFO has no " + name);
  }

  /**
   * The shortest stall ({@link Fault#PAUSE}, {@link Fault#BLACKHOLE}): 5 s, past the
   * transport's 1 s after which a silent node is set aside and the restart guard's 5 s after
   * which an unconfirmed node stops counting, so that a stall goes through both and the node
   * comes back through the guard; and long enough for a busy client's backlog on the node to
   * reach its bound.
   */
  static final java.time.Duration STALL_MIN = java.time.Duration.ofSeconds(5);

  /** How much longer than {@link #STALL_MIN} a stall may last, at random: up to 10 s. */
  static final java.time.Duration STALL_SPREAD = java.time.Duration.ofSeconds(10);

  /**
   * A stall's length: {@link #STALL_MIN} plus up to {@link #STALL_SPREAD}, but at most a
   * tenth of the run, so that a short run (as in CI) still sees several kinds of fault.
   */
  private long stallMillis() {
    long stall = STALL_MIN.toMillis() + random.nextInt((int) STALL_SPREAD.toMillis() + 1);
    return Math.min(stall, options.duration().toMillis() / 10);
  }

  /** Waits (briefly) for some client to hold a lease, then restarts a majority empty. */
  private void majorityRestart() throws InterruptedException {
    long giveUp = System.nanoTime() + options.ttl().toNanos();
    while (clients.stream().allMatch(c -> c.holding() == null) && System.nanoTime() < giveUp) {
      Thread.sleep(1);
    }
    int majority = TortureRun.quorum(options);
    int[] chosen = randomNodes(majority);
    for (int node : chosen) {
      servers.restart(node);
    }
    record(Fault.MAJORITY_RESTART, "at", java.util.Arrays.stream(chosen).boxed().toList(), "", "");
  }

  private int[] randomNodes(int count) {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      all.add(i);
    }
    java.util.Collections.shuffle(all, random);
    return all.subList(0, count).stream().sorted().mapToInt(Integer::intValue).toArray();
  }

  private void record(
      Fault fault, String phase, List<Integer> nodes, String client, String detail) {
    FaultRecord record =
        new FaultRecord(System.nanoTime(), Instant.now(), fault, phase, nodes, client, detail);
    records.add(record);
    listener.fault(record);
    log.info("fault {} {} {}", fault, phase, record.target());
  }

  private boolean pastEnd() {
    return System.nanoTime() - endNanos >= 0;
  }

  /** Sleeps {@code millis}, but a fault in progress still ends (restart, resume, heal). */
  private void sleepUntilOrEnd(long millis) throws InterruptedException {
    long left = Math.min(millis, Math.max(0, (endNanos - System.nanoTime()) / 1_000_000));
    Thread.sleep(Math.max(left, 0));
  }
}
