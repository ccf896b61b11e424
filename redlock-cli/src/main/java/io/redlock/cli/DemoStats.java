package io.redlock.cli;

import io.redlock.NodeOutcome;
import io.redlock.testkit.History;
import io.redlock.testkit.Violation;
import io.redlock.torture.Fault;
import io.redlock.torture.FaultRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Counters and records of one {@code redlock demo} run: attempts and their outcomes, the acquire
 * latency (an HdrHistogram, in microseconds), what the restart guard held back, the injected
 * faults, the in-process violations and the {@link History} of every lease and critical section.
 *
 * <p>Thread-safe: the workers, the fault thread and the progress loop update and read it at
 * once; every field is a concurrent type, except {@link #total}, which is guarded by this, and
 * {@link #elapsedNanos}, which is written once the workers have stopped.
 */
final class DemoStats {
  /** When the run started ({@link System#nanoTime()}). */
  final long startNanos;
  /** How many workers are in each resource's critical section right now. */
  final AtomicInteger[] occupancy;
  final LongAdder attempts = new LongAdder();
  final LongAdder acquisitions = new LongAdder();
  /** Attempts that a majority did not grant. */
  final LongAdder unavailable = new LongAdder();
  /** Attempts that failed otherwise (an exception other than LockUnavailableException). */
  final LongAdder errors = new LongAdder();
  /** Acquisitions given up after {@link DemoWorker#MAX_WAIT}. */
  final LongAdder gaveUp = new LongAdder();
  /** Failed attempts, begun after a restart, in which the guard held the node back. */
  final LongAdder heldBack = new LongAdder();
  /** First and last such attempt, in nanoseconds since the start; -1 before any. */
  final AtomicLong firstHeldBack = new AtomicLong(-1);
  final AtomicLong lastHeldBack = new AtomicLong(-1);
  /** An example of what a held-back node's vote said: the latest. */
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

  DemoStats(int resources, int nodes, long startNanos) {
    this.startNanos = startNanos;
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

  /**
   * Counts a failed attempt that a restart guard held a restarted node back in: only for
   * attempts begun after that node's restart (while a node is down, the guard holds it back
   * too, until it is probed again; that is not counted here).
   */
  void noteHeldBack(List<NodeOutcome> outcomes, long attemptStart) {
    boolean seen = false;
    for (NodeOutcome outcome : outcomes) {
      long restarted = outcome.index() < restartedAt.length()
          ? restartedAt.get(outcome.index()) : 0;
      if (restarted != 0 && attemptStart - restarted >= 0
          && outcome.vote() == NodeOutcome.Vote.HELD_BACK) {
        seen = true;
        String detail = "node " + outcome.index() + ": " + outcome.detail();
        heldBackDetail.accumulateAndGet(detail, (old, now) -> now);
      }
    }
    if (seen) {
      long now = System.nanoTime() - startNanos;
      heldBack.increment();
      firstHeldBack.accumulateAndGet(now, (a, b) -> a < 0 ? b : Math.min(a, b));
      lastHeldBack.accumulateAndGet(now, Math::max);
    }
  }

  /** Moves what the workers recorded into {@link #total} and returns it. */
  synchronized Histogram drain() {
    interval = latency.getIntervalHistogram(interval);
    total.add(interval);
    return total;
  }

  /** A latency the histograms recorded, in microseconds, in milliseconds. */
  static double millis(long micros) {
    return micros / 1_000.0;
  }
}
