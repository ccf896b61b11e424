package io.redlock.spi;

import io.redlock.RedlockConfig;
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
    return withoutCredentials(uri);
  }

  /**
   * {@code uri} without any credentials: the name a node goes by in logs and outcomes. Text
   * that holds credentials but cannot be parsed is masked whole.
   *
   * @since 0.1.0
   */
  public static String withoutCredentials(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0 || schemeEnd < 0 || at < schemeEnd) {
      return at < 0 ? uri : "****";
    }
    return uri.substring(0, schemeEnd + 3) + uri.substring(at + 1);
  }

  /**
   * {@code uri} with its password masked ({@code user:****}, or {@code ****} for a lone
   * password); safe to log. Text that holds credentials but cannot be parsed is masked whole.
   *
   * @since 0.1.0
   */
  public static String redacted(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0) {
      return uri;
    }
    if (schemeEnd < 0 || at < schemeEnd) {
      return "****";
    }
    String userInfo = uri.substring(schemeEnd + 3, at);
    int colon = userInfo.indexOf(':');
    String shown = colon < 0 ? "****" : userInfo.substring(0, colon) + ":****";
    return uri.substring(0, schemeEnd + 3) + shown + uri.substring(at);
  }

  @Override
  public String toString() {
    return "NodeSettings{uri="
        + redacted(uri)
        + ", username="
        + username
        + ", password="
        + (password == null ? "none" : "****")
        + ", nodeTimeout="
        + nodeTimeout.toMillis()
        + " ms"
        + ", connectTimeout="
        + connectTimeout.toMillis()
        + " ms"
        + (tls.equals(io.redlock.TlsSettings.DEFAULT) ? "" : ", tls=" + tls)
        + "}";
  }
}
