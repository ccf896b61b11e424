package io.redlock.spi;

import java.util.Objects;

/**
 * What a node says about itself: which process it is, what role it plays, how long it has
 * been up, what its clock reads, and what the restart guard may use to count it at once.
 * Read from {@code INFO server}, {@code INFO replication}, {@code TIME} and, where the
 * transport can, the fresh marker ({@code GET}), {@code INFO persistence} and
 * {@code CONFIG GET appendfsync}.
 *
 * <p>An immutable value; thread-safe.
 *
 * @param runId the random id Redis draws at each start: a new one means a new process, which
 *     remembers only what it persisted
 * @param role {@code master}, or {@code slave} for a replica
 * @param uptimeSeconds seconds since the process started ({@code uptime_in_seconds})
 * @param serverTimeMicros the node's wall clock ({@code TIME}), in microseconds since the
 *     epoch; Redis expires keys by it
 * @param marker the value of the marker key ({@link io.redlock.FreshMarker}) the probe asked
 *     for: the node's record of its history, written by the clients, or {@code null} if it
 *     does not exist or was not read
 * @param persistence how the node persists writes, or {@code null} if unknown (not read, or
 *     refused, for example by an ACL without {@code CONFIG GET})
 * @param memory the node's memory limit and eviction policy ({@code maxmemory} and {@code
 *     maxmemory_policy} of {@code INFO memory}), or {@code null} if unknown
 * @param version the server's version as {@link #serverVersion(String)} reads it from {@code
 *     INFO server} ({@code "7.2.4"} for Redis, {@code "valkey 8.0.1"} for Valkey), or {@code
 *     null} if the transport did not read it; shown by {@code redlock doctor}, never used by
 *     the algorithm
 * @param evictedKeys how many keys the process has evicted ({@code evicted_keys} of {@code
 *     INFO stats}), or -1 if unknown: the restart guard treats its growth as data lost
 * @since 0.1.0
 */
public record NodeInfo(
    String runId,
    String role,
    long uptimeSeconds,
    long serverTimeMicros,
    String marker,
    Persistence persistence,
    Memory memory,
    String version,
    long evictedKeys) {

  public NodeInfo {
    Objects.requireNonNull(runId, "runId");
    Objects.requireNonNull(role, "role");
  }

  /** A node known by run id, role, uptime and clock only: no marker, persistence unknown. */
  public NodeInfo(String runId, String role, long uptimeSeconds, long serverTimeMicros) {
    this(runId, role, uptimeSeconds, serverTimeMicros, null, null, null, null, -1);
  }

  /** A node whose eviction count is unknown. */
  public NodeInfo(
      String runId,
      String role,
      long uptimeSeconds,
      long serverTimeMicros,
      String marker,
      Persistence persistence,
      Memory memory,
      String version) {
    this(runId, role, uptimeSeconds, serverTimeMicros, marker, persistence, memory, version, -1);
  }

  /**
   * The node's memory limit ({@code maxmemory}, 0 for none) and what it does when the limit
   * is reached ({@code maxmemory-policy}): every policy but {@code noeviction} may evict a
   * lock key, which frees the lock early.
   */
  public record Memory(long maxmemory, String policy) {
    public Memory {
      Objects.requireNonNull(policy, "policy");
    }

    /** Whether the node may evict keys, lock keys included. */
    public boolean mayEvict() {
      return maxmemory > 0 && !policy.equalsIgnoreCase("noeviction");
    }

    /**
     * Whether the node may evict keys that have no ttl, such as fencing counters: only the
     * {@code allkeys-*} policies do.
     *
     * @since 0.1.0
     */
    public boolean mayEvictKeysWithoutTtl() {
      return maxmemory > 0 && policy.toLowerCase(java.util.Locale.ROOT).startsWith("allkeys");
    }
  }

  /**
   * The server's name and version from the text of {@code INFO server}, as {@link #version()}
   * carries it: {@code redis_version} for Redis ({@code "7.2.4"}); for a server that names
   * itself in {@code server_name} and reports its own {@code <server_name>_version}, that
   * name and version ({@code "valkey 8.0.1"}). Valkey also reports the Redis version it is
   * compatible with in {@code redis_version} ({@code 7.2.4} beside {@code valkey_version:8.0.1}
   * in Valkey 8.0), which is not the server's own.
   *
   * @param infoServer the reply to {@code INFO server} (or to {@code INFO}), or {@code null}
   * @return the name and version, or {@code null} if the text names no version
   * @since 0.1.0
   */
  public static String serverVersion(String infoServer) {
    if (infoServer == null) {
      return null;
    }
    String name = infoField(infoServer, "server_name");
    if (name != null && !name.isEmpty() && !name.equalsIgnoreCase("redis")) {
      String own = infoField(infoServer, name + "_version");
      if (own != null && !own.isEmpty()) {
        return name + " " + own;
      }
    }
    return infoField(infoServer, "redis_version");
  }

  /** The value of {@code field} in {@code INFO} text, or {@code null}. */
  private static String infoField(String info, String field) {
    String prefix = field + ":";
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(prefix)) {
        return line.substring(prefix.length()).strip();
      }
    }
    return null;
  }

  /** Whether the node is a replica, which Redlock must not use as one of its masters. */
  public boolean isReplica() {
    return role.equals("slave") || role.equals("replica");
  }

  /**
   * How a node persists writes, from {@code INFO persistence} and
   * {@code CONFIG GET appendfsync}.
   *
   * @param aofEnabled {@code aof_enabled:1}
   * @param appendfsync the {@code appendfsync} setting ({@code always}, {@code everysec},
   *     {@code no})
   * @param rewrittenSinceStart whether this process has rewritten its AOF, or has a rewrite
   *     in progress or scheduled ({@code aof_rewrites} above 0 where Redis reports it,
   *     {@code aof_last_rewrite_time_sec} not -1, {@code aof_rewrite_in_progress:1},
   *     {@code aof_rewrite_scheduled:1}): switching AOF on at run time always rewrites
   * @param lastWriteOk {@code aof_last_write_status:ok}
   */
  public record Persistence(
      boolean aofEnabled, String appendfsync, boolean rewrittenSinceStart, boolean lastWriteOk) {
    public Persistence {
      Objects.requireNonNull(appendfsync, "appendfsync");
    }
  }
}
