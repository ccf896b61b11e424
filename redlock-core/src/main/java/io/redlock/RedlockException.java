package io.redlock;

/**
 * The root of every exception this library throws on purpose.
 *
 * <p>All of them are unchecked. The only checked exception in the API is
 * {@link InterruptedException}, on the methods that block.
 *
 * @since 0.1.0
 */
public class RedlockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RedlockException(String message) {
    super(message);
  }

  public RedlockException(String message, Throwable cause) {
    super(message, cause);
  }
}
