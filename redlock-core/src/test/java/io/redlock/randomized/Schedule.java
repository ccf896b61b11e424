package io.redlock.randomized;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The parameters of one simulated run, all drawn from its seed: how many clients and nodes,
 * their clock rates, the workload, the network, and the faults with their true-time instants.
 */
record Schedule(
    SimulationMode mode,
    long seed,
    int resources,
    List<ClientSpec> clients,
    List<NodeSpec> nodes,
    NetworkSpec network,
    List<Fault> faults,
    List<Pause> pauses,
    List<HistoryFault> historyFaults) {

  /** The lease ttl every client asks for. */
  static final long TTL_MILLIS = 1_000;

  /** Drift bound per clock in {@link SimulationMode#SAFE}: half the declared drift factor. */
  static final double RHO_BOUND = 0.005;

  static final long MS = 1_000_000L;

  /** The rate of the fast clocks of {@link SimulationMode#fastClocks}: 5% fast. */
  static final double FAST_CLOCK_RATE = 1.05;

  /**
   * When the workload starts in {@link SimulationMode#fastClocks}: after each client's second
   * probe of every node (a second after it started), so that the guard has seen two readings.
   */
  static final long FAST_CLOCKS_START_NANOS = 1_200 * MS;

  /** A client: clock rate and origin, operations, and work and think times (its own clock). */
  record ClientSpec(
      double rate,
      long clockOffset,
      int operations,
      long startDelayNanos,
      long workMinNanos,
      long workMaxNanos,
      long thinkMaxNanos) {}

  /** A node: clock rate and wall-clock origin. */
  record NodeSpec(double rate, long clockOffset) {}

  record NetworkSpec(
      long baseNanos, long jitterNanos, double slowChance, long slowMaxNanos, double lossChance) {
    Network build(Random random) {
      return new Network(
          random, baseNanos, jitterNanos, slowChance, slowMaxNanos, lossChance, 200 * MS);
    }
  }

  enum FaultKind {
    CRASH_THEN_RECOVER_WITH_KEYS,
    CRASH_THEN_RECOVER_EMPTY,
    RESTART_EMPTY;

    /** Faults of a node's history (mode {@code FENCED_HISTORY_FAULTS}), drawn apart. */
    enum History {
      /** Crashes, and comes back on a copy of its own data taken earlier (AOF always). */
      RESTORE_OLDER_COPY,
      /** Crashes, and comes back on a copy of another node's data (AOF always). */
      OTHER_NODES_DATA,
      /** Evicts its fencing counters in place (an allkeys policy for a moment). */
      EVICT_COUNTERS
    }
  }

  /** A node fault at true time {@code atNanos}; a crash lasts {@code downNanos}. */
  record Fault(int node, FaultKind kind, long atNanos, long downNanos) {}

  /**
   * A fault of a node's history at true time {@code atNanos}: for a copy, taken {@code
   * copyAgeNanos} earlier (of node {@code source}).
   */
  record HistoryFault(
      int node, FaultKind.History kind, long atNanos, long copyAgeNanos, int source) {}

  /** A client stopped (a GC pause) from true time {@code atNanos} for {@code forNanos}. */
  record Pause(int client, long atNanos, long forNanos) {}

  static Schedule draw(SimulationMode mode, long seed, Random random) {
    int clientCount = mode.allFaults() ? 2 + random.nextInt(3) : 2 + random.nextInt(2);
    int nodeCount = 3 + random.nextInt(3);
    int resources = mode.allFaults() ? 1 + random.nextInt(2) : 1;
    long ttl = TTL_MILLIS * MS;

    List<NodeSpec> nodes = new ArrayList<>();
    for (int i = 0; i < nodeCount; i++) {
      double rho =
          mode == SimulationMode.DRIFT_BEYOND_BOUND ? 0 : uniform(random, -RHO_BOUND, RHO_BOUND);
      nodes.add(
          new NodeSpec(1 + rho, 1_600_000_000_000_000_000L + random.nextInt(1 << 30) * 1_000_000L));
    }
    if (mode.fastClocks()) {
      List<Integer> order = shuffled(nodeCount, random);
      for (int i = 0; i < (nodeCount - 1) / 2; i++) {
        NodeSpec slow = nodes.get(order.get(i));
        nodes.set(order.get(i), new NodeSpec(FAST_CLOCK_RATE, slow.clockOffset()));
      }
    }

    List<ClientSpec> clients = new ArrayList<>();
    for (int i = 0; i < clientCount; i++) {
      double rho =
          switch (mode) {
            case DRIFT_BEYOND_BOUND -> -0.2;
            default -> uniform(random, -RHO_BOUND, RHO_BOUND);
          };
      boolean safe = mode.allFaults();
      clients.add(
          new ClientSpec(
              1 + rho,
              random.nextLong(),
              // with counters trusted only a window after the restarts, more operations reach
              // past it (the draw is the same, so other modes are unchanged)
              (mode.fastClocks()
                          || mode == SimulationMode.FENCED_COUNTERS_TRUSTED_ONCE_COUNTING
                          || mode == SimulationMode.FENCED_HISTORY_FAULTS
                      ? 4
                      : 1)
                  + random.nextInt(3),
              (mode.fastClocks() ? FAST_CLOCKS_START_NANOS : 0)
                  + (long) (random.nextDouble() * 300 * MS),
              safe ? 0 : mode.fastClocks() ? ttl * 9 / 10 : ttl / 2,
              safe ? ttl * 11 / 10 : ttl,
              safe ? 200 * MS : 50 * MS));
    }

    NetworkSpec network;
    List<Fault> faults = new ArrayList<>();
    List<Pause> pauses = new ArrayList<>();
    List<HistoryFault> historyFaults = new ArrayList<>();
    switch (mode) {
      case SAFE, FENCED -> {
        network =
            new NetworkSpec(
                (long) uniform(random, 0.1 * MS, 2 * MS),
                (long) (random.nextDouble() * 10 * MS),
                random.nextBoolean() ? 0 : 0.02,
                100 * MS,
                random.nextBoolean() ? 0 : random.nextDouble() * 0.03);
        int faultCount = random.nextInt(4);
        FaultKind[] kinds = FaultKind.values();
        for (int i = 0; i < faultCount; i++) {
          faults.add(
              new Fault(
                  random.nextInt(nodeCount),
                  kinds[random.nextInt(kinds.length)],
                  (long) (random.nextDouble() * 3_000 * MS),
                  (long) uniform(random, 10 * MS, 1_500 * MS)));
        }
        int pauseCount = random.nextInt(3);
        for (int i = 0; i < pauseCount; i++) {
          pauses.add(
              new Pause(
                  random.nextInt(clientCount),
                  (long) (random.nextDouble() * 3_000 * MS),
                  (long) uniform(random, 10 * MS, 1_500 * MS)));
        }
      }
      case DRIFT_BEYOND_BOUND, FENCED_WITHOUT_CONFIRMATION ->
          network = new NetworkSpec(MS / 2, 2 * MS, 0, 0, 0);
      case FAST_CLOCKS_GUARD_OFF, FAST_CLOCKS_GUARD_ON -> {
        network = new NetworkSpec(MS / 2, 2 * MS, 0, 0, 0);
        // While a node with a good clock is down, leases are held on just a majority that
        // includes the fast nodes; it comes back, with its keys, lacking those leases.
        int down = -1;
        for (int i = 0; i < nodeCount; i++) {
          if (nodes.get(i).rate() != FAST_CLOCK_RATE) {
            down = i;
            break;
          }
        }
        faults.add(
            new Fault(
                down,
                FaultKind.CRASH_THEN_RECOVER_WITH_KEYS,
                (long) uniform(random, FAST_CLOCKS_START_NANOS, 2 * FAST_CLOCKS_START_NANOS),
                (long) uniform(random, 300 * MS, 1_500 * MS)));
      }
      case RESTARTS_GUARD_OFF,
          RESTARTS_GUARD_ON,
          FRESH_MARKER_RESTARTS,
          INIT_FORCED_ON_A_USED_CLUSTER,
          AOF_RESTARTS,
          AOF_LOST_DIRECTORY,
          FENCED_INIT_FORCED,
          FENCED_AOF_RESTARTS,
          FENCED_COUNTERS_TRUSTED_ONCE_COUNTING -> {
        network = new NetworkSpec(MS / 2, 2 * MS, 0, 0, 0);
        // A majority of nodes restart empty at once, while leases are likely held.
        long at = (long) uniform(random, 300 * MS, 1_500 * MS);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
          order.add(i);
        }
        java.util.Collections.shuffle(order, random);
        FaultKind kind =
            mode == SimulationMode.AOF_RESTARTS || mode == SimulationMode.FENCED_AOF_RESTARTS
                ? FaultKind.CRASH_THEN_RECOVER_WITH_KEYS
                : FaultKind.RESTART_EMPTY;
        for (int i = 0; i < nodeCount / 2 + 1; i++) {
          faults.add(
              new Fault(order.get(i), kind, at, kind == FaultKind.RESTART_EMPTY ? 0 : 20 * MS));
        }
      }
      case FENCED_HISTORY_FAULTS -> {
        network = new NetworkSpec(MS / 2, 2 * MS, 0, 0, 0);
        // The scene of the report: the last N - Q nodes hold the resources for someone else
        // until just before the fault (SimulationRun writes those keys), so node 0 and nodes
        // 1..Q-1 grant and confirm every token; then node 0 comes back on a copy of its data
        // taken well before (more than a probe interval), and nodes 1..Q-1 go down for 2 s:
        // the next grants come from node 0 and the nodes that never confirmed a token.
        int quorum = nodeCount / 2 + 1;
        long restoreAt = (long) uniform(random, 1_700 * MS, 2_500 * MS);
        historyFaults.add(
            new HistoryFault(
                0, FaultKind.History.RESTORE_OLDER_COPY, restoreAt, restoreAt - 200 * MS, 0));
        for (int i = 1; i < quorum; i++) {
          faults.add(new Fault(i, FaultKind.CRASH_THEN_RECOVER_WITH_KEYS, restoreAt, 2_000 * MS));
        }
        // Then up to two more events of a node's history: its data restored from a copy taken
        // 1.6 to 2.5 s earlier, replaced by another node's, or its counters evicted.
        int count = random.nextInt(3);
        FaultKind.History[] kinds = FaultKind.History.values();
        for (int i = 0; i < count; i++) {
          // node 0 or one that was never down: a node already down when restored would have
          // been lost long after its copy was taken, which is another case (see safety.md)
          int pick = random.nextInt(nodeCount - quorum + 1);
          int node = pick == 0 ? 0 : quorum - 1 + pick;
          historyFaults.add(
              new HistoryFault(
                  node,
                  kinds[random.nextInt(kinds.length)],
                  (long) uniform(random, 2_600 * MS, 4_000 * MS),
                  // older than the watchers' last probe (at most 1.5 s before they lost the
                  // process): a newer copy is the one case history cannot tell (safety.md)
                  (long) uniform(random, 1_600 * MS, 2_500 * MS),
                  (node + 1 + random.nextInt(nodeCount - 1)) % nodeCount));
        }
      }
      default -> throw new IllegalStateException(mode.toString());
    }
    return new Schedule(
        mode,
        seed,
        resources,
        List.copyOf(clients),
        List.copyOf(nodes),
        network,
        List.copyOf(faults),
        List.copyOf(pauses),
        List.copyOf(historyFaults));
  }

  private static List<Integer> shuffled(int count, Random random) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      order.add(i);
    }
    java.util.Collections.shuffle(order, random);
    return order;
  }

  private static double uniform(Random random, double from, double to) {
    return from + random.nextDouble() * (to - from);
  }

  /** A short, readable account of the parameters, for failure messages. */
  String describe() {
    StringBuilder text = new StringBuilder();
    text.append("mode=")
        .append(mode)
        .append(" seed=")
        .append(seed)
        .append(" clients=")
        .append(clients.size())
        .append(" nodes=")
        .append(nodes.size())
        .append(" resources=")
        .append(resources)
        .append(" ttl=")
        .append(TTL_MILLIS)
        .append("ms")
        .append("\n  network: ")
        .append(network);
    for (int i = 0; i < clients.size(); i++) {
      ClientSpec c = clients.get(i);
      text.append(
          String.format(
              "%n  client%d: rate=%.5f ops=%d start=%.1fms work=%.0f..%.0fms",
              i,
              c.rate(),
              c.operations(),
              c.startDelayNanos() / 1e6,
              c.workMinNanos() / 1e6,
              c.workMaxNanos() / 1e6));
    }
    for (int i = 0; i < nodes.size(); i++) {
      text.append(String.format("%n  node%d: rate=%.5f", i, nodes.get(i).rate()));
    }
    for (Fault f : faults) {
      text.append(
          String.format(
              "%n  fault: node%d %s at %.1fms down %.1fms",
              f.node(), f.kind(), f.atNanos() / 1e6, f.downNanos() / 1e6));
    }
    for (Pause p : pauses) {
      text.append(
          String.format(
              "%n  pause: client%d at %.1fms for %.1fms",
              p.client(), p.atNanos() / 1e6, p.forNanos() / 1e6));
    }
    return text.toString();
  }
}
