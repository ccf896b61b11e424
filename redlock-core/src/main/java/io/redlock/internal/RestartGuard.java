package io.redlock.internal;

import io.redlock.RedlockConfigException;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node's votes out of the quorum while it may have forgotten locks (DESIGN §3): the
 * article's first addendum, done by the client, and the start-up checks of the configuration.
 *
 * <p>A Redis process that restarted without persistence has lost every key; one whose wall
 * clock jumped forward has expired keys early. Either may grant a lock another client still
 * holds. So a node counts only once its current process has been up for the hold-back time
 * (the longest ttl in use plus its drift margin): by then every lease it may have forgotten
 * has ended. The guard reads {@code run_id} and uptime ({@code INFO server}) when a node is
 * first reached, after every lost connection (before which the node does not count), and
 * once a second; the same probe compares the node's {@code TIME} with the monotonic clock
 * and treats a forward jump larger than the drift margin like a restart.
 *
 * <p>The checks: two nodes with the same {@code run_id} are one server reached twice, and a
 * node with {@code role:slave} is a replica; both are refused at start, and a node found so
 * later is excluded for good.
 *
 * <p>Note on concurrency: {@link #counts(int)} is on the hot path and reads two atomic arrays
 * without locking. Probe results arrive on transport threads and change the per-node state
 * under this object's monitor; a lost connection marks the node unknown at once, from the
 * transport's event, so no request on a new connection can be counted before a probe.
 */
public final class RestartGuard {
  private static final Logger log = LoggerFactory.getLogger(RestartGuard.class);

  /** How the vote detail of a node held back begins. */
  public static final String HELD_BACK = "held back by the restart guard: ";

  /** How often every node is probed. */
  public static final long PROBE_INTERVAL_NANOS = 1_000_000_000L;

  private static final int UNKNOWN = 0;
  private static final int KNOWN = 1;
  private static final int EXCLUDED = 2;

  private final List<NodeClient> nodes;
  private final TimeSource time;
  private final boolean holdBackRestarts;
  private final LongSupplier holdBackNanos;
  private final LongSupplier driftNanos;
  private final double driftFactor;
  private final AtomicIntegerArray standing;
  private final AtomicLongArray startedAt;
  private final String[] runIds;
  private final long[] lastServerNanos;
  private final long[] lastLocalNanos;
  private final long[] lastRoundTrip;
  private final boolean[] probing;
  private final AtomicIntegerArray epochs;
  private final boolean[] heldBackLogged;
  private final boolean[] probedOnce;
  private final CompletableFuture<Void> firstProbes = new CompletableFuture<>();
  private int firstProbesLeft;
  private volatile boolean closed;
  private TimeSource.Cancellable ticker;
  private volatile Events events = Events.NONE;

  /**
   * @param holdBackRestarts whether restarted nodes are held back (the guard proper); the
   *     start-up checks run either way
   * @param holdBackNanos the current hold-back time: the longest ttl in use plus its drift
   * @param driftNanos the drift margin of the longest lease: a jump within it is harmless
   * @param driftFactor the rate two clocks may drift apart by, over the time between probes
   */
  public RestartGuard(List<NodeClient> nodes, TimeSource time, boolean holdBackRestarts,
      LongSupplier holdBackNanos, LongSupplier driftNanos, double driftFactor) {
    this.nodes = nodes;
    this.time = time;
    this.holdBackRestarts = holdBackRestarts;
    this.holdBackNanos = holdBackNanos;
    this.driftNanos = driftNanos;
    this.driftFactor = driftFactor;
    int n = nodes.size();
    this.standing = new AtomicIntegerArray(n);
    this.startedAt = new AtomicLongArray(n);
    this.runIds = new String[n];
    this.lastServerNanos = new long[n];
    this.lastLocalNanos = new long[n];
    this.lastRoundTrip = new long[n];
    this.probing = new boolean[n];
    this.epochs = new AtomicIntegerArray(n);
    this.heldBackLogged = new boolean[n];
    this.probedOnce = new boolean[n];
    this.firstProbesLeft = n;
  }

  /**
   * Starts watching: listens for lost connections and probes every node now and then once a
   * second. The returned future completes when every node was probed once (or could not be);
   * it completes exceptionally with a {@link RedlockConfigException} if a start-up check
   * failed.
   */
  public CompletableFuture<Void> start() {
    for (int i = 0; i < nodes.size(); i++) {
      int index = i;
      nodes.get(i).onDisconnect(() -> disconnected(index));
    }
    for (int i = 0; i < nodes.size(); i++) {
      probe(i);
    }
    scheduleTick();
    return firstProbes;
  }

  /** Whether node {@code index}'s votes count now. */
  public boolean counts(int index) {
    int state = standing.get(index);
    if (state == EXCLUDED) {
      return false;
    }
    if (!holdBackRestarts) {
      return true;
    }
    return state == KNOWN && time.nanoTime() - startedAt.get(index) >= holdBackNanos.getAsLong();
  }

  /**
   * Probes node {@code index} now if nothing is known of its current process, rather than at
   * the next periodic probe: a node back after a short disconnection counts again sooner.
   */
  public void probeIfUnknown(int index) {
    if (standing.get(index) == UNKNOWN) {
      probe(index);
    }
  }

  /** Why node {@code index} does not count, for its vote's detail. */
  public String whyHeldBack(int index) {
    int state = standing.get(index);
    if (state == EXCLUDED) {
      return "excluded: not an independent master (see the log)";
    }
    if (state == UNKNOWN) {
      return HELD_BACK + "not probed since it was (re)connected";
    }
    long up = time.nanoTime() - startedAt.get(index);
    return HELD_BACK + "up for " + Durations.formatNanos(up) + " of "
        + Durations.formatNanos(holdBackNanos.getAsLong());
  }

  /**
   * Reports nodes held back and counted again to {@code events}, from the timer thread (never
   * under this object's monitor).
   */
  public void listen(Events events) {
    this.events = events;
  }

  public void close() {
    closed = true;
    TimeSource.Cancellable task;
    synchronized (this) {
      task = ticker;
    }
    if (task != null) {
      task.cancel();
    }
  }

  private void scheduleTick() {
    if (closed) {
      return;
    }
    TimeSource.Cancellable task = time.schedule(this::tick, PROBE_INTERVAL_NANOS);
    synchronized (this) {
      ticker = task;
    }
  }

  private void tick() {
    for (int i = 0; i < nodes.size(); i++) {
      // Without the guard, only nodes never reached need probing: for the start-up checks.
      if (holdBackRestarts || runIdOf(i) == null) {
        probe(i);
      }
    }
    scheduleTick();
  }

  private synchronized String runIdOf(int index) {
    return runIds[index];
  }

  private void disconnected(int index) {
    // The next process behind this address may be a new one: count nothing from it until a
    // probe says which process it is. A probe already in flight may be answered by the old
    // process: the epoch makes its answer void.
    epochs.incrementAndGet(index);
    if (standing.compareAndSet(index, KNOWN, UNKNOWN)) {
      log.debug("node={} disconnected: held back until probed", nodes.get(index).name());
    }
  }

  private void probe(int index) {
    synchronized (this) {
      if (probing[index] || closed || standing.get(index) == EXCLUDED) {
        return;
      }
      probing[index] = true;
    }
    int epoch = epochs.get(index);
    long sent = time.nanoTime();
    CompletableFuture<NodeInfo> reply;
    try {
      reply = nodes.get(index).info().toCompletableFuture();
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete((info, error) -> probed(index, epoch, sent, info, error));
  }

  private void probed(int index, int epoch, long sent, NodeInfo info, Throwable error) {
    long received = time.nanoTime();
    RedlockConfigException refused = null;
    boolean allProbedOnce = false;
    synchronized (this) {
      probing[index] = false;
      if (error == null && epoch != epochs.get(index)) {
        log.debug("node={} probe answered across a lost connection: ignored",
            nodes.get(index).name());
      } else if (error == null) {
        refused = learn(index, sent, received, info);
      } else {
        log.debug("node={} not probed: {}", nodes.get(index).name(), error.toString());
      }
      if (!probedOnce[index]) {
        probedOnce[index] = true;
        allProbedOnce = --firstProbesLeft == 0;
      }
    }
    if (refused != null) {
      if (!firstProbes.completeExceptionally(refused)) {
        log.error("{}", refused.getMessage()); // found after start: excluded, not thrown
      }
    } else if (allProbedOnce) {
      firstProbes.complete(null);
    }
  }

  /** Reports a node held back ({@code reason}) or, with none, counted again: outside the monitor. */
  private void reportLater(Events to, int index, String name, String reason) {
    if (to.on()) {
      time.schedule(reason != null ? () -> to.nodeHeldBack(index, name, reason)
          : () -> to.nodeCounted(index, name), 0);
    }
  }

  /** Takes in a probe's answer; returns the refusal if the node is not an independent master. */
  private RedlockConfigException learn(int index, long sent, long received, NodeInfo info) {
    String name = nodes.get(index).name();
    if (info.isReplica()) {
      standing.set(index, EXCLUDED);
      return new RedlockConfigException("node " + name + " is a replica (role:" + info.role()
          + "); every node must be an independent master, so it is not used");
    }
    for (int other = 0; other < runIds.length; other++) {
      if (other != index && info.runId().equals(runIds[other])) {
        standing.set(index, EXCLUDED);
        return new RedlockConfigException("nodes " + nodes.get(other).name() + " and " + name
            + " are the same server (run_id " + info.runId() + "); every node must be a"
            + " different, independent master, so the second is not used");
      }
    }
    long serverNanos = info.serverTimeMicros() * 1_000L;
    long local = sent + (received - sent) / 2;
    boolean sameProcess = info.runId().equals(runIds[index]);
    if (!sameProcess) {
      // A new process (or the first look at this one): it started uptime seconds ago, at the
      // latest; uptime is rounded down, so this is the conservative end.
      startedAt.set(index, received - info.uptimeSeconds() * 1_000_000_000L);
      if (runIds[index] != null) {
        log.warn("node={} restarted (run_id changed); it counts again once up for {}", name,
            Durations.formatNanos(holdBackNanos.getAsLong()));
      }
      runIds[index] = info.runId();
    } else if (lastLocalNanos[index] != 0) {
      long jump = (serverNanos - lastServerNanos[index]) - (local - lastLocalNanos[index]);
      // Each reading places the node's TIME somewhere within its probe's round trip, so the
      // difference of two readings is uncertain by both round trips.
      long interval = local - lastLocalNanos[index];
      long tolerance = driftNanos.getAsLong() + (long) (interval * driftFactor)
          + (received - sent) + lastRoundTrip[index];
      if (jump > tolerance) {
        // Redis expires keys by its wall clock: a clock that leapt forward expired keys early,
        // as a restart would have forgotten them.
        startedAt.set(index, received);
        heldBackLogged[index] = false;
        log.warn("node={} clock jumped forward by {}; held back for {} as if restarted", name,
            Durations.formatNanos(jump), Durations.formatNanos(holdBackNanos.getAsLong()));
      }
    }
    lastServerNanos[index] = serverNanos;
    lastLocalNanos[index] = local;
    lastRoundTrip[index] = received - sent;
    standing.set(index, KNOWN);
    if (holdBackRestarts && !counts(index) && !heldBackLogged[index]) {
      heldBackLogged[index] = true;
      log.info("node={} {}", name, whyHeldBack(index));
      reportLater(events, index, name, whyHeldBack(index));
    } else if (counts(index)) {
      if (heldBackLogged[index]) {
        reportLater(events, index, name, null);
      }
      heldBackLogged[index] = false;
    }
    return null;
  }
}
