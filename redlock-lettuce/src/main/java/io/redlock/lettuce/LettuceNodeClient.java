package io.redlock.lettuce;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.output.IntegerOutput;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeStalledException;
import java.net.ConnectException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Redis master over two multiplexed Lettuce connections ({@link NodeConnection}): one for
 * votes (locks, fenced locks, confirmations), releases and the restart guard's requests, one
 * for extensions (auto-extension batches, one lease's extension, the shorter expiry of {@code
 * Lease.releaseAfter}). A node answers one connection's requests in the order they were
 * written; on one connection, a lock written after a batch of a thousand extensions waited for
 * the batch's answer, read on the same event-loop thread (docs/performance.md, "Reading the
 * held-lease figures"). Each connection has its own backlog, script state and sentinel.
 * Losing the connection of votes tells the {@link #onDisconnect} listeners (the restart
 * guard); losing the other does not, because extensions are sent only while both connections
 * reach the same process (the run id each reads first thing, {@link NodeConnection#process()}):
 * the one the guard's probes judge; an extension answered on a connection made again after it
 * was sent fails ({@link #MADE_AGAIN}), since the process that ran it was not read then. The guard's requests are held back while either connection
 * sees the node silent.
 *
 * <p>Per-node order. Every request is written once and the node runs each connection's
 * requests in the order they were written. Locks, fenced locks, confirmations and extensions
 * (alone or in a batch, {@link BatchedExtensions}) are never re-sent. That is what makes
 * extensions safe without waiting for every node: the next extension starts when the previous
 * one is decided, and on a node that has not answered the previous one yet, the previous one
 * still runs first (every extension goes on the one connection of extensions), so the node
 * ends with the newer expiry (a fallback re-sent later could land after the newer one and
 * shorten it). Between the two connections there is no order, and none is needed: an
 * extension only sets the ttl of a key that holds its lease's token, and never creates one.
 * A lock or fenced lock carries another attempt's token; a confirmation only raises counters
 * where the key holds its token (an extension that ran before it changed only the ttl); a
 * release deletes the key, which no extension creates again. An extension that overtakes its
 * own lock on a node that answered the lock late finds no key there: that node's vote for it
 * fails, as it would had the lock been lost. The one extension that must not overtake the lock,
 * the shorter expiry of {@code Lease.releaseAfter}, is sent to a node only after it answered
 * the lock (the engine waits for that answer, within the node timeout of the lock's round).
 *
 * <p>The scripts of the rounds ({@link RoundScripts#LOADED}: release, lock of several keys,
 * fenced lock, confirmation, a batch of extensions) go by {@code EVALSHA} (by {@code EVAL}, the script's text would
 * travel with every request, 196 bytes for a release and 1.5 kB for a fenced lock, and the
 * node would digest it on every call; measured for the release: 8 µs of server CPU per cycle),
 * but only once the node has answered the {@code SCRIPT LOAD} of that script, sent as the
 * first commands of the current connection (of each connection, the scripts it sends). Before that answer, after a lost connection, and
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
 * <p>Requests issued before a connection is made fail as "not connected". A request that
 * reads a connection's number just before a disconnect fails at once while disconnected, or
 * is written by {@code EVALSHA} on the next connection ahead of its load: then the node
 * answers {@code NOSCRIPT}, and a release is re-sent as above (see {@link NodeConnection}).
 */
final class LettuceNodeClient implements NodeClient {
  private static final Logger log = LoggerFactory.getLogger(LettuceNodeClient.class);
  private final String name;
  private final CompletableFuture<Void> connected;
  private final List<Runnable> disconnectListeners = new CopyOnWriteArrayList<>();

  /** Locks, fenced locks, confirmations, releases and the restart guard's requests. */
  private final NodeConnection votes;

  /** Extensions: auto-extension batches, single extensions and shorter expiries. */
  private final NodeConnection extensions;

  private final NodeBacklog backlog;
  private final BatchedExtensions batches;

  /**
   * Set once the node refused {@code CONFIG GET} (an ACL without it): not asked again, so that
   * a least-privilege user does not fill the node's {@code ACL LOG} once a second.
   */
  private volatile boolean configRefused;

  /**
   * @param votes the connection of votes, releases and the guard's requests
   * @param extensions the connection of extensions (its own client and backlog)
   * @param encoded the last auto-extension batch encoded by a node of the transport
   */
  LettuceNodeClient(
      String name,
      RedisURI uri,
      NodeConnection.Parts votes,
      NodeConnection.Parts extensions,
      BatchBody.Last encoded) {
    this.name = name;
    this.votes =
        new NodeConnection(
            name, uri, votes, VOTE_SCRIPTS, this::connectionLost, this::compareProcesses);
    // Its loss need not tell the restart guard: its extensions count only while it reaches
    // the process the connection of votes reaches, which is the one the guard judges.
    this.extensions =
        new NodeConnection(
            name + " extensions",
            uri,
            extensions,
            EXTENSION_SCRIPTS,
            () -> {},
            this::compareProcesses);
    this.backlog = votes.backlog();
    this.batches =
        new BatchedExtensions(
            name,
            extensions.backlog(),
            LettuceTransport.MAX_BATCH_KEYS,
            this.extensions.scripts(),
            number -> this.extensions.scriptLost(Script.EXTEND_BATCH, number),
            this.extensions::number,
            encoded);
    this.connected =
        this.votes
            .connected()
            .toCompletableFuture()
            .thenCombine(this.extensions.connected(), (a, b) -> (Void) null);
  }

  /** The scripts loaded on the connection of votes: every round's but the extensions'. */
  private static final List<Script> VOTE_SCRIPTS =
      RoundScripts.LOADED.stream().filter(s -> s != Script.EXTEND_BATCH).toList();

  /** The one script loaded on the connection of extensions (one lease's goes by EVAL). */
  private static final List<Script> EXTENSION_SCRIPTS = List.of(Script.EXTEND_BATCH);

  /**
   * Whether the connection of extensions reaches the process the connection of votes reaches:
   * the one whose history the restart guard's probes judge, and whose keys the votes lock. Two
   * processes can answer at one address at once (an address moved to another server while the
   * old one still runs and keeps its connections): an extension counted from the other one
   * would be a vote for a lease on keys the guard never looked at, and this node's lock votes
   * would come from the first.
   */
  private boolean oneProcess() {
    String behindExtensions = extensions.process();
    return behindExtensions != null && behindExtensions.equals(votes.process());
  }

  /** The process behind either connection was read: a WARN when the two differ. */
  private void compareProcesses() {
    String behindVotes = votes.process();
    String behindExtensions = extensions.process();
    if (behindVotes != null && behindExtensions != null && !behindVotes.equals(behindExtensions)) {
      log.warn(
          "node={} answers on two processes: run_id {} on the connection of votes, {} on the"
              + " connection of extensions (an address moved while the old server runs?);"
              + " extensions on this node fail until both reach the same one",
          name,
          behindVotes,
          behindExtensions);
    }
  }

  private CompletionStage<Boolean> notOneProcess() {
    return CompletableFuture.failedFuture(
        new ConnectException(
            name
                + ": the connection of extensions does not reach the process of the connection"
                + " of votes (not read yet after a connect, or another process)"));
  }

  /**
   * The connection of votes was lost, before Lettuce reconnects it: every listener has run
   * before any request can reach the process behind the next connection.
   */
  private void connectionLost() {
    for (Runnable listener : disconnectListeners) {
      listener.run();
    }
  }

  /**
   * Sends {@code script} as a request of a round: by {@code EVALSHA} if the node answered its
   * load on connection {@code number} ({@code scripts} of the connection of {@code commands}),
   * else by {@code EVAL} ({@code scripts} null: always); either way with no Lettuce timeout
   * ({@link RoundCommand}).
   */
  private static RedisFuture<Long> send(
      RedisAsyncCommands<String, String> commands,
      RoundScripts scripts,
      long number,
      Script script,
      String[] keys,
      String... args) {
    boolean loaded = scripts != null && scripts.isLoaded(script, number);
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
    if (isSetAside()) {
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
    if (isSetAside()) {
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
    if (isSetAside()) {
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
    if (isSetAside()) {
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
    votes.connect();
    extensions.connect();
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
    long number = votes.number();
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, true)
        .onNoScript(() -> notResent(Script.LOCK, number))
        .follow(
            send(
                commands,
                votes.scripts(),
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
    votes.scriptLost(script, number);
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
   * trace for every command it refuses. The sentinel ({@link NodeConnection}) learns when the
   * node answers again; the guard's next probe then goes out, and the node counts again under
   * the guard's rules once it is answered.
   */
  private <V> CompletionStage<V> setAside() {
    backlog.otherRequestNotSent();
    NodeBacklog silent = backlog.isSilent() ? backlog : extensions.backlog();
    return CompletableFuture.failedFuture(new NodeStalledException(silent.refusal()));
  }

  /**
   * Whether the node is set aside as silent on either connection: a node that stopped answering
   * one connection stopped answering the other too, and a client that only holds leases
   * writes only on the connection of extensions, where it is seen first.
   */
  private boolean isSetAside() {
    return backlog.isSilent() || extensions.backlog().isSilent();
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

  /** The backlog of the node's connection of votes, for tests: what waits on it. */
  NodeBacklog backlog() {
    return backlog;
  }

  /** The run ids read on the connections of votes and of extensions, for tests. */
  List<String> processes() {
    return java.util.Arrays.asList(votes.process(), extensions.process());
  }

  /** The backlog of the node's connection of extensions, for tests. */
  NodeBacklog extensionBacklog() {
    return extensions.backlog();
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
    long number = votes.number();
    return new CountedVote<Long, Long>(backlog, size, LettuceNodeClient::fencedAnswer, false)
        .onNoScript(() -> notResent(Script.LOCK_FENCED, number))
        .follow(
            send(
                commands,
                votes.scripts(),
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
    long number = votes.number();
    return new CountedVote<Long, Boolean>(backlog, size, LettuceNodeClient::isOne, false)
        .onNoScript(() -> notResent(Script.FENCE, number))
        .follow(
            send(
                commands,
                votes.scripts(),
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

  /**
   * On the connection of extensions, by {@code EVAL}, after every extension sent before it to
   * this node (batches included): a shorter expiry ({@code Lease.releaseAfter}) never lands
   * before an extension sent ahead of it.
   */
  @Override
  public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
    RedisAsyncCommands<String, String> commands = extensions.commands();
    if (commands == null) {
      return notConnected();
    }
    long on = extensions.number(); // read before the check: see extendBatch
    if (!oneProcess()) {
      return notOneProcess();
    }
    NodeBacklog waiting = extensions.backlog();
    long size = size(keys, token, 20);
    if (!waiting.admit(size, false)) {
      return CompletableFuture.failedFuture(new NodeStalledException(waiting.refusal()));
    }
    return new CountedVote<Long, Boolean>(
            waiting,
            size,
            result -> {
              if (extensions.number() != on) {
                throw new IllegalStateException(MADE_AGAIN);
              }
              return isOne(result);
            },
            false)
        .follow(
            send(
                commands,
                null,
                -1,
                Script.EXTEND,
                keys.toArray(String[]::new),
                token,
                Long.toString(ttlMillis)));
  }

  /**
   * Why an extension answered on a connection made again after it was sent does not count: the
   * process that ran it was not read when it was sent.
   */
  static final String MADE_AGAIN =
      "the connection of extensions was made again while the extension was out";

  /** Where this node's auto-extension batches are encoded: shared by the transport's nodes. */
  BatchBody.Last encodedBatches() {
    return batches.encodedBatches();
  }

  /**
   * Single-key leases in scripts of up to {@link LettuceTransport#MAX_BATCH_KEYS}, by
   * {@code EVALSHA} once loaded, never re-sent (see {@link BatchedExtensions}); a lease on
   * several keys by {@link #extend}.
   */
  @Override
  public CompletionStage<List<Boolean>> extendBatch(List<io.redlock.spi.ExtendRequest> requests) {
    // The number is read before the check: a batch answered on a connection made again since
    // (its process not read when the batch was sent) fails (BatchedExtensions).
    long on = extensions.number();
    if (extensions.commands() != null && !oneProcess()) {
      return notOneProcess().thenApply(never -> java.util.Collections.<Boolean>emptyList());
    }
    return batches.send(
        extensions.commands(), on, requests, r -> extend(r.keys(), r.token(), r.ttlMillis()));
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
    long number = votes.number();
    if (!votes.scripts().isLoaded(Script.UNLOCK, number)) {
      // The node may not have the script: a release written once runs on its own, also if
      // the connection closes before the answer.
      return eval(commands, backlog, size, Script.UNLOCK, keys, token);
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
              if (votes.isClosed()) {
                return null; // no connection is left for it: the NOSCRIPT error stands
              }
              log.debug("node={} lost the release script, sending it with EVAL", name);
              votes.scriptLost(Script.UNLOCK, number); // EVAL until the node has it again
              return send(commands, votes.scripts(), -1, Script.UNLOCK, keyArray, token);
            })
        .follow(send(commands, votes.scripts(), number, Script.UNLOCK, keyArray, token));
  }

  /**
   * Runs {@code script} by {@code EVAL} on {@code commands}, counted in {@code waiting} (that
   * connection's backlog), never re-sent: see the class comment.
   */
  private static CompletionStage<Boolean> eval(
      RedisAsyncCommands<String, String> commands,
      NodeBacklog waiting,
      long size,
      Script script,
      List<String> keys,
      String... args) {
    return new CountedVote<Long, Boolean>(waiting, size, LettuceNodeClient::isOne, false)
        .follow(send(commands, null, -1, script, keys.toArray(String[]::new), args));
  }

  private static boolean isOne(Long result) {
    return result != null && result == 1L;
  }

  private RedisAsyncCommands<String, String> commands() {
    return votes.commands();
  }

  private CompletionStage<Boolean> notConnected() {
    return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
  }

  private static Throwable unwrap(Throwable error) {
    return NodeConnection.unwrap(error);
  }

  @Override
  public void close() {
    votes.close();
    extensions.close();
  }

  @Override
  public String toString() {
    return "LettuceNodeClient{" + name + "}";
  }
}
