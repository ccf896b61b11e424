package io.redlock.internal;

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

  /** The URI with its password masked; safe to log. Unparseable text is masked whole. */
  public static String redact(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0) {
      return Printable.of(uri);
    }
    if (schemeEnd < 0 || at < schemeEnd) {
      return "****";
    }
    String userInfo = uri.substring(schemeEnd + 3, at);
    int colon = userInfo.indexOf(':');
    String shown = colon < 0 ? "****" : userInfo.substring(0, colon) + ":****";
    return Printable.of(uri.substring(0, schemeEnd + 3) + shown + uri.substring(at));
  }

  /** The URI without any credentials: the name a node goes by in logs and outcomes. */
  public static String displayName(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0 || schemeEnd < 0 || at < schemeEnd) {
      return at < 0 ? Printable.of(uri) : "****";
    }
    return Printable.of(uri.substring(0, schemeEnd + 3) + uri.substring(at + 1));
  }
}
