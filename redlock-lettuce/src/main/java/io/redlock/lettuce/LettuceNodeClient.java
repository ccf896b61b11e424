package io.redlock.lettuce;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.output.IntegerOutput;
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
 * them in the order they were written. Locks, fenced locks, confirmations and extensions
 * (alone or in a batch, {@link BatchedExtensions}) are never re-sent. That is what makes extensions safe without waiting for every node: the next
 * extension starts when the previous one is decided, and on a node that has not answered the
 * previous one yet, the previous one still runs first, so the node ends with the newer expiry
 * (a fallback re-sent later could land after the newer one and shorten it).
 *
 * <p>The scripts of the rounds ({@link RoundScripts#LOADED}: release, lock of several keys,
 * fenced lock, confirmation, a batch of extensions) go by {@code EVALSHA} (by {@code EVAL}, the script's text would
 * travel with every request, 196 bytes for a release and 1.5 kB for a fenced lock, and the
 * node would digest it on every call; measured for the release: 8 µs of server CPU per cycle),
 * but only once the node has answered the {@code SCRIPT LOAD} of that script, sent as the
 * first commands of the current connection. Before that answer, after a lost connection, and
 * for good where the node refuses {@code SCRIPT LOAD} (an ACL without it), they go by {@code
 * EVAL}, written once: so a release or an undo written to a node runs on its own even if the
 * connection is closed before the answer (a paused node that resumes after {@code
 * Redlock.close()}). A lock, fenced lock, confirmation or batch of extensions that the node
 * answers {@code NOSCRIPT} (its script cache was emptied since the load) ran nothing: it is
 * that node's vote failing (each lease's, for a batch), never re-sent, and the script is loaded
 * again for the next request. The extension of one lease goes by {@code EVAL} always.
 *
 * <p>No request of a round has a Lettuce timeout ({@link RoundCommand}, {@link
 * CommandTimeouts}): the round's one deadline times out every vote.
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
 * event loop. A request that reads it just before a disconnect fails at once while
 * disconnected, or is written by {@code EVALSHA} on the next connection ahead of its load:
 * then the node answers {@code NOSCRIPT}, and a release is re-sent as above.
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
   * Counts the connections to the node: raised each time one is lost. Compared with the
   * connection of each script's load ({@code scripts}) to tell whether the current
   * connection's node has it.
   */
  private volatile long connectionNumber;

  /** The scripts the node answered {@code SCRIPT LOAD} for, and on which connection. */
  private final RoundScripts scripts = new RoundScripts();

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
            scripts,
            number -> scriptLost(Script.EXTEND_BATCH, number));
    backlog.onSilent(this::sendSentinelSoon);
    client.addListener(
        new RedisConnectionStateListener() {
          @Override
          public void onRedisConnected(RedisChannelHandler<?, ?> channel, SocketAddress address) {
            // A reconnect may reach a new process with an empty script cache: scripts go by
            // EVAL until the node answered these loads (the disconnect raised
            // connectionNumber).
            StatefulRedisConnection<String, String> conn = connection;
            if (conn != null && conn == channel) {
              loadScripts(conn);
            }
          }

          @Override
          public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
            // The next connection may reach a process with an empty script cache: scripts go
            // by EVAL until it answered their loads.
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
   * Sends {@code SCRIPT LOAD} of each script of {@link RoundScripts#LOADED} on {@code conn},
   * before anything else is written on it (see the class comment). Once the node answers one,
   * that script goes by {@code EVALSHA} on this connection; a node that refuses them (an ACL)
   * gets them by {@code EVAL}.
   */
  private void loadScripts(StatefulRedisConnection<String, String> conn) {
    for (Script script : RoundScripts.LOADED) {
      loadScript(conn, script);
    }
  }

  private void loadScript(StatefulRedisConnection<String, String> conn, Script script) {
    long number = connectionNumber;
    conn.async()
        .scriptLoad(script.source())
        .whenComplete(
            (sha, error) -> {
              if (error != null) {
                log.debug(
                    "node={} did not load the {} script, it goes by EVAL: {}",
                    name,
                    script.name(),
                    describe(error));
              } else if (number == connectionNumber && script.sha1().equals(sha)) {
                scripts.loaded(script, number);
              }
            });
  }

  /**
   * The node answered {@code NOSCRIPT} to {@code script} sent on connection {@code number}: it
   * goes by {@code EVAL} until the node has it again, and is loaded again (once, by whichever
   * request heard it first) while the connection is still the current one.
   */
  private void scriptLost(Script script, long number) {
    if (!closed && scripts.forget(script, number) && number == connectionNumber) {
      log.debug("node={} lost the {} script, loading it again", name, script.name());
      StatefulRedisConnection<String, String> conn = connection;
      if (conn != null) {
        loadScript(conn, script);
      }
    }
  }

  /**
   * Sends {@code script} as a request of a round: by {@code EVALSHA} if the node answered its
   * load on connection {@code number}, else by {@code EVAL}; either way with no Lettuce timeout
   * ({@link RoundCommand}).
   */
  private static RedisFuture<Long> send(
      RedisAsyncCommands<String, String> commands,
      RoundScripts scripts,
      long number,
      Script script,
      String[] keys,
      String... args) {
    boolean loaded = scripts.isLoaded(script, number);
    return commands.dispatch(
        loaded ? RoundCommand.EVALSHA : RoundCommand.EVAL,
        new IntegerOutput<>(ExactUtf8Codec.UTF8),
        new ScriptArgs(
            loaded ? RoundScripts.digest(script) : RoundScripts.source(script), keys, args));
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
    if (backlog.isSilent()) {
      return setAside();
    }
    CompletableFuture<String> server = commands.info("server").toCompletableFuture();
    CompletableFuture<String> replication = commands.info("replication").toCompletableFuture();
    CompletableFuture<List<String>> clock = commands.time().toCompletableFuture();
    return withTimeouts(
        server
            .thenCombine(replication, (s, r) -> new String[] {s, r})
            .thenCombine(
                clock,
                (texts, time) ->
                    new NodeInfo(
                        InfoReplies.field(texts[0], "run_id"),
                        InfoReplies.field(texts[1], "role"),
                        Long.parseLong(InfoReplies.field(texts[0], "uptime_in_seconds")),
                        Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1)),
                        null,
                        null,
                        null,
                        NodeInfo.serverVersion(texts[0]))));
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
    if (backlog.isSilent()) {
      return setAside();
    }
    CompletableFuture<NodeInfo> basic = info().toCompletableFuture(); // timeouts mapped
    CompletableFuture<String> marker = optional(commands.get(markerKey));
    CompletableFuture<String> persistence = optional(commands.info("persistence"));
    CompletableFuture<java.util.Map<String, String>> fsync = configGet(commands, "appendfsync");
    CompletableFuture<NodeInfo.Memory> memory =
        optional(commands.info("memory")).thenApply(InfoReplies::memory);
    CompletableFuture<Long> evicted =
        optional(commands.info("stats")).thenApply(InfoReplies::evictedKeys);
    CompletableFuture<NodeInfo.Persistence> persisted =
        persistence.thenCombine(fsync, InfoReplies::persistence);
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
              if (error != null && io.redlock.spi.Refusals.isRefusal(unwrap(error))) {
                configRefused = true;
              }
              return error == null ? value : null;
            });
  }

  private static <T> CompletableFuture<T> optional(CompletionStage<T> reply) {
    return reply.toCompletableFuture().handle((value, error) -> error == null ? value : null);
  }

  @Override
  public CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    RedisAsyncCommands<String, String> commands = commands();
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    if (backlog.isSilent()) {
      return setAside();
    }
    return withTimeouts(
            commands.<List<Object>>eval(
                Script.UPDATE_RECORD.source(),
                ScriptOutputType.MULTI,
                new String[] {key},
                expected,
                value,
                runId))
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
    if (backlog.isSilent()) {
      return setAside();
    }
    // EVAL, not EVALSHA: once a second per node, the script's text costs nothing that
    // matters, and there is no NOSCRIPT round trip after a restart.
    return withTimeouts(
            commands.<List<Object>>eval(
                Script.RAISE_MAX_TTL.source(),
                ScriptOutputType.MULTI,
                new String[] {key},
                Long.toString(maxTtlMillis),
                Long.toString(holdMillis)))
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
        .connectAsync(ExactUtf8Codec.UTF8, uri)
        .whenComplete(
            (conn, error) -> {
              if (error == null) {
                if (closed) {
                  conn.closeAsync();
                  return;
                }
                loadScripts(conn);
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
    long number = connectionNumber;
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, true)
        .onNoScript(() -> notResent(Script.LOCK, number))
        .follow(
            send(
                commands,
                scripts,
                number,
                Script.LOCK,
                keys.toArray(String[]::new),
                token,
                Long.toString(ttlMillis)));
  }

  /**
   * After {@code NOSCRIPT} to a request that is never re-sent: loads the script again and
   * answers {@code null}, so that the vote fails with the {@code NOSCRIPT} error.
   */
  private <T> RedisFuture<T> notResent(Script script, long number) {
    scriptLost(script, number);
    return null;
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

  /**
   * A request of the restart guard (probe, register raise, record) while the node is set aside
   * as silent: failed at once. The guard asks every node once a second, and a silent node
   * answers nothing: each probe's commands would stay in Lettuce's stack until the node
   * answers or the connection closes (a Lettuce timeout does not free a written command), and
   * within a minute they filled it to its bound, past which Lettuce logs a WARN with a stack
   * trace for every command it refuses. The sentinel ({@link #sendSentinel}) learns when the
   * node answers again; the guard's next probe then goes out, and the node counts again under
   * the guard's rules once it is answered.
   */
  private <V> CompletionStage<V> setAside() {
    backlog.otherRequestNotSent();
    return CompletableFuture.failedFuture(new NodeStalledException(backlog.refusal()));
  }

  /**
   * {@code reply} with a Lettuce timeout reported as a {@link
   * java.util.concurrent.TimeoutException} (with it as the cause), as {@link NodeClient} asks
   * of requests that are not votes: the restart guard tells a slow or lost node, which is
   * routine and said at DEBUG, from a node that answers with an error by that.
   */
  private static <V> CompletableFuture<V> withTimeouts(CompletionStage<V> reply) {
    CompletableFuture<V> mapped = new CompletableFuture<>();
    reply.handle(
        (value, error) -> {
          if (error == null) {
            mapped.complete(value);
          } else {
            Throwable cause = unwrap(error);
            if (cause instanceof io.lettuce.core.RedisCommandTimeoutException) {
              java.util.concurrent.TimeoutException timeout =
                  new java.util.concurrent.TimeoutException(cause.getMessage());
              timeout.initCause(cause);
              cause = timeout;
            }
            mapped.completeExceptionally(cause);
          }
          return null;
        });
    return mapped;
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
    long number = connectionNumber;
    return new CountedVote<Long, Long>(backlog, size, LettuceNodeClient::fencedAnswer, false)
        .onNoScript(() -> notResent(Script.LOCK_FENCED, number))
        .follow(
            send(
                commands,
                scripts,
                number,
                Script.LOCK_FENCED,
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
    long number = connectionNumber;
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .onNoScript(() -> notResent(Script.FENCE, number))
        .follow(
            send(
                commands,
                scripts,
                number,
                Script.FENCE,
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
    if (!scripts.isLoaded(Script.UNLOCK, number)) {
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
              scriptLost(Script.UNLOCK, number); // EVAL until the node has it again
              return send(commands, scripts, -1, Script.UNLOCK, keyArray, token);
            })
        .follow(send(commands, scripts, number, Script.UNLOCK, keyArray, token));
  }

  /** Runs {@code script} by {@code EVAL}, never re-sent: see the class comment. */
  private CompletionStage<Boolean> eval(
      RedisAsyncCommands<String, String> commands,
      long size,
      Script script,
      List<String> keys,
      String... args) {
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .follow(send(commands, scripts, -1, script, keys.toArray(String[]::new), args));
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
