package io.redlock.spi;

import io.redlock.RedlockConfig;
import io.redlock.internal.Durations;
import io.redlock.internal.NodeUris;
import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link NodeTransport} needs to open the client of one node: its URI, the credentials
 * for a URI that carries none, the node timeout and the connect timeout. Built by
 * {@link io.redlock.Redlock#create} from the configuration, or with {@link #of}.
 *
 * <p>Immutable. {@link #toString()} and {@link #name()} never show a password.
 *
 * @param uri the node's URI as configured, credentials included
 * @param username the ACL user for a URI without credentials, or {@code null}
 * @param password the password for a URI without credentials, or {@code null}
 * @param nodeTimeout how long one vote may take
 * @param connectTimeout how long a connection attempt, handshake included, may take
 * @param tls how a {@code rediss://} node is connected (trust, client certificate, whether
 *     the URI may switch certificate checks off)
 * @since 0.1.0
 */
public record NodeSettings(
    String uri,
    String username,
    String password,
    Duration nodeTimeout,
    Duration connectTimeout,
    io.redlock.TlsSettings tls) {

  /**
   * Checks the values.
   *
   * @throws NullPointerException if the URI or a timeout is null
   */
  public NodeSettings {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(nodeTimeout, "nodeTimeout");
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    Objects.requireNonNull(tls, "tls");
  }

  /** Settings with {@link io.redlock.TlsSettings#DEFAULT}. */
  public NodeSettings(
      String uri, String username, String password, Duration nodeTimeout, Duration connectTimeout) {
    this(uri, username, password, nodeTimeout, connectTimeout, io.redlock.TlsSettings.DEFAULT);
  }

  /**
   * The settings of the node at {@code uri} under {@code config}: its credentials and
   * timeouts.
   */
  public static NodeSettings of(String uri, RedlockConfig config) {
    return new NodeSettings(
        uri,
        config.username(),
        config.password(),
        config.nodeTimeout(),
        config.connectTimeout(),
        config.tls());
  }

  /**
   * The name the node goes by in logs, messages and outcomes: its URI without credentials.
   */
  public String name() {
    return NodeUris.displayName(uri);
  }

  @Override
  public String toString() {
    return "NodeSettings{uri="
        + NodeUris.redact(uri)
        + ", username="
        + username
        + ", password="
        + (password == null ? "none" : "****")
        + ", nodeTimeout="
        + Durations.format(nodeTimeout)
        + ", connectTimeout="
        + Durations.format(connectTimeout)
        + (tls.equals(io.redlock.TlsSettings.DEFAULT) ? "" : ", tls=" + tls)
        + "}";
  }
}
