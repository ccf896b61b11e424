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
 * <p>An entry no client can have written is ignored, and dropped by the next raise: a value
 * above {@link #MAX_VALUE_MILLIS}, or an expiry further than {@code 3 × value + 10 s} from
 * the node's clock (a client asks for at most about {@code 2.25 × value + 7.5 s}); one stray
 * entry could otherwise hold every restarted node back for a year.
 *
 * @param maxTtlMillis the longest live value, in milliseconds (at least the caller's)
 * @param remainingMillis milliseconds until that value lapses, by the node's clock, if no one
 *     raises it again; {@code -1} if it never lapses (a register written without expiry)
 * @param ignored an entry the register held that was out of bounds and ignored, for a warning
 *     that names it; empty when there was none
 * @since 0.1.0
 */
public record MaxTtlRegister(long maxTtlMillis, long remainingMillis, String ignored) {
  /** The largest value an entry may hold: {@code RedlockConfig.MAX_DURATION}, 365 days. */
  public static final long MAX_VALUE_MILLIS = 365L * 24 * 3_600_000;

  /** A register that ignored nothing. */
  public MaxTtlRegister(long maxTtlMillis, long remainingMillis) {
    this(maxTtlMillis, remainingMillis, "");
  }

  /**
   * Whether an entry is one a client can have written: its value at most {@link
   * #MAX_VALUE_MILLIS}, its expiry at most {@code 3 × value + 10 s} after {@code nowMillis}.
   */
  public static boolean plausible(long value, long expiryMillis, long nowMillis) {
    return value >= 0
        && value <= MAX_VALUE_MILLIS
        && expiryMillis - nowMillis <= 3 * value + 10_000;
  }

  public MaxTtlRegister {
    java.util.Objects.requireNonNull(ignored, "ignored");
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
        if (expiry > nodeNowMillis && value > best && plausible(value, expiry, nodeNowMillis)) {
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
