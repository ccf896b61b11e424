package io.redlock.randomized;

import io.redlock.fake.FakeTime;
import io.redlock.fake.Keyspace;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * One simulated Redis master: its keys, its own wall clock, and its process lifecycle, shared
 * by every client's {@link SimConnection} to it.
 *
 * <p>Keys expire by the node's clock, which runs at {@code rate} (1 + ρ) against true time:
 * a ttl of T ms passes in T / rate of true time. Its {@link Keyspace} is the one the fake node
 * of the unit tests uses (checked against the node contract by
 * {@link RandomizedNodeContractTest}). A crash breaks every connection (their disconnect
 * listeners fire) and makes requests fail fast; the node comes back as a new process
 * ({@code run_id} changes, uptime restarts) either with its keys (persistence) or empty. Keys
 * keep expiring by the clock while the node is down.
 */
final class SimNodeStore {
  private static final long INITIAL_UPTIME_NANOS = 3_600_000_000_000L;

  final String name;
  private final FakeTime truth;
  private final double rate;
  private final long offset;

  /** The keys, expiring by this node's clock. */
  final Keyspace keys = new Keyspace(this::now);

  private boolean skipsFenceConfirmations;
  private final List<SimConnection> connections = new ArrayList<>();
  private int process;
  private long startedAt;
  private boolean down;
  private int epoch;
  private boolean reportsAofAlways;
  private long evictedKeys;

  SimNodeStore(String name, FakeTime truth, double rate, long offset) {
    this.name = name;
    this.truth = truth;
    this.rate = rate;
    this.offset = offset;
    this.startedAt = now() - INITIAL_UPTIME_NANOS;
  }

  /** The node's wall clock, in nanoseconds since the epoch. */
  long now() {
    return offset + (long) Math.floor(truth.nanoTime() * rate);
  }

  void attach(SimConnection connection) {
    connections.add(connection);
  }

  boolean isDown() {
    return down;
  }

  /** Changes whenever the connections to this node break. */
  int epoch() {
    return epoch;
  }

  // ---- what only this node answers (the keys' operations are its keyspace's) ----

  NodeInfo info() {
    long now = now();
    return new NodeInfo(
        name + "-run" + process, "master", (now - startedAt) / 1_000_000_000L, now / 1_000L);
  }

  /** {@link #info()} with the marker's value and, if the node says so, AOF always. */
  NodeInfo info(String markerKey) {
    NodeInfo info = info();
    return new NodeInfo(
        info.runId(),
        info.role(),
        info.uptimeSeconds(),
        info.serverTimeMicros(),
        keys.valueOf(markerKey),
        reportsAofAlways ? new NodeInfo.Persistence(true, "always", false, true) : null,
        new NodeInfo.Memory(0, "noeviction"),
        info.version(),
        evictedKeys);
  }

  /** The record's compare-and-set, bound to the current process, as the transport's script. */
  String updateRecord(String key, String expected, String value, String runId) {
    String current = keys.valueOf(key);
    String held = current == null ? "" : current;
    if (!runId.equals(name + "-run" + process) || !expected.equals(held)) {
      return held;
    }
    keys.putPersistent(key, value);
    return null;
  }

  /** The max-ttl register, as the transport's script keeps it; lost when emptied. */
  MaxTtlRegister raiseMaxTtl(String key, long maxTtlMillis, long holdMillis) {
    return keys.raiseMaxTtl(key, maxTtlMillis, holdMillis);
  }

  /**
   * Confirms a fencing token, or, for a node told to {@link #skipFenceConfirmations()},
   * answers yes without raising any counter: what a client that skips the second round of a
   * fenced acquisition leaves behind.
   */
  boolean fence(List<String> names, List<String> counters, String token, long fencingToken) {
    if (!skipsFenceConfirmations) {
      return keys.fence(names, counters, token, fencingToken);
    }
    for (String name : names) {
      if (!token.equals(keys.valueOf(name))) {
        return false;
      }
    }
    return true;
  }

  /** From now on, answers fence confirmations without raising the counters. */
  void skipFenceConfirmations() {
    skipsFenceConfirmations = true;
  }

  /** Writes the fresh marker bound to the current process, as {@code redlock init} does. */
  /**
   * Writes a record that admits the current process without any evidence, with a {@code seq}
   * above any a client saw: the unsafe act of trusting counters the node lost.
   */
  void admitInPlace(String markerKey) {
    String run = name + "-run" + process;
    keys.putPersistent(
        markerKey,
        new io.redlock.internal.NodeRecord(
                run,
                0,
                1_000_000_000L,
                0,
                run,
                "-",
                -1,
                io.redlock.internal.NodeRecord.Why.READMITTED,
                false)
            .format());
  }

  void declareFresh(String markerKey) {
    keys.putPersistent(markerKey, io.redlock.FreshMarker.value(name + "-run" + process));
  }

  /**
   * Makes the node report AOF with {@code appendfsync always} and no rewrite: true when it
   * keeps its keys across crashes, a lie when it restarts empty (a lost data directory).
   */
  void reportAofAlways() {
    reportsAofAlways = true;
  }

  // ---- faults ----

  /** The process dies: connections break, requests fail fast until it comes back. */
  void crash() {
    if (down) {
      return;
    }
    down = true;
    breakConnections();
  }

  /** Comes back after a crash as a new process, with its keys ({@code keepKeys}) or empty. */
  void recover(boolean keepKeys) {
    if (!down) {
      return;
    }
    down = false;
    newProcess(keepKeys);
  }

  /**
   * A fenced lock as the transport's script with its record check: -2 when the keys were set
   * but the record does not admit the current process with no key evicted since.
   */
  long lockFencedChecked(
      List<String> names, List<String> counters, String token, long ttlMillis, String recordKey) {
    String run = name + "-run" + process;
    String raw = keys.valueOf(recordKey);
    boolean trusted;
    if (raw != null && raw.startsWith(io.redlock.internal.NodeRecord.PREFIX)) {
      io.redlock.internal.NodeRecord record = io.redlock.internal.NodeRecord.parse(raw);
      trusted =
          record != null
              && record.admits(run)
              && record.evicted() >= 0
              && evictedKeys <= record.evicted();
    } else {
      trusted = io.redlock.FreshMarker.value(run).equals(raw) && evictedKeys == 0;
    }
    long answer = keys.lockFenced(names, counters, token, ttlMillis);
    return answer >= 0 && !trusted ? -2 : answer;
  }

  /** Comes back after a crash as a new process on {@code data} (a copy of some keys). */
  void recoverWith(java.util.Map<String, Object> data) {
    if (!down) {
      return;
    }
    down = false;
    keys.restore(data);
    newProcess(true);
  }

  /** Evicts every fencing counter in place, as an allkeys policy at its limit may. */
  void evictCounters() {
    for (String key : keys.namesStartingWith("__redlock_fence__:")) {
      keys.remove(key);
      evictedKeys++;
    }
  }

  /** Restarts at once as a new process that forgot every key (no persistence). */
  void restartEmpty() {
    if (down) {
      recover(false);
      return;
    }
    breakConnections();
    newProcess(false);
  }

  private void newProcess(boolean keepKeys) {
    if (!keepKeys) {
      keys.clear();
    }
    evictedKeys = 0;
    process++;
    startedAt = now();
  }

  private void breakConnections() {
    epoch++;
    for (SimConnection connection : connections) {
      connection.disconnected();
    }
  }
}
