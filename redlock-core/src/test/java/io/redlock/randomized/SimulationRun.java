package io.redlock.randomized;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.SimulationAccess;
import io.redlock.fake.FakeTime;
import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One deterministic schedule: builds the nodes, the clients (each its own {@link Redlock} on
 * its own drifting clock) and the faults from a seed, runs them on one {@link FakeTime} (true
 * time) until every client finished its operations, and checks the {@link OverlapChecker}
 * property. Everything random comes from the seed, so a seed replays the same run.
 */
final class SimulationRun {
  private static final Duration STEP = Duration.ofMillis(50);
  private static final long HORIZON_NANOS = 60_000_000_000L;
  private static final Map<String, RedlockConfig> CONFIGS = new ConcurrentHashMap<>();
  private static final String MARKER = io.redlock.FreshMarker.key("");

  /** What one run found. */
  record Outcome(
      Schedule schedule,
      List<OverlapChecker.Violation> violations,
      List<TokenChecker.Violation> tokenViolations,
      List<Throwable> errors,
      boolean finished,
      int leases,
      int commits,
      int failedAcquisitions,
      List<String> trace) {
    boolean failed() {
      return !violations.isEmpty() || !tokenViolations.isEmpty() || !errors.isEmpty() || !finished;
    }

    String report() {
      StringBuilder text = new StringBuilder(schedule.describe());
      for (OverlapChecker.Violation violation : violations) {
        text.append("\n  VIOLATION: ").append(violation);
      }
      for (TokenChecker.Violation violation : tokenViolations) {
        text.append("\n  TOKEN VIOLATION: ").append(violation);
      }
      for (Throwable error : errors) {
        text.append("\n  ERROR: ").append(error);
      }
      if (!finished) {
        text.append("\n  NOT FINISHED within the horizon");
      }
      return text.toString();
    }
  }

  /**
   * With {@link SimulationMode#FENCED_COUNTERS_TRUSTED_ONCE_COUNTING}, how long after its
   * empty restart a node's counters are trusted: past the restart guard's window (1,000 ms
   * maxTtl plus 12 ms drift) with a margin for the node's clock and the next probe.
   */
  private static final long TRUSTED_AFTER_NANOS = 1_100_000_000L;

  private SimulationRun() {}

