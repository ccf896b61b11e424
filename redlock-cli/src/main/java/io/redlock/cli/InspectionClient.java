package io.redlock.cli;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.redlock.FreshMarker;
import io.redlock.lettuce.LettuceTransport;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeSettings;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A one-shot Lettuce client for commands that look at a node once ({@code status},
 * {@code doctor}): the same credentials a Redlock would use (the URI's, else the settings'),
 * no reconnect, and every step bounded by one timeout. {@link #nodeInfo} reads what the
 * restart guard reads over a transport connection of its own (a second handshake per node),
 * within two timeouts.
 */
final class InspectionClient {
  private InspectionClient() {}

  /**
   * The Redis URI of {@code node} with credentials and timeout set.
   *
   * @throws IllegalArgumentException if {@code node} is not a Redis URI
   */
  static RedisURI uri(String node, ConnectionOptions.Settings settings, Duration timeout) {
    RedisURI uri;
    try {
      // Lettuce takes only "redis" and "rediss" as written; a scheme has no case (REDISS://),
      // and Locale.ROOT keeps a Turkish default locale from making it "redıss".
      int schemeEnd = node.indexOf("://");
      uri =
          RedisURI.create(
              schemeEnd <= 0
                  ? node
                  : node.substring(0, schemeEnd).toLowerCase(Locale.ROOT)
                      + node.substring(schemeEnd));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a Redis URI", e);
    }
    if (URI.create(node).getUserInfo() == null && settings.password() != null) {
      if (settings.username() != null) {
        uri.setAuthentication(settings.username(), settings.password());
      } else {
        uri.setAuthentication(settings.password());
      }
    }
    uri.setTimeout(timeout);
    // No CLIENT SETINFO on connect, as the library's transport: the documented users have no
    // CLIENT right, and each refusal would be an entry in the node's ACL log.
    uri.setLibraryName("");
    uri.setLibraryVersion("");
    return uri;
  }

  /** What one look at one node gives, on client resources shared by all the looks. */
  @FunctionalInterface
  interface Look<T> {
    T at(String node, ClientResources resources);
  }

  /**
   * Looks at every node at once, each on a thread of its own, and returns what each gave, in
   * node order; a node that gave nothing {@code within} that time is {@code noAnswer}'s.
   */
  static <T> List<T> lookAtAll(
      List<String> nodes,
      String threadName,
      Duration within,
      Look<T> look,
      Function<String, T> noAnswer)
      throws InterruptedException {
    ClientResources resources =
        DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            nodes.size(),
            runnable -> {
              Thread thread = new Thread(runnable, threadName);
              thread.setDaemon(true);
              return thread;
            });
    try {
      List<CompletableFuture<T>> futures = new ArrayList<>();
      for (String node : nodes) {
        futures.add(CompletableFuture.supplyAsync(() -> look.at(node, resources), pool));
      }
      List<T> seen = new ArrayList<>();
      long deadline = System.nanoTime() + within.toNanos();
      for (int i = 0; i < futures.size(); i++) {
        try {
          seen.add(
              futures.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
        } catch (ExecutionException | TimeoutException e) {
          seen.add(noAnswer.apply(nodes.get(i)));
        }
      }
      return seen;
    } finally {
      pool.shutdownNow();
      resources.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  /** A client on {@code resources} that never reconnects and waits at most {@code timeout}. */
  static RedisClient client(
      ClientResources resources, Duration timeout, io.redlock.TlsSettings tls) {
    RedisClient client = RedisClient.create(resources);
    ClientOptions.Builder options = ClientOptions.builder();
    if (tls.trustedCertificates() != null || tls.clientCertificateChain() != null) {
      // the same trust and client certificate as the library's transport, for these nodes only
      io.lettuce.core.SslOptions.Builder ssl =
          io.lettuce.core.SslOptions.builder().jdkSslProvider();
      if (tls.trustedCertificates() != null) {
        ssl.trustManager(tls.trustedCertificates().toFile());
      }
      if (tls.clientCertificateChain() != null) {
        ssl.keyManager(
            tls.clientCertificateChain().toFile(), tls.clientPrivateKey().toFile(), null);
      }
      options.sslOptions(ssl.build());
    }
    client.setOptions(
        options
            // no CLIENT MAINT_NOTIFICATIONS on connect: the documented users have no CLIENT
            .maintNotificationsConfig(io.lettuce.core.MaintNotificationsConfig.disabled())
            .autoReconnect(false)
            .timeoutOptions(TimeoutOptions.enabled(timeout))
            .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            .build());
    return client;
  }

  /**
   * What {@code node} says about itself, read as the library reads it: by the Lettuce
   * transport's {@link NodeClient#info(String)}, with the fresh marker of the settings' key
   * prefix, over a connection of its own on {@code resources}: the commands that look at nodes
   * show what the restart guard sees. (One exception: {@code doctor} reads {@code INFO} itself
   * for a node that refuses only {@code TIME}, which the guard's read needs too.)
   *
   * @throws IllegalStateException if the node did not connect and answer within two
   *     {@code timeout}s, or refused a command {@code info} needs ({@code INFO}, {@code TIME});
   *     the message is the node's answer on one line
   */
  static NodeInfo nodeInfo(
      String node,
      ConnectionOptions.Settings settings,
      ClientResources resources,
      Duration timeout) {
    NodeSettings nodeSettings =
        new NodeSettings(
            node, settings.username(), settings.password(), timeout, timeout, settings.tls());
    long deadline = System.nanoTime() + timeout.multipliedBy(2).toNanos();
    try (LettuceTransport transport = new LettuceTransport(resources);
        NodeClient client = transport.open(nodeSettings)) {
      await(client.connected(), deadline);
      return await(client.info(FreshMarker.key(settings.keyPrefix())), deadline);
    }
  }

  private static <T> T await(CompletionStage<T> stage, long deadline) {
    try {
      return stage
          .toCompletableFuture()
          .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(oneLine(e.getCause()), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("no answer in time", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** The root cause's message of {@code e}, on one line. */
  static String oneLine(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage() != null ? root.getMessage() : root.toString();
    return message.replaceAll("\\s+", " ");
  }

  /**
   * Prints {@code rows} (the first is the header) as columns two spaces apart, each as wide as
   * its widest cell; the last column is not padded.
   */
  static void printColumns(PrintWriter out, List<String[]> rows) {
    int[] widths = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int c = 0; c < row.length; c++) {
        widths[c] = Math.max(widths[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.length; c++) {
        line.append(
            c == row.length - 1
                ? row[c]
                : String.format(Locale.ROOT, "%-" + widths[c] + "s  ", row[c]));
      }
      out.println(line.toString().stripTrailing());
    }
  }
}
