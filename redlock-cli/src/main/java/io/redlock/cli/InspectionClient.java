package io.redlock.cli;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;
import java.net.URI;
import java.time.Duration;

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
      uri = RedisURI.create(node);
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

  /** A client on {@code resources} that never reconnects and waits at most {@code timeout}. */
  static RedisClient client(ClientResources resources, Duration timeout) {
    RedisClient client = RedisClient.create(resources);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(false)
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
        .build());
    return client;
  }
}
