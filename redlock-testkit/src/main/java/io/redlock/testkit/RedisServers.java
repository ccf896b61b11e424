package io.redlock.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fleet of independent, real redis-server processes on free loopback ports, for tests.
 *
 * <p>Safe on a shared machine: every server requires a password, random for each fleet
 * ({@link #password()}; the URIs handed out carry it), kept out of the command line that
 * {@code ps} shows, and its clients' users cannot run {@code MODULE}, {@code DEBUG} or
 * {@code CONFIG} but {@code CONFIG GET}: another user of the machine can neither use the
 * servers nor make them load code or write files. Only {@link #command} (the test kit's own
 * user) can reconfigure them.
 *
 * <p>Each server listens on {@code 127.0.0.1} (never on 6379), has its own temporary data
 * directory and, by default, keeps nothing on disk ({@code --save "" --appendonly no}), so a
 * {@linkplain #restart restarted} server comes back empty. Construction returns only once every
 * server answers PING, and faults are injected on purpose with intention-named methods:
 * {@link #kill}, {@link #stop}, {@link #pause}, {@link #resume} and {@link #restart}; each is
 * logged at INFO with the node index and port, and returns once the fault is in effect.
 *
 * <p>{@link #close()} kills every process the fleet started and deletes the data directories;
 * should a test never close it, a JVM shutdown hook still kills the processes.
 *
 * <pre>{@code
 * try (RedisServers redis = RedisServers.start(3)) {
 *     redis.command(0, "SET", "k", "v");
 *     redis.pause(1);
 *     ...
 * }
 * }</pre>
 *
 * <p>Thread-safe: methods may be called from several threads. Lifecycle calls on one node are
 * serialised by that node; {@link #command} takes no lock, so a thread waiting on a paused node
 * never blocks another thread from resuming it.
 *
 * @since 0.1.0
 */
public final class RedisServers implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RedisServers.class);

  private final List<RedisNode> nodes;
  private final List<Path> copies = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final TestCertificate certificate;
  private final ServerOptions options;

  private RedisServers(List<RedisNode> nodes, TestCertificate certificate, ServerOptions options) {
    this.nodes = List.copyOf(nodes);
    this.certificate = certificate;
    this.options = options;
  }

  /**
   * The password of the {@code default} user, random for each fleet: every server requires
   * it (or, for a fleet with an {@link Builder#aclUser ACL user}, that user's password), so
   * that other users of the machine cannot reach the servers. {@link #uri} and {@link #tlsUri}
   * carry it already.
   *
   * @return the password, 32 hex digits
   * @throws IllegalStateException for a fleet with an ACL user, whose {@code default} user is off
   */
  public String password() {
    if (options.hasAclUser()) {
      throw new IllegalStateException(
          "this fleet has the ACL user " + options.aclUser() + " and no default user");
    }
    return options.password();
  }

  /**
   * {@code plain} ({@code redis://host:port...}) with this fleet's {@code default} user's
   * password in it, for a fleet without an ACL user; else {@code plain} unchanged.
   */
  String withCredentials(String plain) {
    if (options.hasAclUser()) {
      return plain;
    }
    int schemeEnd = plain.indexOf("://") + 3;
    return plain.substring(0, schemeEnd)
        + ":"
        + options.password()
        + "@"
        + plain.substring(schemeEnd);
  }

  /**
   * The {@code rediss://} URI of node {@code i}'s TLS port, for a fleet started with
   * {@link Builder#tls(boolean) TLS}.
   *
   * @throws IllegalStateException if the fleet has no TLS
   */
  public String tlsUri(int i) {
    if (certificate == null) {
      throw new IllegalStateException("this fleet was started without TLS; see Builder.tls");
    }
    return withCredentials("rediss://" + host() + ":" + node(i).tlsPort());
  }

  /**
   * The fleet's self-signed certificate as a PEM file: what a client that verifies the servers
   * trusts, and (with {@link Builder#tlsClientAuth}) a client certificate they accept.
   *
   * @throws IllegalStateException if the fleet has no TLS
   */
  public java.nio.file.Path tlsCertificate() {
    if (certificate == null) {
      throw new IllegalStateException("this fleet was started without TLS; see Builder.tls");
    }
    return certificate.certificate();
  }

  /**
   * The private key of {@link #tlsCertificate()}, as an unencrypted PKCS#8 PEM file.
   *
   * @throws IllegalStateException if the fleet has no TLS
   */
  public java.nio.file.Path tlsPrivateKey() {
    if (certificate == null) {
      throw new IllegalStateException("this fleet was started without TLS; see Builder.tls");
    }
    return certificate.privateKey();
  }

  /**
   * A PKCS12 trust store (password {@code changeit}) holding the fleet's self-signed
   * certificate, for clients that verify the servers.
   *
   * @throws IllegalStateException if the fleet has no TLS
   */
  public java.nio.file.Path tlsTrustStore() {
    if (certificate == null) {
      throw new IllegalStateException("this fleet was started without TLS; see Builder.tls");
    }
    return certificate.trustStore();
  }

  /**
   * Starts {@code count} plain servers (no ACL user, no persistence) and waits until each
   * answers PING.
   *
   * @param count how many servers, at least 1
   * @return the running fleet, to be closed by the caller
   * @throws IllegalStateException if a server cannot be started; already started ones are
   *     killed before this is thrown
   */
  public static RedisServers start(int count) {
    return builder().count(count).start();
  }

  /**
   * Starts {@code count} plain servers, as {@link #start(int)}, and declares them fresh
   * ({@link #declareFresh()}): clients with the restart guard on count them at once.
   *
   * @param count how many servers, at least 1
   * @return the running fleet, to be closed by the caller
   */
  public static RedisServers startFresh(int count) {
    return builder().count(count).fresh(true).start();
  }

  /**
   * Returns a builder for a fleet with non-default options.
   *
   * @return a new builder, by default for one plain server
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns how many servers the fleet has (running or not).
   *
   * @return the number of servers
   */
  public int size() {
    return nodes.size();
  }

  /**
   * Returns the host every server listens on.
   *
   * @return {@code "127.0.0.1"}
   */
  public String host() {
    return ServerOptions.HOST;
  }

  /**
   * Returns the port of server {@code i}; it never changes, even across restarts.
   *
   * @param i the server index, from 0
   * @return the port
   */
  public int port(int i) {
    return node(i).port();
  }

  /**
   * Returns the URI of server {@code i}, with the fleet's {@link #password()} (a fleet with an
   * ACL user: without credentials, which the test gives).
   *
   * @param i the server index, from 0
   * @return a URI such as {@code redis://:5f0c...@127.0.0.1:40123}
   */
  public String uri(int i) {
    return withCredentials(address(i));
  }

  /**
   * Returns the URI of server {@code i} without credentials, as tools show a node:
   * {@code redis://127.0.0.1:40123}.
   *
   * @param i the server index, from 0
   * @return the URI without user or password
   */
  public String address(int i) {
    return "redis://" + host() + ":" + port(i);
  }

  /**
   * Returns the URIs of all servers, in index order, as {@link #uri(int)}.
   *
   * @return an immutable list of URIs such as {@code redis://:5f0c...@127.0.0.1:40123}
   */
  public List<String> uris() {
    List<String> uris = new ArrayList<>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      uris.add(uri(i));
    }
    return List.copyOf(uris);
  }

  /**
   * Returns the operating-system pid of server {@code i}'s current (or, once it is down, most
   * recent) process.
   *
   * @param i the server index, from 0
   * @return the pid
   */
  public long pid(int i) {
    return node(i).pid();
  }

  /**
   * Tells whether server {@code i}'s process exists; a paused server is still running.
   *
   * @param i the server index, from 0
   * @return {@code true} until the process is killed, stopped or the fleet is closed
   */
  public boolean isRunning(int i) {
    return node(i).isRunning();
  }

  /**
   * Tells whether server {@code i} is paused by {@link #pause} and not yet resumed.
   *
   * @param i the server index, from 0
   * @return {@code true} if its process is alive but stopped
   */
  public boolean isPaused(int i) {
    return node(i).isPaused();
  }

  /**
   * Crashes server {@code i} with SIGKILL and returns once the process has exited. Does
   * nothing if it is already down.
   *
   * @param i the server index, from 0
   */
  public void kill(int i) {
    node(i).kill();
  }

  /**
   * Shuts server {@code i} down gracefully with SIGTERM (resuming it first if paused) and
   * returns once it has exited; it is killed if it has not exited after 10 seconds.
   *
   * @param i the server index, from 0
   */
  public void stop(int i) {
    node(i).stop();
  }

  /**
   * Starts server {@code i} again on the same port, directory and options, and returns once it
   * answers PING. A server still running (paused or not) is killed first, as in a crash. The
   * restarted server is empty unless the fleet was built with {@code appendOnly(true)}.
   *
   * @param i the server index, from 0
   * @throws IllegalStateException if the port was taken meanwhile, the server does not come
   *     up, or the fleet is closed
   */
  public void restart(int i) {
    node(i).restart();
  }

  /**
   * Copies server {@code i}'s data files as they are on disk now (its AOF, or an RDB file left
   * by {@code SAVE}), as a backup or a file copy would: to be given to {@link #restartFrom}.
   * The copy lives in a folder of its own, deleted when the fleet is closed.
   *
   * @param i the server index, from 0
   * @return the folder that holds the copy
   */
  public Path copyData(int i) {
    try {
      Path copy = Files.createTempDirectory("redlock-redis-copy-" + i + "-");
      copies.add(copy);
      node(i).copyData(copy);
      return copy;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("Could not make a folder for a copy", e);
    }
  }

  /**
   * Kills server {@code i} and starts it again on the data files of {@code copy} (from {@link
   * #copyData}, of this server or another): a restored backup, or another node's data.
   *
   * @param i the server index, from 0
   * @param copy a folder {@link #copyData} returned
   */
  public void restartFrom(int i, Path copy) {
    node(i).restartWith(Objects.requireNonNull(copy, "copy"), List.of());
  }

  /**
   * Kills server {@code i} and starts it again on its own data files, with {@code options}
   * appended to its command line (for example {@code "--appendonly", "no"}), from now on: an
   * operator who changed a node's configuration file before a restart.
   *
   * @param i the server index, from 0
   * @param options redis-server command-line options, each name with its leading {@code --}
   */
  public void restartWith(int i, String... options) {
    node(i).restartWith(null, List.of(options));
  }

  /**
   * Freezes server {@code i} with SIGSTOP: its socket stays open but nothing is answered, as
   * with a long GC pause or a network partition. Returns once the process is stopped (observed
   * through {@code /proc} on Linux). Does nothing if already paused.
   *
   * @param i the server index, from 0
   * @throws IllegalStateException if the server is not running
   */
  public void pause(int i) {
    node(i).pause();
  }

  /**
   * Lets a {@linkplain #pause paused} server {@code i} continue with SIGCONT; it then answers
   * the commands queued meanwhile. Does nothing if it is not paused.
   *
   * @param i the server index, from 0
   * @throws IllegalStateException if the server is not running
   */
  public void resume(int i) {
    node(i).resume();
  }

  /**
   * Keeps node {@code i} busy for {@code duration} with {@code DEBUG SLEEP}, as a slow command
   * would: the process runs and accepts connections but answers nobody until the sleep ends.
   * Returns at once; the command goes out on a connection of its own, and the sleep starts
   * when the server reads it (a command already queued may still be answered first).
   */
  public void debugSleep(int i, Duration duration) {
    String seconds = String.format(java.util.Locale.ROOT, "%.3f", duration.toMillis() / 1000.0);
    LOG.info("Fault: DEBUG SLEEP {} s on redis node {} (port {})", seconds, i, port(i));
    Thread sleeper =
        new Thread(
            () -> {
              try {
                command(i, "DEBUG", "SLEEP", seconds);
              } catch (RuntimeException e) {
                // a sleep longer than the command timeout ends the call, not the sleep
                LOG.debug("DEBUG SLEEP on redis node {}: {}", i, e.getMessage());
              }
            },
            "redis-debug-sleep-" + i);
    sleeper.setDaemon(true);
    sleeper.start();
  }

  /**
   * Runs one Redis command on server {@code i} over a fresh connection (authenticated as the
   * ACL user, if the fleet has one) and returns the reply.
   *
   * <p>Replies map to: simple and bulk strings to {@link String}, integers to {@link Long},
   * arrays to {@code List<Object>}, nil to {@code null}.
   *
   * @param i the server index, from 0
   * @param args the command and its arguments, e.g. {@code "SET", "k", "v", "NX", "PX", "10000"}
   * @return the decoded reply
   * @throws RedisErrorReplyException if the server answers with an error reply
   * @throws java.io.UncheckedIOException if the server cannot be reached or does not answer
   *     within the command timeout (3 seconds unless configured), e.g. because it is paused;
   *     the cause is then a {@link java.net.SocketTimeoutException}
   */
  public Object command(int i, String... args) {
    return node(i).command(args);
  }

  /**
   * How many servers hold {@code key}, whatever its value ({@code GET} on each in turn).
   * Every server must be running and answering.
   *
   * @throws java.io.UncheckedIOException as {@link #command} does, if a server does not answer
   */
  public int holding(String key) {
    return countValues(key, value -> value != null);
  }

  /**
   * How many servers hold {@code value} under {@code key}, such as a lease's token under its
   * resource ({@code GET} on each in turn). Every server must be running and answering.
   *
   * @throws java.io.UncheckedIOException as {@link #command} does, if a server does not answer
   */
  public int holding(String key, String value) {
    return countValues(key, value::equals);
  }

  /**
   * Waits until every server holds {@code value} under {@code key}, for at most {@code atMost}
   * ({@link Timing#scaled scaled}); whether they all did. A lease is granted by a majority, and
   * its {@code SET} on a server may land after the decision, or never: a vote that timed out
   * before its request was written leaves that server without the key (as on a loaded
   * machine). A test that needs a lease on every server takes it again when this is false.
   *
   * @throws InterruptedException if the waiting thread is interrupted
   */
  public boolean awaitHeldByEvery(String key, String value, Duration atMost)
      throws InterruptedException {
    return within(atMost, () -> holding(key, value) == size());
  }

  /**
   * Waits until server {@code server} holds {@code value} under {@code key}, for at most
   * {@code atMost} ({@link Timing#scaled scaled}); whether it did. As {@link
   * #awaitHeldByEvery}, for a test that needs one server among those that granted.
   *
   * @throws InterruptedException if the waiting thread is interrupted
   */
  public boolean awaitHeldBy(int server, String key, String value, Duration atMost)
      throws InterruptedException {
    return within(atMost, () -> value.equals(command(server, "GET", key)));
  }

  private static boolean within(Duration atMost, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + Timing.scaled(atMost).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  private int countValues(String key, java.util.function.Predicate<Object> which) {
    int count = 0;
    for (int i = 0; i < size(); i++) {
      if (which.test(command(i, "GET", key))) {
        count++;
      }
    }
    return count;
  }

  /**
   * The key of the fresh marker for clients with {@code keyPrefix}: {@code keyPrefix +}
   * {@value #FRESH_MARKER_KEY_SUFFIX}. The same format as redlock-core's
   * {@code io.redlock.FreshMarker} (which this kit does not depend on); a contract test in
   * redlock-lettuce checks that the core accepts what this kit writes.
   */
  public static final String FRESH_MARKER_KEY_SUFFIX = "__redlock__:fresh";

  /** How a fresh marker's value begins; the {@code run_id} follows: {@value}. */
  public static final String FRESH_MARKER_VALUE_PREFIX = "redlock-fresh/1 run_id=";

  /**
   * Declares every running server fresh for clients without a key prefix, as
   * {@code redlock init} does: see {@link #declareFresh(int, String)}.
   */
  public void declareFresh() {
    for (int i = 0; i < nodes.size(); i++) {
      if (isRunning(i)) {
        declareFresh(i, "");
      }
    }
  }

  /**
   * Declares server {@code i}'s current process fresh: writes the fresh marker, bound to its
   * current {@code run_id}, so that a Redlock with the restart guard on counts it at once
   * instead of one {@code maxTtl} after it started. A later {@link #restart} draws a new
   * {@code run_id}: the marker stops matching (and is lost, unless the fleet persists).
   * Unlike {@code redlock init}, it does not look for lock keys first: tests know what
   * their servers hold.
   *
   * @param i the server index, from 0
   * @param keyPrefix the clients' key prefix, empty for none
   */
  public void declareFresh(int i, String keyPrefix) {
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    String info = String.valueOf(command(i, "INFO", "server"));
    String runId = null;
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("run_id:")) {
        runId = line.substring("run_id:".length()).trim();
      }
    }
    if (runId == null || runId.isEmpty()) {
      throw new IllegalStateException("redis node " + i + " reported no run_id");
    }
    command(i, "SET", keyPrefix + FRESH_MARKER_KEY_SUFFIX, FRESH_MARKER_VALUE_PREFIX + runId);
    LOG.info("Declared redis node {} (port {}) fresh: run_id {}", i, port(i), runId);
  }

  /** The data directory of server {@code i}; package-private for tests of this kit. */
  Path dir(int i) {
    return node(i).dir();
  }

  /**
   * Kills every server process this fleet started, waits for each to exit, and deletes the
   * data directories. Calling it again does nothing.
   */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (RedisNode node : nodes) {
      try {
        node.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (certificate != null) {
      certificate.delete();
    }
    for (Path copy : copies) {
      RedisNode.deleteTree(copy);
    }
    if (failure != null) {
      throw failure;
    }
  }

  private RedisNode node(int i) {
    return nodes.get(Objects.checkIndex(i, nodes.size()));
  }

  /**
   * Collects the options of a fleet before {@link #start()} launches it.
   *
   * <p>Not thread-safe: configure a builder from one thread. The fleets it starts are
   * independent of it.
   */
  public static final class Builder {

    private int count = 1;
    private String aclUser;
    private String aclPassword;
    private boolean appendOnly;
    private boolean tls;
    private boolean tlsClientAuth;
    private Duration commandTimeout = Duration.ofSeconds(3);
    private boolean fresh;

    private Builder() {}

    /**
     * Whether {@link #start()} declares every server fresh once it runs
     * ({@link RedisServers#declareFresh()}), so that clients with the restart guard on
     * and no key prefix count them at once. Default off: a fresh server is held back for
     * one {@code maxTtl}, as in production without {@code redlock init}.
     *
     * @param fresh whether to write the fresh marker after start
     * @return this builder
     */
    public Builder fresh(boolean fresh) {
      this.fresh = fresh;
      return this;
    }

    /**
     * Sets how many servers to start.
     *
     * @param count at least 1; default 1
     * @return this builder
     */
    public Builder count(int count) {
      if (count < 1) {
        throw new IllegalArgumentException("count must be at least 1, was " + count);
      }
      this.count = count;
      return this;
    }

    /**
     * Protects every server with an ACL user that has all permissions
     * ({@code on >password ~* &* +@all}) and switches the {@code default} user off, so
     * unauthenticated clients get {@code NOAUTH}. {@link RedisServers#command} still
     * authenticates as the test kit's own user.
     *
     * @param user the user name, without whitespace
     * @param password the password, not empty
     * @return this builder
     */
    public Builder aclUser(String user, String password) {
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(password, "password");
      if (user.isEmpty() || user.chars().anyMatch(Character::isWhitespace)) {
        throw new IllegalArgumentException(
            "ACL user name must be non-empty without whitespace: '" + user + "'");
      }
      if (user.equals("default")) {
        throw new IllegalArgumentException(
            "'default' is switched off by aclUser; choose another name");
      }
      if (password.isEmpty()) {
        throw new IllegalArgumentException("ACL password must not be empty");
      }
      this.aclUser = user;
      this.aclPassword = password;
      return this;
    }

    /**
     * Turns the append-only file on ({@code appendfsync always}) so a restarted server keeps
     * its data, or off (the default) so it comes back empty.
     *
     * @param appendOnly whether to persist writes in an AOF
     * @return this builder
     */
    /**
     * Whether each server also listens with TLS on a second port ({@link #tlsUri}), with a
     * self-signed certificate for 127.0.0.1 made by the JDK's keytool. The plain port stays
     * open. Default off.
     */
    public Builder tls(boolean tls) {
      this.tls = tls;
      return this;
    }

    /**
     * With {@link #tls(boolean) TLS}: whether the TLS port requires a client certificate
     * signed by the fleet's certificate ({@code tls-auth-clients yes}, Redis's default), such
     * as the fleet's own ({@link RedisServers#tlsCertificate()},
     * {@link RedisServers#tlsPrivateKey()}). Default off.
     */
    public Builder tlsClientAuth(boolean tlsClientAuth) {
      this.tlsClientAuth = tlsClientAuth;
      return this;
    }

    public Builder appendOnly(boolean appendOnly) {
      this.appendOnly = appendOnly;
      return this;
    }

    /**
     * Sets how long {@link RedisServers#command} waits to connect and for each reply before
     * giving up; keep it above any {@code DEBUG SLEEP} the test issues.
     *
     * @param timeout a positive duration; default 3 seconds
     * @return this builder
     */
    public Builder commandTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isZero() || timeout.isNegative()) {
        throw new IllegalArgumentException("commandTimeout must be positive, was " + timeout);
      }
      this.commandTimeout = timeout;
      return this;
    }

    /**
     * Starts the servers and waits until each answers PING.
     *
     * @return the running fleet, to be closed by the caller
     * @throws IllegalStateException if a server cannot be started (the message includes the
     *     tail of its log); servers already started are killed first
     */
    public RedisServers start() {
      TestCertificate certificate = null;
      if (tls) {
        try {
          certificate =
              TestCertificate.create(java.nio.file.Files.createTempDirectory("redlock-tls-"));
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException("could not create a directory for TLS files", e);
        }
      }
      ServerOptions options =
          new ServerOptions(
              aclUser,
              aclPassword,
              appendOnly,
              commandTimeout,
              certificate,
              tlsClientAuth,
              ServerOptions.randomPassword(),
              ServerOptions.randomPassword());
      List<RedisNode> started = new ArrayList<>(count);
      try {
        for (int i = 0; i < count; i++) {
          started.add(RedisNode.start(i, options));
        }
      } catch (RuntimeException | Error e) {
        started.forEach(RedisNode::close);
        throw e;
      }
      RedisServers fleet = new RedisServers(started, certificate, options);
      if (fresh) {
        try {
          fleet.declareFresh();
        } catch (RuntimeException | Error e) {
          fleet.close();
          throw e;
        }
      }
      LOG.info(
          "Started {} redis-server(s) on {}{}{}",
          count,
          java.util.stream.IntStream.range(0, count).mapToObj(fleet::address).toList(),
          appendOnly ? " with AOF" : "",
          aclUser != null ? " with ACL user " + aclUser : "");
      return fleet;
    }
  }
}
