package io.redlock.testkit;

/**
 * Thrown when a Redis server answers a command with an error reply, such as
 * {@code -NOAUTH Authentication required.} or {@code -WRONGTYPE ...}.
 *
 * <p>It carries the error text exactly as the server sent it (without the leading {@code -}),
 * so tests can assert on it; {@link #errorCode()} gives its first word. The connection that
 * received the reply was still in a consistent state, so the error is the server's verdict on
 * the command, not a transport failure (those surface as {@link java.io.UncheckedIOException}).
 *
 * <p>Instances are immutable and therefore thread-safe.
 *
 * @since 0.1.0
 */
public final class RedisErrorReplyException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The reply text without the leading {@code -}. */
  private final String errorText;

  /**
   * Creates the exception for one error reply.
   *
   * @param errorText the reply text without the leading {@code -}, e.g.
   *     {@code "NOAUTH Authentication required."}
   */
  public RedisErrorReplyException(String errorText) {
    super("Redis replied with an error: " + errorText);
    this.errorText = errorText;
  }

  /**
   * Returns the error text as sent by the server, without the leading {@code -}.
   *
   * @return the full error text, e.g. {@code "WRONGTYPE Operation against a key ..."}
   */
  public String errorText() {
    return errorText;
  }

  /**
   * Returns the first word of the error text, which Redis uses as a machine-readable code.
   *
   * @return the error code, e.g. {@code "NOAUTH"}, {@code "WRONGTYPE"} or {@code "ERR"}
   */
  public String errorCode() {
    int space = errorText.indexOf(' ');
    return space < 0 ? errorText : errorText.substring(0, space);
  }
}
