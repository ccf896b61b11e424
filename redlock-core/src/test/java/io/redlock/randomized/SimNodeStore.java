package io.redlock.randomized;

import io.redlock.fake.FakeTime;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One simulated Redis master: its keys, its own wall clock, and its process lifecycle, shared
 * by every client's {@link SimConnection} to it.
 *
 * <p>Keys expire by the node's clock, which runs at {@code rate} (1 + ρ) against true time:
 * a ttl of T ms passes in T / rate of true time. The operations have the semantics of the
 * real transport's Lua scripts (checked by {@link RandomizedNodeContractTest}). A crash breaks
 * every connection (their disconnect listeners fire) and makes requests fail fast; the node
 * comes back as a new process ({@code run_id} changes, uptime restarts) either with its keys
 * (persistence) or empty. Keys keep expiring by the clock while the node is down.
 */
final class SimNodeStore {
  private record Entry(String value, long expiresAt) {}

  private static final long INITIAL_UPTIME_NANOS = 3_600_000_000_000L;

  final String name;
  private final FakeTime truth;
  private final double rate;
  private final long offset;
  private final Map<String, Entry> keys = new HashMap<>();
  private final List<SimConnection> connections = new ArrayList<>();
  private int process;
  private long startedAt;
  private boolean down;
  private int epoch;
  private boolean reportsAofAlways;

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

  // ---- operations, with the semantics of the Lua scripts ----

  boolean lock(List<String> names, String token, long ttlMillis) {
    purge(names);
    for (String key : names) {
      if (keys.containsKey(key)) {
        return false;
      }
    }
    long expiresAt = now() + ttlMillis * 1_000_000L;
    for (String key : names) {
      keys.put(key, new Entry(token, expiresAt));
    }
    return true;
  }

  boolean extend(List<String> names, String token, long ttlMillis) {
    purge(names);
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry == null || !entry.value().equals(token)) {
        return false;
      }
    }
    long expiresAt = now() + ttlMillis * 1_000_000L;
    for (String key : names) {
      keys.put(key, new Entry(token, expiresAt));
    }
    return true;
  }

  boolean unlock(List<String> names, String token) {
    purge(names);
    boolean all = true;
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry != null && entry.value().equals(token)) {
        keys.remove(key);
      } else {
        all = false;
      }
    }
    return all;
  }

  NodeInfo info() {
    long now = now();
    return new NodeInfo(name + "-run" + process, "master", (now - startedAt) / 1_000_000_000L,
        now / 1_000L);
  }

  /** {@link #info()} with the marker's value and, if the node says so, AOF always. */
  NodeInfo info(String markerKey) {
    NodeInfo info = info();
    Entry marker = keys.get(markerKey);
    return new NodeInfo(info.runId(), info.role(), info.uptimeSeconds(), info.serverTimeMicros(),
        marker == null ? null : marker.value(), reportsAofAlways
            ? new NodeInfo.Persistence(true, "always", false, true) : null, null);
  }

  /** The max-ttl register: raised to {@code maxTtlMillis} unless larger; lost when emptied. */
  long raiseMaxTtl(String key, long maxTtlMillis) {
    Entry held = keys.get(key);
    long value = held == null ? 0 : Long.parseLong(held.value());
    if (maxTtlMillis > value) {
      keys.put(key, new Entry(Long.toString(maxTtlMillis), Long.MAX_VALUE));
      return maxTtlMillis;
    }
    return value;
  }

  /** Writes the fresh marker bound to the current process, as {@code redlock init} does. */
  void declareFresh(String markerKey) {
    keys.put(markerKey, new Entry(io.redlock.FreshMarker.value(name + "-run" + process),
        Long.MAX_VALUE));
  }

  /**
   * Makes the node report AOF with {@code appendfsync always} and no rewrite: true when it
   * keeps its keys across crashes, a lie when it restarts empty (a lost data directory).
   */
  void reportAofAlways() {
    reportsAofAlways = true;
  }

  // ---- direct access, for the contract test and traces ----

  String valueOf(String key) {
    purge(List.of(key));
    Entry entry = keys.get(key);
    return entry == null ? null : entry.value();
  }

  long pttl(String key) {
    purge(List.of(key));
    Entry entry = keys.get(key);
    return entry == null ? -2 : (entry.expiresAt() - now()) / 1_000_000L;
  }

  void put(String key, String value, long ttlNanos) {
    keys.put(key, new Entry(value, now() + ttlNanos));
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
    process++;
    startedAt = now();
  }

  private void breakConnections() {
    epoch++;
    for (SimConnection connection : connections) {
      connection.disconnected();
    }
  }

  private void purge(List<String> names) {
    long now = now();
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry != null && entry.expiresAt() - now <= 0) {
        keys.remove(key);
      }
    }
  }
}
