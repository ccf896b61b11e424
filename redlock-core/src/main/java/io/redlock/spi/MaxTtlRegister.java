package io.redlock.spi;

/**
 * What a node's max-ttl register ({@link io.redlock.FreshMarker#maxTtlKey}) holds after a
 * client raised it: the longest {@code maxTtl} of the clients that raise it, and how long that
 * value lasts on the node if its clients stop raising it.
 *
 * <p>Each client's value lapses on its own: a raise keeps the caller's value for the hold it
 * asks for (never shortening a later expiry), and leaves every other client's value as it is.
 * When the client with the longest {@code maxTtl} stops raising, its value lapses and the
 * next longest is answered. An immutable value; thread-safe.
 *
 * <p>On the node the register is a string key holding comma-separated
 * {@code maxTtlMillis:expiresAtMillis} entries, one per value in use, each expiring at its own
 * node time ({@code TIME}, in milliseconds since the epoch); the key itself expires with its
 * last entry. {@link #read} decodes it, for tools such as {@code redlock doctor}.
 *
 * @param maxTtlMillis the longest live value, in milliseconds (at least the caller's)
 * @param remainingMillis milliseconds until that value lapses, by the node's clock, if no one
 *     raises it again; {@code -1} if it never lapses (a register written without expiry)
 * @since 0.1.0
 */
public record MaxTtlRegister(long maxTtlMillis, long remainingMillis) {
  public MaxTtlRegister {
    if (maxTtlMillis < 0) {
      throw new IllegalArgumentException("maxTtlMillis must be >= 0, was " + maxTtlMillis);
    }
    if (remainingMillis < -1) {
      throw new IllegalArgumentException(
          "remainingMillis must be >= 0, or -1 for no expiry, was " + remainingMillis);
    }
  }

  /**
   * Decodes a register as stored on a node.
   *
   * @param stored the key's value ({@code GET}), or {@code null} if it does not exist
   * @param nodeNowMillis the node's clock ({@code TIME}) in milliseconds since the epoch
   * @return the longest live value and its time left, or {@code null} if none is live
   */
  public static MaxTtlRegister read(String stored, long nodeNowMillis) {
    if (stored == null || stored.isEmpty()) {
      return null;
    }
    long best = -1;
    long bestExpiry = 0;
    for (String entry : stored.split(",")) {
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        continue;
      }
      try {
        long value = Long.parseLong(entry.substring(0, colon));
        long expiry = Long.parseLong(entry.substring(colon + 1));
        if (expiry > nodeNowMillis && value > best) {
          best = value;
          bestExpiry = expiry;
        }
      } catch (NumberFormatException e) {
        // not an entry this library writes: ignored, as the script ignores it
      }
    }
    return best < 0 ? null : new MaxTtlRegister(best, bestExpiry - nodeNowMillis);
  }
}
