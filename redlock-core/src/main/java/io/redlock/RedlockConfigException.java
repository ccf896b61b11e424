package io.redlock;

/**
 * A configuration value, or a node's answer to it, was refused.
 *
 * <p>The message is one sentence that names the setting (or the node), the value that was
 * given and what is accepted. It never contains a password.
 *
 * @since 0.1.0
 */
public final class RedlockConfigException extends RedlockException {
  private static final long serialVersionUID = 1L;

  public RedlockConfigException(String message) {
    super(message);
  }

  public RedlockConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
