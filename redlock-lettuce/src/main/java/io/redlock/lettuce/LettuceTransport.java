package io.redlock.lettuce;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.TlsSettings;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.NodeTransport;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default transport: two Lettuce connections per node, one for votes, releases and the
 * restart guard's requests and one for extensions (see {@link #LettuceTransport()} for the
 * client resources, event loops and timers, they run on), for {@code redis://} and {@code
 * rediss://} (TLS) URIs with optional ACL user, password and database index.
 *
 * <p>Commands fail at once while a node is disconnected instead of queueing for a reconnect,
 * and are never replayed after one. Every vote is bounded by the node timeout (the algorithm's
 * own timer); which commands Lettuce times out as well is said in {@link CommandTimeouts}. Found by
 * {@link java.util.ServiceLoader}; {@link io.redlock.Redlock#create(RedlockConfig)} uses it
 * without being asked.
 *
 * <p>What waits on each connection to a node is bounded ({@link #MAX_PENDING_REQUESTS}, {@link
 * #MAX_PENDING_BYTES}, {@link #MAX_PENDING_BATCH_BYTES}, and Lettuce's {@code requestQueueSize}
 * for the whole connection), and a node that stops answering is set aside, on each connection ({@link #STALLED_AFTER}): past a bound or while set
 * aside, its votes fail at once as {@link io.redlock.NodeOutcome.Vote#STALLED}, and releases
 * past twice the bound are not sent (their keys expire with the ttl). TCP keepalive and {@code
 * TCP_USER_TIMEOUT} close a connection to a host that vanished.
 *
 * <p>Flushes are consolidated (see {@link #consolidatingFlushes(NettyCustomizer)}): requests
 * that many threads send to one node while its event loop is busy leave in one write, not one
 * system call each. Resources passed in by the caller get this only if they were built with
 * that customizer.
 *
 * <p>Thread-safe.
 *
 * @since 0.1.0
 */
public final class LettuceTransport implements NodeTransport {

  private static final Logger log = LoggerFactory.getLogger(LettuceTransport.class);
  private static final Set<String> SCHEMES = Set.of("redis", "rediss");

  /**
   * The most requests that may wait on one node for its answer when a vote request (lock,
   * extend, fence) is sent: {@value}; a release or an undo is sent while fewer than twice as
   * many wait. Past it, the request is not sent and its vote fails at once as {@code STALLED};
   * see {@link io.redlock.NodeOutcome.Vote#STALLED} and docs/configuration.md.
   */
  public static final int MAX_PENDING_REQUESTS = 1024;

  /**
   * The same in bytes (the characters of the requests' keys and arguments, plus 64 per
   * request): 4 MiB for a vote request, twice that for a release or an undo.
   */
  public static final long MAX_PENDING_BYTES = 4L << 20;

  /**
   * The bytes of batches of extensions ({@link NodeClient#extendBatch}) that may wait on one
   * node, in a budget of their own beside {@link #MAX_PENDING_BYTES}: 16 MiB, the extensions
   * of about 250,000 leases (a key of 40 characters and a token of 22 each) in flight on a
   * node. Each batch also counts as one request towards {@link #MAX_PENDING_REQUESTS}. Past it,
   * a batch is not sent and the votes of its leases fail at once as {@code STALLED}.
   */
  public static final long MAX_PENDING_BATCH_BYTES = 16L << 20;

  /**
   * The most leases one script extends on one node when the auto-extension sends a batch
   * ({@link NodeClient#extendBatch}): {@value}. A batch of more leases goes as several
   * scripts; a lease on several keys goes as an extension of its own. A script this long
   * keeps its node busy for about a millisecond (other clients' requests wait that long),
   * and counts in the node's backlog as one request of its size.
   */
  public static final int MAX_BATCH_KEYS = 1000;

  /**
   * When at least this many vote requests in a row got no answer within the node timeout (a
   * batch of extensions: within its wait) or were refused by a bound above, over at least {@link #STALLED_AFTER_TIME} from the first
   * of them, with no answer from the node in between, the node is set aside: its votes fail
   * at once as {@code STALLED} (releases and undos are still sent while their bound allows)
   * until it answers a {@code PING}. {@value}.
   */
  public static final int STALLED_AFTER = 3;

  /** See {@link #STALLED_AFTER}: 1 s. */
  public static final Duration STALLED_AFTER_TIME = Duration.ofSeconds(1);

  /**
   * Lettuce's own bound on the commands one connection holds ({@code requestQueueSize}): the
   * votes' bound plus room for the restart guard's probes, the script load and the sentinel.
   * Each of a node's two connections has it, as each has the bounds above.
   * A command past it fails at once: nothing on a connection grows without end.
   */
  static final int LETTUCE_QUEUE_SIZE = 2 * MAX_PENDING_REQUESTS + 256;

  /**
   * How long written data may stay unacknowledged before the kernel closes the connection
   * ({@code TCP_USER_TIMEOUT}, with the native epoll transport): 2 minutes, instead of the 15
   * minutes or so of retransmissions to a host that vanished. Not shorter: a stopped process
   * whose socket buffer is full counts as unacknowledged too, and closing its connection
   * gains nothing (its votes already fail at once, see {@link #STALLED_AFTER}) while it delays
   * its return (a reconnect to a stopped process waits for the connect timeout, then backs off)
   * and lets requests it had not read run after those of the next connection
   * (docs/safety.md, "A stalled node").
   */
  public static final Duration TCP_USER_TIMEOUT = Duration.ofMinutes(2);

  /**
   * TCP keepalive on every connection: the first probe after this much idle time, then
   * {@link #KEEPALIVE_INTERVAL} apart, {@link #KEEPALIVE_PROBES} unanswered probes close the
   * connection (where Lettuce can set these on the socket; the system's settings otherwise):
   * 10 s.
   */
  public static final Duration KEEPALIVE_IDLE = Duration.ofSeconds(10);

  /** Time between keepalive probes: 2 s. */
  public static final Duration KEEPALIVE_INTERVAL = Duration.ofSeconds(2);

  /** Unanswered keepalive probes that close a connection: {@value}. */
  public static final int KEEPALIVE_PROBES = 3;

  /**
   * The longest wait between two attempts to connect again to a node whose connection was lost,
   * on the transport's own resources: {@code 1 s} ({@link #reconnectDelay}).
   */
  public static final Duration MOST_RECONNECT_DELAY = Duration.ofSeconds(1);

  /**
   * The event-loop threads of the connections of extensions, when the transport makes its own
   * resources: {@value}.
   */
  static final int EXTENSION_IO_THREADS = 2;

  private final ClientResources resources;
  private final ClientResources extensionResources;
  private final boolean ownsResources;

  /** The last auto-extension batch encoded: a batch goes to every node, encoded once. */
  private final BatchBody.Last encoded = new BatchBody.Last();

  /**
   * A transport with client resources of its own, freed by {@link #close()}: one set for the
   * connections of votes, and one, of {@value #EXTENSION_IO_THREADS} event-loop threads, for
   * the connections of extensions, so that a lock's answer is never read after a batch's
   * thousand answers on the same thread.
   */
  public LettuceTransport() {
    this(
        DefaultClientResources.builder()
            .nettyCustomizer(consolidatingFlushes(null))
            .reconnectDelay(reconnectDelay())
            .build(),
        DefaultClientResources.builder()
            .ioThreadPoolSize(EXTENSION_IO_THREADS)
            .computationThreadPoolSize(1)
            .nettyCustomizer(consolidatingFlushes(null))
            .reconnectDelay(reconnectDelay())
            .build(),
        true);
  }

  /**
   * Lettuce's waits between attempts to connect again to a node whose connection was lost, on
   * the transport's own resources: 1, 2, 4 ms and so on, as Lettuce's default, but at most
   * {@link #MOST_RECONNECT_DELAY}, a probe interval, where Lettuce's default grows to 30 s. A
   * node is a vote of the quorum: with the default, a node that came back after an outage of
   * 20 s was reached again about 15 s later, a node fewer for the quorum meanwhile. A client
   * tries a node that is down once a second, a refused connection at most. For resources
   * shared with this transport: {@code DefaultClientResources.builder().reconnectDelay(
   * LettuceTransport.reconnectDelay())}.
   */
  public static Delay reconnectDelay() {
    return Delay.exponential(Duration.ZERO, MOST_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS);
  }

  /** The client resources of the connections of extensions. */
  ClientResources extensionResources() {
    return extensionResources;
  }

  /**
   * A transport over client resources the caller shares with its own Lettuce clients: both
   * connections of each node (votes, extensions) run on them, and their reconnect delay
   * applies: Lettuce's default grows to 30 s, {@link #reconnectDelay} stops at 1 s as the
   * transport's own resources do.
   */
  public LettuceTransport(ClientResources resources) {
    this(resources, resources, false);
  }

  /**
   * A customizer that puts Netty's {@link FlushConsolidationHandler} in front of every
   * connection, then runs {@code next} (may be {@code null}). With it, a flush asked for while
   * other writes wait in the event loop's queue is deferred until they are written, and one
   * system call sends them all; a lone request is written as soon as the loop is free, so
   * latency does not suffer. Meant for {@link DefaultClientResources.Builder#nettyCustomizer}
   * when sharing resources with this transport:
   *
   * <pre>{@code
   * ClientResources resources = DefaultClientResources.builder()
   *     .nettyCustomizer(LettuceTransport.consolidatingFlushes(null))
   *     .build();
   * }</pre>
   */
  public static NettyCustomizer consolidatingFlushes(NettyCustomizer next) {
    return new NettyCustomizer() {
      @Override
      public void afterBootstrapInitialized(Bootstrap bootstrap) {
        if (next != null) {
          next.afterBootstrapInitialized(bootstrap);
        }
      }

      @Override
      public void afterChannelInitialized(Channel channel) {
        // First in the pipeline (next to the socket): it sees every flush and every read.
        channel
            .pipeline()
            .addFirst(
                new FlushConsolidationHandler(
                    FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
        if (next != null) {
          next.afterChannelInitialized(channel);
        }
      }
    };
  }

  private LettuceTransport(
      ClientResources resources, ClientResources extensionResources, boolean ownsResources) {
    this.resources = resources;
    this.extensionResources = extensionResources;
    this.ownsResources = ownsResources;
  }

  /** The client resources every connection of this transport uses. */
  ClientResources resources() {
    return resources;
  }

  @Override
  public boolean supports(URI uri) {
    return uri.getScheme() != null && SCHEMES.contains(uri.getScheme().toLowerCase(Locale.ROOT));
  }

  @Override
  public NodeClient open(NodeSettings node) {
    String uri = withLowerCaseScheme(node.uri());
    RedisURI redisUri;
    try {
      redisUri = RedisURI.create(uri);
    } catch (RuntimeException e) {
      throw new RedlockConfigException(
          "node "
              + node.name()
              + " is not accepted: it must be a URI such as redis://[user:password@]host[:port][/db]"
              + " or rediss:// for TLS");
    }
    URI parsed = URI.create(uri);
    if (parsed.getUserInfo() == null && node.password() != null) {
      // The one way to set credentials that Lettuce 6.x (pinned by Spring Boot 3.5 and 4.0)
      // and 7.x both have: 7 removed setUsername/setPassword, 6 lacks setAuthentication.
      redisUri.setCredentialsProvider(
          new StaticCredentialsProvider(RedisCredentials.just(node.username(), node.password())));
    } else if (parsed.getUserInfo() != null) {
      redisUri.setCredentialsProvider(readableAtOnce(redisUri));
    }
    // Bounds the connection handshake (HELLO, AUTH, SELECT); commands: see CommandTimeouts.
    redisUri.setTimeout(node.connectTimeout());
    withoutClientSetinfo(redisUri);
    ClientOptions.Builder options = ClientOptions.builder();
    if (redisUri.isSsl()) {
      tls(node, redisUri, options);
    }
    if (Lettuce7.PRESENT) {
      Lettuce7.withoutMaintNotifications(options);
    }
    ClientOptions clientOptions =
        options
            .autoReconnect(true)
            // A lock request that waits for a reconnect is worse than a failed vote: by the time
            // it runs, the attempt it belonged to was decided long ago.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            // Never re-send a command after a reconnect: the algorithm decided without it long
            // ago, and a lock or extension replayed after its release would leave a key behind.
            .replayFilter(command -> true)
            // The backstop: whatever a node does, one connection holds a bounded number of
            // commands (NodeBacklog bounds the votes below it, with a reason).
            .requestQueueSize(LETTUCE_QUEUE_SIZE)
            .timeoutOptions(
                TimeoutOptions.builder()
                    .timeoutSource(new CommandTimeouts(node.nodeTimeout()))
                    .build())
            .socketOptions(
                SocketOptions.builder()
                    .connectTimeout(node.connectTimeout())
                    .tcpNoDelay(true)
                    // A host that vanished (powered off, behind a firewall that drops packets)
                    // is noticed in seconds, and its connection closed and re-opened.
                    .keepAlive(
                        SocketOptions.KeepAliveOptions.builder()
                            .enable()
                            .idle(KEEPALIVE_IDLE)
                            .interval(KEEPALIVE_INTERVAL)
                            .count(KEEPALIVE_PROBES)
                            .build())
                    .tcpUserTimeout(
                        SocketOptions.TcpUserTimeoutOptions.builder()
                            .enable()
                            .tcpUserTimeout(TCP_USER_TIMEOUT)
                            .build())
                    .build())
            .build();
    LettuceNodeClient opened =
        new LettuceNodeClient(
            node.name(),
            redisUri,
            parts(node.name(), resources, clientOptions),
            parts(node.name() + " extensions", extensionResources, clientOptions),
            encoded);
    opened.connect();
    return opened;
  }

  /** A client of its own on {@code on}, and a backlog, for one connection to a node. */
  private static NodeConnection.Parts parts(
      String name, ClientResources on, ClientOptions options) {
    RedisClient client = new LazySyncRedisClient(on);
    client.setOptions(options);
    NodeBacklog backlog =
        new NodeBacklog(
            name,
            MAX_PENDING_REQUESTS,
            MAX_PENDING_BYTES,
            MAX_PENDING_BATCH_BYTES,
            STALLED_AFTER,
            STALLED_AFTER_TIME.toNanos(),
            System::nanoTime);
    return new NodeConnection.Parts(client, on, backlog);
  }

  /**
   * Applies {@link TlsSettings} to a {@code rediss://} node: refuses a URI that switches
   * certificate checks off unless allowed (then a WARN), and trusts the given certificates for
   * this connection only, presenting the client certificate if one is given.
   */
  private static void tls(NodeSettings node, RedisURI redisUri, ClientOptions.Builder options) {
    TlsSettings tls = node.tls();
    if (redisUri.getVerifyMode() == SslVerifyMode.NONE) {
      if (!tls.allowUnverified()) {
        throw new RedlockConfigException(
            "node "
                + node.name()
                + " has verifyPeer=NONE, which switches TLS certificate checks off: anyone on"
                + " the path can pose as the node, read the password and grant or deny locks;"
                + " trust the node's CA with tls.trustedCertificates instead, or accept the"
                + " risk with tls.allowUnverified(true)");
      }
      log.warn(
          "node={} TLS certificate checks are off (verifyPeer=NONE, allowed by"
              + " tls.allowUnverified): anyone on the path can pose as this node",
          node.name());
    }
    if (!tls.customizesConnections()) {
      return; // the JVM's default trust store, no client certificate
    }
    SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
    if (tls.trustedCertificates() != null) {
      ssl.trustManager(tls.trustedCertificates().toFile());
    } else if (tls.trustManagerFactory() != null) {
      ssl.trustManager(tls.trustManagerFactory());
    }
    if (tls.clientCertificateChain() != null) {
      ssl.keyManager(tls.clientCertificateChain().toFile(), tls.clientPrivateKey().toFile(), null);
    } else if (tls.keyManagerFactory() != null) {
      ssl.keyManager(tls.keyManagerFactory());
    }
    if (!tls.protocols().isEmpty()) {
      ssl.protocols(tls.protocols().toArray(new String[0]));
    }
    if (!tls.cipherSuites().isEmpty()) {
      ssl.cipherSuites(tls.cipherSuites().toArray(new String[0]));
    }
    options.sslOptions(ssl.build());
  }

  /**
   * What only Lettuce 7 has, in a class of its own: it is loaded (and its Lettuce 7 types
   * resolved) only when {@link #PRESENT} says they exist, so Lettuce 6 (pinned by Spring Boot
   * 3.5 and 4.0) never meets them.
   */
  static final class Lettuce7 {
    static final boolean PRESENT = present("io.lettuce.core.MaintNotificationsConfig");

    private Lettuce7() {}

    /**
     * No {@code CLIENT MAINT_NOTIFICATIONS} on connect (Lettuce 7 sends it by default): the
     * least-privilege user has no {@code CLIENT}, and each refusal would be an ACL log entry.
     * Maintenance notifications serve Redis Enterprise/Cloud endpoint moves, which a lock
     * node's connection does not follow anyway (a vote never waits for a reconnect).
     */
    static void withoutMaintNotifications(ClientOptions.Builder options) {
      options.maintNotificationsConfig(io.lettuce.core.MaintNotificationsConfig.disabled());
    }

    private static boolean present(String name) {
      try {
        Class.forName(name, false, LettuceTransport.class.getClassLoader());
        return true;
      } catch (ClassNotFoundException e) {
        return false;
      }
    }
  }

  /**
   * Keeps Lettuce from sending {@code CLIENT SETINFO lib-name/lib-ver} on each connect: the
   * least-privilege user does not need {@code CLIENT}, and a refused {@code SETINFO} (ignored
   * by Lettuce) would add an entry to the node's ACL log on every connection. Redis before 7.2
   * has no {@code SETINFO} at all. An empty name and version are what Lettuce 6.3+ and 7
   * read as "send nothing".
   */
  /**
   * The credentials of a URI that carries them ({@code redis://user:password@host}), in a
   * provider Lettuce reads at once. Lettuce keeps such credentials in a provider it resolves
   * off the event loop (a thread of the common pool): the handshake then ends on that thread,
   * and the connection is reported made before it is active, so the first requests (the script
   * loads, a lock) were rejected as "not connected" (Lettuce 7.7, on this 2-core machine about
   * one connection in 30). Read at once, the handshake stays on the event loop, and the
   * connection is active when it is reported made.
   */
  private static StaticCredentialsProvider readableAtOnce(RedisURI uri) {
    RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
    return new StaticCredentialsProvider(credentials);
  }

  private static void withoutClientSetinfo(RedisURI uri) {
    uri.setLibraryName("");
    uri.setLibraryVersion("");
  }

  /**
   * {@code uri} with its scheme in lower case, whatever the default locale: Lettuce accepts
   * only {@code redis} and {@code rediss} as written, while a URI's scheme has no case
   * ({@code REDISS://} is {@code rediss://}, and under a Turkish locale a plain
   * {@code toLowerCase()} would make it {@code redıss}).
   */
  static String withLowerCaseScheme(String uri) {
    int end = uri.indexOf("://");
    if (end <= 0) {
      return uri;
    }
    return uri.substring(0, end).toLowerCase(Locale.ROOT) + uri.substring(end);
  }

  @Override
  public void close() {
    if (ownsResources) {
      var votes = resources.shutdown(0, 2, TimeUnit.SECONDS);
      var extensions = extensionResources.shutdown(0, 2, TimeUnit.SECONDS);
      votes.awaitUninterruptibly(3, TimeUnit.SECONDS);
      extensions.awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
  }
}
