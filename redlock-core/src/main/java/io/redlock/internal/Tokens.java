package io.redlock.internal;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Lease tokens: 20 bytes (160 bits) from {@link SecureRandom}, as 40 lowercase hex digits.
 *
 * <p>160 random bits make a token unguessable and, in practice, unique across every client
 * that ever locks the same resource, which is what lets release and extend compare by value.
 * Thread-safe.
 */
final class Tokens {
  /** Random bytes in a token. */
  public static final int TOKEN_BYTES = 20;

  private static final HexFormat HEX = HexFormat.of();

  private final SecureRandom random = new SecureRandom();

  public String next() {
    byte[] bytes = new byte[TOKEN_BYTES];
    random.nextBytes(bytes);
    return HEX.formatHex(bytes);
  }
}