  static Outcome run(SimulationMode mode, long seed, boolean tracing) {
    Random root = new Random(seed);
    Schedule schedule = Schedule.draw(mode, seed, root);
    FakeTime truth = new FakeTime();
    long origin = truth.nanoTime();
    History history = new History(origin, tracing);
    Network network = schedule.network().build(new Random(root.nextLong()));

    List<SimNodeStore> nodes = new ArrayList<>();
    for (int i = 0; i < schedule.nodes().size(); i++) {
      Schedule.NodeSpec spec = schedule.nodes().get(i);
      SimNodeStore node =
          new SimNodeStore("sim://node" + i, truth, spec.rate(), spec.clockOffset());
      if (mode.declaredFresh()) {
        node.declareFresh(MARKER);
      }
      if (mode.aofAlways()) {
        node.reportAofAlways();
      }
      if (mode == SimulationMode.FENCED_WITHOUT_CONFIRMATION) {
        node.skipFenceConfirmations();
      }
      nodes.add(node);
    }
    RedlockConfig config = config(nodes.size(), mode.restartGuard, mode.fenced());

    if (mode == SimulationMode.FENCED_HISTORY_FAULTS) {
      // the last N - Q nodes hold every resource for someone else until just before the
      // scene's fault (see Schedule)
      long until = schedule.historyFaults().get(0).atNanos() - 100 * Schedule.MS;
      for (int i = nodes.size() / 2 + 1; i < nodes.size(); i++) {
        for (int r = 0; r < schedule.resources(); r++) {
          nodes.get(i).keys.put("r" + r, "someone-else", java.time.Duration.ofNanos(until));
        }
      }
    }
    List<List<String>> resourceChoices = new ArrayList<>();
    for (int r = 0; r < schedule.resources(); r++) {
      resourceChoices.add(List.of("r" + r));
    }
    if (schedule.resources() > 1) {
      resourceChoices.add(List.of("r1", "r0")); // one lease over several resources
    }

    network.immediate = true; // Redlock.over waits for the first probes
    List<ClientProcess> processes = new ArrayList<>();
    List<SimClient> clients = new ArrayList<>();
    for (int i = 0; i < schedule.clients().size(); i++) {
      Schedule.ClientSpec spec = schedule.clients().get(i);
      ClientProcess process = new ClientProcess();
      DriftingClock clock = new DriftingClock(truth, spec.rate(), spec.clockOffset(), process);
      List<NodeClient> connections = new ArrayList<>();
      for (SimNodeStore node : nodes) {
        connections.add(new SimConnection(node, truth, process, network));
      }
      Redlock redlock =
          SimulationAccess.over(config, connections, clock, new Random(root.nextLong()));
      processes.add(process);
      clients.add(
          new SimClient(
              i,
              redlock,
              clock,
              truth,
              new Random(root.nextLong()),
              spec,
              resourceChoices,
              history));
    }
    network.immediate = false;

    for (Schedule.Fault fault : schedule.faults()) {
      SimNodeStore node = nodes.get(fault.node());
      truth.schedule(
          () -> {
            history.trace(truth.nanoTime(), () -> "fault: " + node.name + " " + fault.kind());
            switch (fault.kind()) {
              case RESTART_EMPTY -> {
                node.restartEmpty();
                if (mode.initForcedAfterRestarts()) {
                  node.declareFresh(MARKER); // the operator's mistake: init --force while in use
                }
                if (mode == SimulationMode.FENCED_COUNTERS_TRUSTED_ONCE_COUNTING) {
                  // The rule off: once the guard counts the node for locks again (seen for its
                  // window, maxTtl plus drift, about 1,012 ms here), its empty counters are
                  // trusted too. A record that admits the current process, ahead of everything
                  // the clients saw (so no tripwire fires), is how the simulation makes the
                  // guard trust them; set after the window, it changes nothing for locks.
                  truth.schedule(
                      () -> {
                        history.trace(
                            truth.nanoTime(), () -> "fault: " + node.name + " counters trusted");
                        node.admitInPlace(MARKER);
                      },
                      TRUSTED_AFTER_NANOS);
                }
              }
              case CRASH_THEN_RECOVER_WITH_KEYS, CRASH_THEN_RECOVER_EMPTY -> {
                node.crash();
                boolean keep = fault.kind() == Schedule.FaultKind.CRASH_THEN_RECOVER_WITH_KEYS;
                truth.schedule(
                    () -> {
                      history.trace(
                          truth.nanoTime(),
                          () ->
                              "fault: "
                                  + node.name
                                  + " recovers"
                                  + (keep ? " with its keys" : " empty"));
                      node.recover(keep);
                    },
                    fault.downNanos());
              }
              default -> throw new IllegalStateException(fault.kind().toString());
            }
          },
          fault.atNanos());
    }
    for (Schedule.HistoryFault fault : schedule.historyFaults()) {
      SimNodeStore node = nodes.get(fault.node());
      SimNodeStore source =
          fault.kind() == Schedule.FaultKind.History.OTHER_NODES_DATA
              ? nodes.get(fault.source())
              : node;
      java.util.concurrent.atomic.AtomicReference<java.util.Map<String, Object>> copy =
          new java.util.concurrent.atomic.AtomicReference<>();
      if (fault.kind() != Schedule.FaultKind.History.EVICT_COUNTERS) {
        truth.schedule(
            () -> {
              history.trace(truth.nanoTime(), () -> "copy of " + source.name + "'s data");
              copy.set(source.keys.snapshot());
            },
            fault.atNanos() - fault.copyAgeNanos());
      }
      truth.schedule(
          () -> {
            history.trace(truth.nanoTime(), () -> "fault: " + node.name + " " + fault.kind());
            if (fault.kind() == Schedule.FaultKind.History.EVICT_COUNTERS) {
              node.evictCounters();
              return;
            }
            node.crash();
            truth.schedule(
                () -> {
                  history.trace(
                      truth.nanoTime(), () -> "fault: " + node.name + " recovers on the copy");
                  node.recoverWith(copy.get());
                },
                20 * Schedule.MS);
          },
          fault.atNanos());
    }
    for (Schedule.Pause pause : schedule.pauses()) {
      ClientProcess process = processes.get(pause.client());
      truth.schedule(
          () -> {
            history.trace(truth.nanoTime(), () -> "client" + pause.client() + " paused");
            process.pause();
          },
          pause.atNanos());
      truth.schedule(
          () -> {
            history.trace(truth.nanoTime(), () -> "client" + pause.client() + " resumed");
            process.resume();
          },
          pause.atNanos() + pause.forNanos());
    }

    clients.forEach(SimClient::start);
    boolean finished = false;
    try {
      while (truth.nanoTime() - origin < HORIZON_NANOS) {
        if (allDone(clients)) {
          finished = true;
          break;
        }
        truth.advance(STEP);
      }
    } catch (RuntimeException | AssertionError e) {
      history.errors.add(e);
    }
    return new Outcome(
        schedule,
        OverlapChecker.check(history.leases),
        mode.fenced() ? TokenChecker.check(history.leases) : List.of(),
        history.errors,
        finished,
        history.leases.size(),
        history.commits(),
        history.failedAcquisitions,
        history.traceLines());
  }

  private static boolean allDone(List<SimClient> clients) {
    for (SimClient client : clients) {
      if (!client.done()) {
        return false;
      }
    }
    return true;
  }

  static RedlockConfig config(int nodes, boolean restartGuard, boolean fencing) {
    return CONFIGS.computeIfAbsent(
        nodes + "/" + restartGuard + "/" + fencing,
        key -> {
          List<String> uris = new ArrayList<>();
          for (int i = 0; i < nodes; i++) {
            uris.add("sim://node" + i);
          }
          return RedlockConfig.builder()
              .nodes(uris)
              .ttl(Duration.ofMillis(Schedule.TTL_MILLIS))
              .maxTtl(Duration.ofMillis(Schedule.TTL_MILLIS))
              .nodeTimeout(Duration.ofMillis(50))
              .driftFactor(0.01)
              .retryCount(3)
              .retryDelay(Duration.ofMillis(100))
              .retryJitter(Duration.ofMillis(50))
              .maxWait(Duration.ofSeconds(2))
              .restartGuard(restartGuard)
              .fencing(fencing)
              .build();
        });
  }
}
