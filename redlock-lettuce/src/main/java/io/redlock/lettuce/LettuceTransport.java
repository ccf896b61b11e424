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
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default transport: one Lettuce connection per node over one set of shared client
 * resources (event loops, timers), for {@code redis://} and {@code rediss://} (TLS) URIs with
 * optional ACL user, password and database index.
 *
 * <p>Commands fail at once while a node is disconnected instead of queueing for a reconnect,
 * and are never replayed after one. Every vote is bounded by the node timeout (the algorithm's
 * own timer); which commands Lettuce times out as well is said in {@link CommandTimeouts}. Found by
 * {@link java.util.ServiceLoader}; {@link io.redlock.Redlock#create(RedlockConfig)} uses it
 * without being asked.
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

  private final ClientResources resources;
  private final boolean ownsResources;

  /** A transport with its own client resources, freed by {@link #close()}. */
  public LettuceTransport() {
    this(
        DefaultClientResources.builder().nettyCustomizer(consolidatingFlushes(null)).build(), true);
  }

  /** A transport over client resources the caller shares with its own Lettuce clients. */
  public LettuceTransport(ClientResources resources) {
    this(resources, false);
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

  private LettuceTransport(ClientResources resources, boolean ownsResources) {
    this.resources = resources;
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
    }
    // Bounds the connection handshake (HELLO, AUTH, SELECT); commands: see CommandTimeouts.
    redisUri.setTimeout(node.connectTimeout());
    withoutClientSetinfo(redisUri);
    RedisClient client = RedisClient.create(resources);
    ClientOptions.Builder options = ClientOptions.builder();
    if (redisUri.isSsl()) {
      tls(node, redisUri, options);
    }
    if (Lettuce7.PRESENT) {
      Lettuce7.withoutMaintNotifications(options);
    }
    client.setOptions(
        options
            .autoReconnect(true)
            // A lock request that waits for a reconnect is worse than a failed vote: by the time
            // it runs, the attempt it belonged to was decided long ago.
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            // Never re-send a command after a reconnect: the algorithm decided without it long
            // ago, and a lock or extension replayed after its release would leave a key behind.
            .replayFilter(command -> true)
            .timeoutOptions(
                TimeoutOptions.builder()
                    .timeoutSource(new CommandTimeouts(node.nodeTimeout()))
                    .build())
            .socketOptions(
                SocketOptions.builder()
                    .connectTimeout(node.connectTimeout())
                    .tcpNoDelay(true)
                    .build())
            .build());
    LettuceNodeClient opened = new LettuceNodeClient(node.name(), client, redisUri, resources);
    opened.connect();
    return opened;
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
    if (tls.trustedCertificates() == null && tls.clientCertificateChain() == null) {
      return; // the JVM's default trust store, no client certificate
    }
    SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
    if (tls.trustedCertificates() != null) {
      ssl.trustManager(tls.trustedCertificates().toFile());
    }
    if (tls.clientCertificateChain() != null) {
      ssl.keyManager(tls.clientCertificateChain().toFile(), tls.clientPrivateKey().toFile(), null);
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
      resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
  }
}
