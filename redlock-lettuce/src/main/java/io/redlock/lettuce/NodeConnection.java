package io.redlock.lettuce;

import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.resource.ClientResources;
import io.redlock.RedlockConfigException;
import io.redlock.spi.Refusals;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Lettuce connection to a node, with what belongs to that connection alone: the requests
 * that wait on it ({@link NodeBacklog}, whose order is this connection's order), the scripts
 * the node answered {@code SCRIPT LOAD} for on it ({@link RoundScripts}), its count of lost
 * connections, and the sentinel that asks a silent node whether it answers again.
 *
 * <p>The first connection is retried in the background with a growing delay until it succeeds
 * (Lettuce reconnects by itself only once a connection existed); meanwhile requests fail at
 * once. Each new connection first sends {@code SCRIPT LOAD} of the scripts given, then {@code
 * INFO server} for the run id of the process behind it ({@link #process()}); a script goes by
 * {@code EVALSHA} on this connection only once the node answered its load on it.
 *
 * <p>Note on concurrency: {@code connection} is written once, by the connect callback, and read
 * without locking. {@code number} is raised only by the disconnect listener, on the
 * connection's event loop. A request that reads it just before a disconnect fails at once
 * while disconnected, or is written by {@code EVALSHA} on the next connection ahead of its
 * load: then the node answers {@code NOSCRIPT} (see {@link LettuceNodeClient}).
 *
 * <p>Each connection has a {@link RedisClient} of its own: Lettuce tells a client's listeners
 * about every connection of that client, and what a lost connection resets is this one's.
 */
final class NodeConnection {
  private static final Logger log = LoggerFactory.getLogger(NodeConnection.class);
  private static final Duration FIRST_RETRY = Duration.ofMillis(100);
  private static final Duration LAST_RETRY = Duration.ofSeconds(5);

  /** How soon a sentinel that could not be sent is tried again. */
  private static final Duration SENTINEL_RETRY = Duration.ofMillis(200);

  /** How soon the process behind a connection is asked again after an error reply. */
  private static final Duration PROCESS_RETRY = Duration.ofMillis(500);

  /** {@link #process()} of a node that refuses {@code INFO server} (an ACL without it). */
  static final String UNREADABLE = "?";

  private final String name;
  private final RedisClient client;
  private final RedisURI uri;
  private final ClientResources resources;
  private final NodeBacklog backlog;
  private final List<Script> loadFirst;
  private final RoundScripts scripts = new RoundScripts();
  private final CompletableFuture<Void> connected = new CompletableFuture<>();
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean closed;

  /**
   * Counts the connections: raised each time one is lost. Compared with the connection of each
   * script's load ({@code scripts}) to tell whether the current connection's node has it.
   */
  private volatile long number;

  private Duration retryDelay = FIRST_RETRY;

  /**
   * The run id of the process behind the current connection, read by {@code INFO server} right
   * after the script loads of each new connection: {@code null} until answered and from the
   * moment the connection is lost.
   */
  private volatile String process;

  private final Runnable processRead;

  /**
   * What a connection is made with: a client of its own (configured), the resources that client
   * runs on, and the backlog of this connection.
   */
  record Parts(RedisClient client, ClientResources resources, NodeBacklog backlog) {}

  /**
   * @param name the node and, for a connection other than the node's first, what it carries
   *     ("n1 extensions"): for logs and errors
   * @param loadFirst the scripts loaded on each new connection, before anything else is sent
   * @param lost run each time the connection is lost, before Lettuce reconnects
   * @param processRead run each time the process behind a new connection was read
   */
  NodeConnection(
      String name,
      RedisURI uri,
      Parts parts,
      List<Script> loadFirst,
      Runnable lost,
      Runnable processRead) {
    this.name = name;
    this.client = parts.client();
    this.uri = uri;
    this.resources = parts.resources();
    this.backlog = parts.backlog();
    this.loadFirst = List.copyOf(loadFirst);
    this.processRead = processRead;
    backlog.onSilent(this::sendSentinelSoon);
    client.addListener(
        new RedisConnectionStateListener() {
          @Override
          public void onRedisConnected(RedisChannelHandler<?, ?> channel, SocketAddress address) {
            // A reconnect may reach a new process with an empty script cache: scripts go by
            // EVAL until the node answered these loads (the disconnect raised the number).
            StatefulRedisConnection<String, String> conn = connection;
            if (conn != null && conn == channel) {
              loadScripts(conn);
              readProcess(conn);
            }
          }

          @Override
          public void onRedisDisconnected(RedisChannelHandler<?, ?> channel) {
            process = null;
            number++;
            // Lettuce drained every request of the lost connection: the backlog starts clean.
            backlog.connectionLost();
            // Called as the channel goes inactive, before Lettuce reconnects.
            lost.run();
          }
        });
  }

  /**
   * Completes once connected the first time and the process behind the connection read; fails
   * with the first attempt's failure.
   */
  CompletionStage<Void> connected() {
    return connected;
  }

  /** The connection's commands, {@code null} while it was never connected. */
  RedisAsyncCommands<String, String> commands() {
    StatefulRedisConnection<String, String> conn = connection;
    return conn == null ? null : conn.async();
  }

  /** The current connection's number (see {@link RoundScripts}). */
  long number() {
    return number;
  }

  NodeBacklog backlog() {
    return backlog;
  }

  RoundScripts scripts() {
    return scripts;
  }

  boolean isClosed() {
    return closed;
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
                readProcess(conn); // completes connected once answered
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

  /**
   * Sends {@code SCRIPT LOAD} of each script to load on {@code conn}, before anything else is
   * written on it. Once the node answers one, that script goes by {@code EVALSHA} on this
   * connection; a node that refuses them (an ACL) gets them by {@code EVAL}.
   */
  private void loadScripts(StatefulRedisConnection<String, String> conn) {
    for (Script script : loadFirst) {
      loadScript(conn, script);
    }
  }

  private void loadScript(StatefulRedisConnection<String, String> conn, Script script) {
    long loadedOn = number;
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
              } else if (loadedOn == number && script.sha1().equals(sha)) {
                scripts.loaded(script, loadedOn);
              }
            });
  }

  /**
   * The run id of the process behind the current connection ({@link #UNREADABLE} where the
   * node refuses {@code INFO server}), {@code null} while not known: not answered yet, or the
   * connection was lost.
   */
  String process() {
    return process;
  }

  /**
   * {@code INFO} as this class sends it: on the wire Lettuce's own, but a type of its own, so
   * that {@link CommandTimeouts} leaves it without a Lettuce timeout. It is sent once per
   * connection and answered when the node answers: a stopped node gets one, not one more every
   * timeout (a timed-out command stays in Lettuce's stack until answered).
   */
  enum ProcessQuery implements ProtocolKeyword {
    INFO;

    private final byte[] bytes = name().getBytes(StandardCharsets.US_ASCII);

    @Override
    public byte[] getBytes() {
      return bytes;
    }
  }

  /**
   * Asks {@code INFO server} on {@code conn}, written right after its script loads, and keeps
   * the run id while the connection is the same. An error reply the node may stop giving
   * ({@code BUSY}, {@code LOADING}) is asked again a moment later; a refusal ({@link
   * Refusals}: an ACL denial, an unknown command) or a reply without a run id leaves the
   * process {@link #UNREADABLE}.
   */
  private void readProcess(StatefulRedisConnection<String, String> conn) {
    long readOn = number;
    conn.async()
        .dispatch(
            ProcessQuery.INFO,
            new ValueOutput<>(ExactUtf8Codec.UTF8),
            new CommandArgs<>(ExactUtf8Codec.UTF8).add("server"))
        .whenComplete(
            (text, error) -> {
              if (readOn != number || closed) {
                return; // lost meanwhile: the next connection asks for itself
              }
              Throwable cause = unwrap(error);
              if (cause == null) {
                process = runId(text);
              } else if (cause instanceof io.lettuce.core.RedisCommandExecutionException
                  && Refusals.isRefusal(cause)) {
                log.debug("node={} refused INFO: its process is not compared", name);
                process = UNREADABLE;
              } else if (cause instanceof io.lettuce.core.RedisCommandExecutionException) {
                resources
                    .eventExecutorGroup()
                    .schedule(
                        () -> {
                          if (readOn == number && !closed) {
                            readProcess(conn);
                          }
                        },
                        PROCESS_RETRY.toMillis(),
                        TimeUnit.MILLISECONDS);
                return;
              } else {
                return; // not answered: the connection is lost, and the next one asks again
              }
              connected.complete(null);
              processRead.run();
            });
  }

  private String runId(String info) {
    try {
      return InfoReplies.field(info, "run_id");
    } catch (RuntimeException e) {
      log.warn("node={} answered INFO server without a run id: its process is not compared", name);
      return UNREADABLE;
    }
  }

  /**
   * The node answered {@code NOSCRIPT} to {@code script} sent on connection {@code lostOn}: it
   * goes by {@code EVAL} until the node has it again, and is loaded again (once, by whichever
   * request heard it first) while the connection is still the current one.
   */
  void scriptLost(Script script, long lostOn) {
    if (!closed && scripts.forget(script, lostOn) && lostOn == number) {
      log.debug("node={} lost the {} script, loading it again", name, script.name());
      StatefulRedisConnection<String, String> conn = connection;
      if (conn != null) {
        loadScript(conn, script);
      }
    }
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
   * Sends one {@code PING} on a connection whose node is set aside as silent, to learn when it
   * answers again (see {@link NodeBacklog}); sends another when a request handed over after it
   * was cut off, and tries again a moment later when it could not be sent. Stops once the node
   * is back, the connection is lost (the backlog starts clean then) or this is closed.
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
    long sentOn = number;
    long before = backlog.position();
    commands
        .ping()
        .whenComplete(
            (pong, error) -> {
              if (sentOn != number) {
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

  /** Closes the connection; the client's bookkeeping finishes in the background. */
  void close() {
    closed = true;
    StatefulRedisConnection<String, String> conn = connection;
    if (conn != null) {
      conn.close();
    }
    // What is left is bookkeeping, which need not hold up the caller (several nodes close one
    // after the other).
    client.shutdownAsync(0, 2, TimeUnit.SECONDS);
  }

  static Throwable unwrap(Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  static String describe(Throwable error) {
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
  public String toString() {
    return "NodeConnection{" + name + "}";
  }
}
