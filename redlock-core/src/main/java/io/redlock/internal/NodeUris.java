package io.redlock.internal;

import io.redlock.spi.NodeSettings;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Parsing and display of node URIs such as {@code redis://user:secret@10.0.0.1:6379/2}.
 *
 * <p>Every string that leaves this class for a log, a message or {@code toString()} has its
 * password removed: credentials are shown as {@code user:****@} or {@code ****@}. Control
 * characters are escaped ({@link Printable}): a node string cannot forge a log line.
 */
public final class NodeUris {
  /** The port Redis listens on when a URI names none. */
  public static final int DEFAULT_PORT = 6379;

  private NodeUris() {}

  /**
   * Parses a node URI, or returns {@code null} when it is not an absolute URI with a host.
   * The caller turns {@code null} into an error naming the setting.
   */
  public static URI parseOrNull(String uri) {
    try {
      URI parsed = new URI(uri);
      if (parsed.getScheme() == null || parsed.getHost() == null) {
        return null;
      }
      return parsed;
    } catch (URISyntaxException e) {
      return null;
    }
  }

  /** The server a URI reaches, as {@code host:port}, for telling duplicate nodes apart. */
  public static String serverOf(URI uri) {
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    return uri.getHost().toLowerCase(Locale.ROOT) + ":" + port;
  }

  /** The URI with its password masked; safe to log ({@link NodeSettings#redacted}). */
  public static String redact(String uri) {
    return Printable.of(NodeSettings.redacted(uri));
  }

  /** The URI without any credentials ({@link NodeSettings#withoutCredentials}). */
  public static String displayName(String uri) {
    return Printable.of(NodeSettings.withoutCredentials(uri));
  }
}
