package io.redlock;

/**
 * The fresh marker: the one definition of the key and value that {@link Redlock#init} (and
 * {@code redlock init}, and the test kit's fleets) write to declare that a node's current
 * Redis process holds no locks.
 *
 * <p>The key is {@code keyPrefix + "__redlock__:fresh"}: under the clients' key prefix, so
 * that clients with other prefixes on the same server never trust a marker that checked
 * none of their keys, and with a name no resource of any Redlock client is expected to use.
 * The value is {@code "redlock-fresh/1 run_id=" + runId}, where {@code runId} is the
 * {@code run_id} of {@code INFO server} of the process the marker was written to. The key
 * has no expiry.
 *
 * <p>The restart guard counts a node at once when the marker names the node's current
 * {@code run_id}; a restart draws a new {@code run_id}, so the marker stops matching. A
 * marker that names an earlier {@code run_id} still proves that the process loaded the data
 * of an earlier one, which is how a node that persists every write counts at once after a
 * restart (see {@code docs/safety.md}).
 *
 * <p>The library's other keys share the {@link #OWN_KEYS} part, and are never locks.
 *
 * <p>Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class FreshMarker {
  /**
   * How the library's own keys begin after the key prefix: {@value}. None of them is a lock:
   * the fresh marker, the cluster's max-ttl register ({@link #maxTtlKey}) and the key
   * {@code redlock doctor} checks rights with. {@code init} ignores them when it looks for
   * lock keys.
   */
  public static final String OWN_KEYS = "__redlock__:";

  /** What the marker key adds to the key prefix: {@value}. */
  public static final String KEY_SUFFIX = OWN_KEYS + "fresh";

  /** What the max-ttl register's key adds to the key prefix: {@value}. */
  public static final String MAX_TTL_KEY_SUFFIX = OWN_KEYS + "max-ttl";

  /** How every marker value begins, followed by the {@code run_id}: {@value}. */
  public static final String VALUE_PREFIX = "redlock-fresh/1 run_id=";

  private FreshMarker() {}

  /** The marker key for clients with {@code keyPrefix} (empty for none). */
  public static String key(String keyPrefix) {
    return keyPrefix + KEY_SUFFIX;
  }

  /**
   * The key of the cluster's max-ttl register for clients with {@code keyPrefix}: each client
   * raises its own {@code maxTtl} in it on every node, with an expiry of its own that each
   * raise renews, and holds restarted nodes back for the largest live value it has read, so
   * that a client whose {@code maxTtl} is shorter than another's still waits out the longer
   * leases. A value lapses once its client stopped raising it and its leases ended (format:
   * {@link io.redlock.spi.MaxTtlRegister}).
   */
  public static String maxTtlKey(String keyPrefix) {
    return keyPrefix + MAX_TTL_KEY_SUFFIX;
  }

  /** The marker value that declares the process with {@code runId} fresh. */
  public static String value(String runId) {
    if (runId == null || runId.isEmpty()) {
      throw new IllegalArgumentException("runId: a non-empty run_id is required");
    }
    return VALUE_PREFIX + runId;
  }

  /** Whether {@code value} is a marker that names the process {@code runId}. */
  public static boolean names(String value, String runId) {
    return value != null && value.equals(VALUE_PREFIX + runId);
  }

  /** Whether {@code value} is a marker at all (for any process). */
  public static boolean isMarker(String value) {
    return value != null
        && value.startsWith(VALUE_PREFIX)
        && value.length() > VALUE_PREFIX.length();
  }
}
