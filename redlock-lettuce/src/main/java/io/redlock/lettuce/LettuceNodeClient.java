package io.redlock.lettuce;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.redlock.RedlockConfigException;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeStalledException;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis master over one multiplexed Lettuce connection.
 *
 * <p>The first connection is retried in the background with a growing delay until it
 * succeeds (Lettuce reconnects by itself only once a connection existed); meanwhile requests
 * fail at once.
 *
 * <p>Per-node order. Every request is written once, on this one connection, and the node runs
 * them in the order they were written. Lock and extend are never re-sent: they go by plain
 * {@code EVAL}, and the batched auto-extension ({@link BatchedExtensions}) by {@code EVALSHA}
 * once the node answered its load on the connection, a {@code NOSCRIPT} answer then being a
 * failed vote, not a reason to send it again. That is what makes extensions safe
 * without waiting for every node: the next extension starts when the previous one is
 * decided, and on a node that has not answered the previous one yet, the previous one still
 * runs first, so the node ends with the newer expiry (a fallback re-sent later could land
 * after the newer one and shorten it).
 *
 * <p>Release (and undo), the hot path, goes by {@code EVALSHA} (by {@code EVAL}, the script's
 * 196 bytes would make each release about 150 bytes longer on the wire, plus a digest per call
 * on the node; measured: 8 µs of server CPU per cycle), but only once the node has answered
 * the {@code SCRIPT LOAD} sent as the first command of the current connection. Before that answer, after a lost connection, and for good where the node
 * refuses {@code SCRIPT LOAD} (an ACL without it), a release goes by {@code EVAL}, written
 * once: so a release or an undo written to a node runs on its own even if the connection is
 * closed before the answer (a paused node that resumes after {@code Redlock.close()}).
 *
 * <p>The one request ever re-sent: a release by {@code EVALSHA} that the node answered
 * {@code NOSCRIPT} (its script cache was emptied since the load, by an operator's
 * {@code SCRIPT FLUSH}). {@code NOSCRIPT} means the node ran nothing, so the release is sent
 * once more by {@code EVAL} and runs once; it is not re-sent after {@link #close()}, where
 * no connection is left for it (that node keeps the key until its ttl runs out). Running
 * late, behind requests sent meanwhile, is harmless for a release: it deletes only keys that
 * hold its token, every attempt has a token of its own (a later lease of the same resource
 * has another), and nothing the algorithm sends after a token's release or undo creates a key
 * with that token (an extension never creates one), so what it deletes was given up.
 *
 * <p>Note on concurrency: {@code connection} is written once, by the connect callback, and
 * read without locking; requests issued before it is set fail as "not connected".
 * {@code connectionNumber} is raised only by the disconnect listener, on the connection's
 * event loop. A release that reads it just before a disconnect fails at once while
 * disconnected, or is written by {@code EVALSHA} on the next connection ahead of its load:
 * then the node answers {@code NOSCRIPT} and it is re-sent as above.
 */
final class LettuceNodeClient implements NodeClient {
  private static final Logger log = LoggerFactory.getLogger(LettuceNodeClient.class);
  private static final Duration FIRST_RETRY = Duration.ofMillis(100);
  private static final Duration LAST_RETRY = Duration.ofSeconds(5);

  private final String name;
  private final RedisClient client;
  private final RedisURI uri;
  private final ClientResources resources;
  private final CompletableFuture<Void> connected = new CompletableFuture<>();
  private final List<Runnable> disconnectListeners = new CopyOnWriteArrayList<>();
  private final NodeBacklog backlog;
  private final BatchedExtensions batches;
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;

  /**
   * Counts the connections to the node: raised each time one is lost. Compared with
   * {@code scriptLoadedOn} to tell whether the current connection's node has the release
   * script.
   */
  private volatile long connectionNumber;

  /**
   * The {@code connectionNumber} on which the node answered {@code SCRIPT LOAD} of the release
   * script, or -1: releases go by {@code EVALSHA} only while it equals {@code connectionNumber}.
   */
  private volatile long scriptLoadedOn = -1;

  /**
   * Set once the node refused {@code CONFIG GET} (an ACL without it): not asked again, so that
   * a least-privilege user does not fill the node's {@code ACL LOG} once a second.
   */
  private volatile boolean configRefused;

  private Duration retryDelay = FIRST_RETRY;

  LettuceNodeClient(
      String name,
      RedisClient client,
      RedisURI uri,
      ClientResources resources,
      NodeBacklog backlog) {
    this.name = name;
    this.client = client;
    this.uri = uri;
    this.resources = resources;
    this.backlog = backlog;
    this.batches =
        new BatchedExtensions(
            name,
            backlog,
            LettuceTransport.MAX_BATCH_KEYS,
            () -> connectionNumber,
            () -> {
              StatefulRedisConnection<String, String> conn = connection;
              if (conn != null) {
                batches().load(conn, connectionNumber);
              }
            });
    backlog.onSilent(this::sendSentinelSoon);
    client.addListener(
        new RedisConnectionStateListener() {
          @Override
          public void onRedisConnected(RedisChannelHandler<?, ?> channel, SocketAddress address) {
            // A reconnect may reach a new process with an empty script cache: releases go by
            // EVAL until the node answered this load (the disconnect raised connectionNumber).
            StatefulRedisConnection<String, String> conn = connection;
            if (conn != null && conn == channel) {
              loadReleaseScript(conn);
            }
          }

          @Override
          public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
            // The next connection may reach a process with an empty script cache: releases go
            // by EVAL until it answered the load.
            connectionNumber++;
            // Lettuce drained every request of the lost connection: the backlog starts clean.
            backlog.connectionLost();
            // Called as the channel goes inactive, before Lettuce reconnects: every listener has
            // run before any request can reach the process behind the next connection.
            for (Runnable listener : disconnectListeners) {
              listener.run();
            }
          }
        });
  }

  /**
   * Sends {@code SCRIPT LOAD} of the release script on {@code conn}, before anything else is
   * written on it (see the class comment). Once the node answers, releases on this connection
   * go by {@code EVALSHA}; a node that refuses it (an ACL) gets them by {@code EVAL}.
   */
  private void loadReleaseScript(StatefulRedisConnection<String, String> conn) {
    long number = connectionNumber;
    batches.load(conn, number);
    conn.async()
        .scriptLoad(Script.UNLOCK.source())
        .whenComplete(
            (sha, error) -> {
              if (error != null) {
                log.debug(
                    "node={} did not load the release script, releases go by EVAL: {}",
                    name,
                    describe(error));
              } else if (number == connectionNumber && Script.UNLOCK.sha1().equals(sha)) {
                scriptLoadedOn = number;
              }
            });
  }

  @Override
  public void onDisconnect(Runnable listener) {
    disconnectListeners.add(listener);
  }

  @Override
  public CompletionStage<NodeInfo> info() {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    CompletableFuture<String> server = commands.info("server").toCompletableFuture();
    CompletableFuture<String> replication = commands.info("replication").toCompletableFuture();
    CompletableFuture<List<String>> clock = commands.time().toCompletableFuture();
    return server
        .thenCombine(replication, (s, r) -> new String[] {s, r})
        .thenCombine(
            clock,
            (texts, time) ->
                new NodeInfo(
                    field(texts[0], "run_id"),
                    field(texts[1], "role"),
                    Long.parseLong(field(texts[0], "uptime_in_seconds")),
                    Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1)),
                    null,
                    null,
                    null,
                    optionalField(texts[0], "redis_version")));
  }

  /**
   * Like {@link #info()}, with what the restart guard judges trust by: the node's record of its
   * history ({@code GET} of the marker key), {@code INFO persistence} with {@code CONFIG GET
   * appendfsync}, {@code INFO memory} (the memory limit and eviction policy) and {@code INFO
   * stats} (the eviction count). These are optional: a node (or an ACL) that refuses one just
   * leaves it unknown, and the guard then trusts the node less. Only {@code CONFIG GET} is
   * outside the least-privilege ACL: without it, a node that persists every write is judged as
   * one that does not.
   */
  @Override
  public CompletionStage<NodeInfo> info(String markerKey) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    CompletableFuture<NodeInfo> basic = info().toCompletableFuture();
    CompletableFuture<String> marker = optional(commands.get(markerKey));
    CompletableFuture<String> persistence = optional(commands.info("persistence"));
    CompletableFuture<java.util.Map<String, String>> fsync = configGet(commands, "appendfsync");
    CompletableFuture<NodeInfo.Memory> memory =
        optional(commands.info("memory")).thenApply(LettuceNodeClient::memory);
    CompletableFuture<Long> evicted =
        optional(commands.info("stats")).thenApply(LettuceNodeClient::evictedKeys);
    CompletableFuture<NodeInfo.Persistence> persisted =
        persistence.thenCombine(fsync, LettuceNodeClient::persistence);
    // The optional parts never fail (a refusal leaves them null): one NodeInfo once all are in.
    return CompletableFuture.allOf(marker, persisted, memory, evicted)
        .thenCombine(
            basic,
            (done, info) ->
                new NodeInfo(
                    info.runId(),
                    info.role(),
                    info.uptimeSeconds(),
                    info.serverTimeMicros(),
                    marker.join(),
                    persisted.join(),
                    memory.join(),
                    info.version(),
                    evicted.join()));
  }

  /** The memory limit and policy from {@code INFO memory}, or {@code null} if not known. */
  static NodeInfo.Memory memory(String info) {
    if (info == null) {
      return null;
    }
    String maxmemory = optionalField(info, "maxmemory");
    String policy = optionalField(info, "maxmemory_policy");
    if (maxmemory == null || policy == null) {
      return null;
    }
    try {
      return new NodeInfo.Memory(Long.parseLong(maxmemory), policy);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code evicted_keys} from {@code INFO stats}, or -1 if not known. */
  static long evictedKeys(String info) {
    String evicted = info == null ? null : optionalField(info, "evicted_keys");
    if (evicted == null) {
      return -1;
    }
    try {
      return Long.parseLong(evicted);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private CompletableFuture<java.util.Map<String, String>> configGet(
      RedisAsyncCommands<String, String> commands, String parameter) {
    if (configRefused) {
      return CompletableFuture.completedFuture(null);
    }
    return commands
        .configGet(parameter)
        .toCompletableFuture()
        .handle(
            (value, error) -> {
              if (error != null && String.valueOf(unwrap(error).getMessage()).contains("NOPERM")) {
                configRefused = true;
              }
              return error == null ? value : null;
            });
  }

  private static <T> CompletableFuture<T> optional(CompletionStage<T> reply) {
    return reply.toCompletableFuture().handle((value, error) -> error == null ? value : null);
  }

  /**
   * How the node persists writes, or {@code null} if not known. A rewrite is seen by
   * {@code aof_rewrites} (Redis 7) or {@code aof_last_rewrite_time_sec} (-1 until this
   * process finished one), and by a rewrite in progress or scheduled.
   */
  static NodeInfo.Persistence persistence(String info, java.util.Map<String, String> fsync) {
    if (info == null || fsync == null || fsync.get("appendfsync") == null) {
      return null;
    }
    String enabled = optionalField(info, "aof_enabled");
    String inProgress = optionalField(info, "aof_rewrite_in_progress");
    String scheduled = optionalField(info, "aof_rewrite_scheduled");
    String lastRewrite = optionalField(info, "aof_last_rewrite_time_sec");
    String rewrites = optionalField(info, "aof_rewrites");
    String lastWrite = optionalField(info, "aof_last_write_status");
    if (enabled == null
        || inProgress == null
        || scheduled == null
        || lastRewrite == null
        || lastWrite == null) {
      return null;
    }
    boolean rewritten =
        !"0".equals(inProgress)
            || !"0".equals(scheduled)
            || !"-1".equals(lastRewrite)
            || (rewrites != null && !"0".equals(rewrites));
    return new NodeInfo.Persistence(
        "1".equals(enabled), fsync.get("appendfsync"), rewritten, "ok".equals(lastWrite));
  }

  private static String optionalField(String info, String field) {
    try {
      return field(info, field);
    } catch (IllegalStateException e) {
      return null;
    }
  }

  @Override
  public CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    return commands
        .<List<Object>>eval(
            Script.UPDATE_RECORD.source(),
            ScriptOutputType.MULTI,
            new String[] {key},
            expected,
            value,
            runId)
        .toCompletableFuture()
        .thenApply(
            reply ->
                ((Number) reply.get(0)).longValue() == 1L
                    ? null
                    : reply.size() > 1 && reply.get(1) != null ? reply.get(1).toString() : "");
  }

  @Override
  public CompletionStage<MaxTtlRegister> readMaxTtl(String key) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    CompletableFuture<String> stored = commands.get(key).toCompletableFuture();
    CompletableFuture<List<String>> clock = commands.time().toCompletableFuture();
    return stored.thenCombine(
        clock,
        (value, time) ->
            MaxTtlRegister.read(
                value,
                Long.parseLong(time.get(0)) * 1_000L + Long.parseLong(time.get(1)) / 1_000L));
  }

  @Override
  public CompletionStage<java.util.Map<String, Long>> readCounters(String counterPrefix) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    return commands
        .<List<Object>>eval(
            Script.READ_COUNTERS.source(),
            ScriptOutputType.MULTI,
            new String[0],
            globEscape(counterPrefix) + "*")
        .toCompletableFuture()
        .thenApply(
            pairs -> {
              java.util.Map<String, Long> counters = new java.util.TreeMap<>();
              for (int i = 0; i + 1 < pairs.size(); i += 2) {
                String value = String.valueOf(pairs.get(i + 1));
                if (value.matches("\\d{1,18}")) {
                  counters.put(String.valueOf(pairs.get(i)), Long.parseLong(value));
                }
              }
              return counters;
            });
  }

  @Override
  public CompletionStage<Boolean> readmit(
      String recordKey,
      String expectedRecord,
      String record,
      String runId,
      java.util.Map<String, Long> counters) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    List<String> args = new java.util.ArrayList<>(List.of(runId, expectedRecord, record));
    counters.forEach(
        (key, value) -> {
          args.add(key);
          args.add(Long.toString(value));
        });
    return commands
        .<Long>eval(
            Script.READMIT.source(),
            ScriptOutputType.INTEGER,
            new String[] {recordKey},
            args.toArray(new String[0]))
        .toCompletableFuture()
        .thenApply(done -> done != null && done == 1L);
  }

  @Override
  public CompletionStage<String> findLockKeys(String markerKey, String keyPrefix) {
    return marker("check", markerKey, "", keyPrefix);
  }

  @Override
  public CompletionStage<String> writeMarker(
      String markerKey, String markerValue, String keyPrefix, boolean force) {
    return marker(force ? "force" : "write", markerKey, markerValue, keyPrefix);
  }

  private CompletionStage<String> marker(
      String mode, String markerKey, String markerValue, String keyPrefix) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    String pattern = keyPrefix.isEmpty() ? "" : globEscape(keyPrefix) + "*";
    String own = keyPrefix + io.redlock.FreshMarker.OWN_KEYS;
    return commands
        .<String>eval(
            Script.MARKER.source(),
            ScriptOutputType.VALUE,
            new String[] {markerKey},
            mode,
            markerValue,
            pattern,
            own,
            globEscape(own) + "*")
        .toCompletableFuture()
        .thenApply(found -> found == null ? "" : found);
  }

  @Override
  public CompletionStage<MaxTtlRegister> raiseMaxTtl(
      String key, long maxTtlMillis, long holdMillis) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    // EVAL, not EVALSHA: once a second per node, the script's text costs nothing that
    // matters, and there is no NOSCRIPT round trip after a restart.
    return commands
        .<List<Object>>eval(
            Script.RAISE_MAX_TTL.source(),
            ScriptOutputType.MULTI,
            new String[] {key},
            Long.toString(maxTtlMillis),
            Long.toString(holdMillis))
        .toCompletableFuture()
        .thenApply(
            reply ->
                new MaxTtlRegister(
                    ((Number) reply.get(0)).longValue(),
                    Math.max(0, ((Number) reply.get(1)).longValue()),
                    reply.size() > 2 && reply.get(2) != null ? reply.get(2).toString() : ""));
  }

  @Override
  public CompletionStage<List<String>> refusedCommands(String checkKey) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    List<CompletableFuture<List<String>>> checks =
        List.of(
            refusedIf("set", commands.set(checkKey, "1", SetArgs.Builder.px(10_000))),
            // a token no one holds: the release script deletes nothing
            refusedIf(
                "evalsha",
                commands.evalsha(
                    Script.UNLOCK.sha1(),
                    ScriptOutputType.INTEGER,
                    new String[] {checkKey},
                    "acl-check: no token")),
            refusedIf("script|load", commands.scriptLoad(Script.UNLOCK.source())),
            refusedIf("info", commands.info("server")),
            refusedIf("time", commands.time()),
            refusedIf("config|get", commands.configGet("appendfsync")),
            commands
                .<List<Object>>eval(
                    Script.ACL_CHECK.source(), ScriptOutputType.MULTI, new String[] {checkKey})
                .toCompletableFuture()
                .handle(
                    (inside, error) -> {
                      if (error != null) {
                        return isRefusal(error) ? List.of("eval") : List.<String>of();
                      }
                      return inside.stream().map(command -> "eval:" + command).toList();
                    }));
    return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new))
        .thenApply(done -> checks.stream().flatMap(check -> check.join().stream()).toList());
  }

  private static CompletableFuture<List<String>> refusedIf(
      String command, CompletionStage<?> reply) {
    return reply
        .toCompletableFuture()
        .handle(
            (value, error) ->
                error != null && isRefusal(error) ? List.of(command) : List.<String>of());
  }

  private static boolean isRefusal(Throwable error) {
    return String.valueOf(unwrap(error).getMessage()).toUpperCase(Locale.ROOT).contains("NOPERM");
  }

  /** {@code text} as a glob pattern that matches exactly it. */
  static String globEscape(String text) {
    StringBuilder escaped = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
        escaped.append('\\');
      }
      escaped.append(c);
    }
    return escaped.toString();
  }

  /** The value of {@code name:value} in an {@code INFO} reply. */
  static String field(String info, String field) {
    String prefix = field + ":";
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(prefix)) {
        return line.substring(prefix.length()).trim();
      }
    }
    throw new IllegalStateException("INFO reply has no " + field);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CompletionStage<Void> connected() {
    return connected;
  }

  void connect() {
    if (closed) {
      return;
    }
    client
        .connectAsync(StringCodec.UTF8, uri)
        .whenComplete(
            (conn, error) -> {
              if (error == null) {
                if (closed) {
                  conn.closeAsync();
                  return;
                }
                loadReleaseScript(conn);
                connection = conn;
                connected.complete(null);
                log.debug("connected node={}", name);
                return;
              }
              String reason = describe(error);
              if (isRefusedConfiguration(reason)) {
                // Wrong credentials or database: no reconnect can fix it. Credentials never appear
                // in the text: the node's name has none, and Redis does not echo passwords.
                connected.completeExceptionally(
                    new RedlockConfigException(
                        "node "
                            + name
                            + " refused the connection settings ("
                            + reason
                            + "); check the user, password"
                            + " and database of this node"));
                return;
              }
              if (!connected.isDone()) {
                connected.completeExceptionally(new ConnectException(name + ": " + reason));
              }
              Duration delay = nextRetryDelay();
              log.debug(
                  "node={} not reachable ({}), retrying in {} ms", name, reason, delay.toMillis());
              resources
                  .eventExecutorGroup()
                  .schedule(this::connect, delay.toMillis(), TimeUnit.MILLISECONDS);
            });
  }

  private synchronized Duration nextRetryDelay() {
    Duration delay = retryDelay;
    retryDelay =
        retryDelay.multipliedBy(2).compareTo(LAST_RETRY) > 0
            ? LAST_RETRY
            : retryDelay.multipliedBy(2);
    return delay;
  }

  @Override
  public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return notConnected();
    }
    long size = size(keys, token, 20);
    if (!backlog.admit(size, false)) {
      return stalled();
    }
    if (keys.size() == 1) {
      // The plain command other Redlock clients use; no script needed for one key.
      // Cancelling the vote cancels the command too: see CountedVote.
      return new CountedVote<String, Boolean>(backlog, size, "OK"::equals, true)
          .follow(commands.set(keys.get(0), token, SetArgs.Builder.nx().px(ttlMillis)));
    }
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, true)
        .follow(
            commands.eval(
                Script.LOCK.source(),
                ScriptOutputType.INTEGER,
                keys.toArray(String[]::new),
                token,
                Long.toString(ttlMillis)));
  }

  /**
   * What a request of {@code keys} and {@code token}, with {@code more} characters of other
   * arguments, counts in the node's backlog.
   */
  private static long size(List<String> keys, String token, int more) {
    long chars = NodeBacklog.OVERHEAD_BYTES + token.length() + more;
    for (String key : keys) {
      chars += key.length();
    }
    return chars;
  }

  /** A vote the backlog refused: failed at once, {@code STALLED}. */
  private <V> CompletionStage<V> stalled() {
    return CompletableFuture.failedFuture(new NodeStalledException(backlog.refusal()));
  }

  /**
   * Sends the sentinel from one of Lettuce's event executors, never from a connection's event
   * loop: written there, it would overtake requests other threads handed over before it (see
   * {@code LockEngine.dispatch}), and its answer would free them too early.
   */
  private void sendSentinelSoon() {
    resources.eventExecutorGroup().execute(this::sendSentinel);
  }

  /**
   * Sends one {@code PING} to a node set aside as silent, to learn when it answers again (see
   * {@link NodeBacklog}); sends another when a request handed over after it was cut off, and
   * tries again a moment later when it could not be sent. Stops once the node is back, the
   * connection is lost (the backlog starts clean then) or this client is closed.
   */
  private void sendSentinel() {
    if (closed || !backlog.isSilent()) {
      return;
    }
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      sendSentinelLater();
      return;
    }
    long number = connectionNumber;
    long before = backlog.position();
    commands
        .ping()
        .whenComplete(
            (pong, error) -> {
              if (number != connectionNumber) {
                return; // the connection was lost: the backlog started clean
              }
              Throwable cause = unwrap(error);
              if (cause == null
                  || cause instanceof io.lettuce.core.RedisCommandExecutionException) {
                if (!backlog.sentinelAnswered(before)) {
                  sendSentinelSoon();
                }
              } else {
                sendSentinelLater();
              }
            });
  }

  private void sendSentinelLater() {
    resources
        .eventExecutorGroup()
        .schedule(this::sendSentinel, SENTINEL_RETRY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** How soon a sentinel that could not be sent is tried again. */
  private static final Duration SENTINEL_RETRY = Duration.ofMillis(200);

  /** The node's backlog, for tests: what waits on it now and at most. */
  NodeBacklog backlog() {
    return backlog;
  }

  @Override
  public CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis) {
    return lockFenced(keys, counters, token, ttlMillis, null);
  }

  @Override
  public CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis, String recordKey) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    long size = size(keys, token, 30) + size(counters, "", 0) - NodeBacklog.OVERHEAD_BYTES;
    if (!backlog.admit(size, false)) {
      return stalled();
    }
    return new CountedVote<Long, Long>(backlog, size, LettuceNodeClient::fencedAnswer, false)
        .follow(
            commands.eval(
                Script.LOCK_FENCED.source(),
                ScriptOutputType.INTEGER,
                recordKey == null ? both(keys, counters) : withRecord(keys, counters, recordKey),
                token,
                Long.toString(ttlMillis),
                Integer.toString(keys.size()),
                recordKey == null ? "" : "check"));
  }

  private static Long fencedAnswer(Long result) {
    if (result == null) {
      throw new IllegalStateException("no answer to lock-fenced");
    }
    return result;
  }

  private static String[] withRecord(List<String> keys, List<String> counters, String record) {
    String[] all = java.util.Arrays.copyOf(both(keys, counters), keys.size() + counters.size() + 1);
    all[all.length - 1] = record;
    return all;
  }

  @Override
  public CompletionStage<Boolean> fence(
      List<String> keys, List<String> counters, String token, long fencingToken) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return notConnected();
    }
    long size = size(keys, token, 30) + size(counters, "", 0) - NodeBacklog.OVERHEAD_BYTES;
    if (!backlog.admit(size, false)) {
      return stalled();
    }
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .follow(
            commands.<Long>eval(
                Script.FENCE.source(),
                ScriptOutputType.INTEGER,
                both(keys, counters),
                token,
                Integer.toString(keys.size()),
                Long.toString(fencingToken)));
  }

  private static String[] both(List<String> keys, List<String> counters) {
    String[] all = new String[keys.size() + counters.size()];
    for (int i = 0; i < keys.size(); i++) {
      all[i] = keys.get(i);
    }
    for (int i = 0; i < counters.size(); i++) {
      all[keys.size() + i] = counters.get(i);
    }
    return all;
  }

  @Override
  public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return notConnected();
    }
    long size = size(keys, token, 20);
    if (!backlog.admit(size, false)) {
      return stalled();
    }
    return eval(commands, size, Script.EXTEND, keys, token, Long.toString(ttlMillis));
  }

  /**
   * Single-key leases in scripts of up to {@link LettuceTransport#MAX_BATCH_KEYS}, by
   * {@code EVALSHA} once loaded, never re-sent (see {@link BatchedExtensions}); a lease on
   * several keys by {@link #extend}.
   */
  @Override
  public CompletionStage<List<Boolean>> extendBatch(List<io.redlock.spi.ExtendRequest> requests) {
    return batches.send(
        commands(), connectionNumber, requests, r -> extend(r.keys(), r.token(), r.ttlMillis()));
  }

  private BatchedExtensions batches() {
    return batches;
  }

  @Override
  public CompletionStage<Boolean> unlock(List<String> keys, String token) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return notConnected();
    }
    // A node far behind gets no release: the key expires with its ttl (docs/safety.md, "A
    // stalled node"). Releases have twice the room of votes, and go also to a silent node.
    long size = size(keys, token, 0);
    if (!backlog.admit(size, true)) {
      return stalled();
    }
    long number = connectionNumber;
    if (scriptLoadedOn != number) {
      // The node may not have the script: a release written once runs on its own, also if
      // the connection closes before the answer.
      return eval(commands, size, Script.UNLOCK, keys, token);
    }
    return release(commands, number, size, keys, token);
  }

  /**
   * A release by {@code EVALSHA}, re-sent by {@code EVAL} after {@code NOSCRIPT} while this
   * client is open: see the class comment on why that, and only that, may be re-sent.
   */
  private CompletionStage<Boolean> release(
      RedisAsyncCommands<String, String> commands,
      long number,
      long size,
      List<String> keys,
      String token) {
    String[] keyArray = keys.toArray(String[]::new);
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .onNoScript(
            () -> {
              if (closed) {
                return null; // no connection is left for it: the NOSCRIPT error stands
              }
              log.debug("node={} lost the release script, sending it with EVAL", name);
              if (scriptLoadedOn == number) {
                scriptLoadedOn = -1; // EVAL until the node has it again
                StatefulRedisConnection<String, String> conn = connection;
                if (conn != null) {
                  loadReleaseScript(conn);
                }
              }
              return commands.<Long>eval(
                  Script.UNLOCK.source(), ScriptOutputType.INTEGER, keyArray, token);
            })
        .follow(
            commands.<Long>evalsha(
                Script.UNLOCK.sha1(), ScriptOutputType.INTEGER, keyArray, token));
  }

  /** Runs {@code script} by {@code EVAL}, never re-sent: see the class comment. */
  private CompletionStage<Boolean> eval(
      RedisAsyncCommands<String, String> commands,
      long size,
      Script script,
      List<String> keys,
      String... args) {
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .follow(
            commands.<Long>eval(
                script.source(), ScriptOutputType.INTEGER, keys.toArray(String[]::new), args));
  }

  private static boolean isOne(Long result) {
    return result != null && result == 1L;
  }

  private RedisAsyncCommands<String, String> commands() {
    StatefulRedisConnection<String, String> conn = connection;
    return conn == null ? null : conn.async();
  }

  private CompletionStage<Boolean> notConnected() {
    return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
  }

  private static Throwable unwrap(Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static String describe(Throwable error) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = unwrap(error); t != null; t = t.getCause()) {
      if (t.getMessage() != null && text.indexOf(t.getMessage()) < 0) {
        if (text.length() > 0) {
          text.append(": ");
        }
        text.append(t.getMessage());
      }
    }
    return text.length() == 0 ? error.getClass().getSimpleName() : text.toString();
  }

  private static boolean isRefusedConfiguration(String reason) {
    String upper = reason.toUpperCase(Locale.ROOT);
    return upper.contains("WRONGPASS")
        || upper.contains("NOAUTH")
        || upper.contains("INVALID PASSWORD")
        || upper.contains("INVALID USERNAME")
        || upper.contains("DB INDEX IS OUT OF RANGE")
        || upper.contains("NOPERM")
        // TLS: the node's certificate is not trusted or does not name it
        || upper.contains("PKIX PATH")
        || upper.contains("NO SUBJECT ALTERNATIVE")
        || upper.contains("CERTIFICATE_UNKNOWN");
  }

  @Override
  public void close() {
    closed = true;
    StatefulRedisConnection<String, String> conn = connection;
    if (conn != null) {
      conn.close();
    }
    // The connection is closed; what is left is bookkeeping, which need not hold up the caller
    // (several nodes close one after the other).
    client.shutdownAsync(0, 2, TimeUnit.SECONDS);
  }

  @Override
  public String toString() {
    return "LettuceNodeClient{" + name + "}";
  }
}
