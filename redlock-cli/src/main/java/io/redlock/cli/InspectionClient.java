package io.redlock.cli;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A one-shot Lettuce client for commands that look at a node once ({@code status},
 * {@code doctor}): the same credentials a Redlock would use (the URI's, else the settings'),
 * no reconnect, and every step bounded by one timeout.
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
  static RedisClient client(ClientResources resources, Duration timeout) {
    RedisClient client = RedisClient.create(resources);
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(false)
            .timeoutOptions(TimeoutOptions.enabled(timeout))
            .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            .build());
    return client;
  }

  /** The fields of {@code INFO} replies: {@code name:value} lines, sections and blanks skipped. */
  static Map<String, String> parseInfo(String text) {
    Map<String, String> fields = new HashMap<>();
    for (String line : text.split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return fields;
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
