package io.redlock.testkit;

import java.util.Objects;

/**
 * One lease as a client saw it, on the monotonic clock ({@link System#nanoTime()}, which on
 * Linux is one clock for every process of the machine, so records of several JVMs compare).
 *
 * @param client who held it
 * @param resource what it locked
 * @param token the lease's token
 * @param grantedNanos when the client learned it held the lease
 * @param validUntilNanos the lease's validity deadline as last known to the client (after
 *     any extension)
 * @param endedNanos when the client released it, or learned it was lost
 * @param lost whether it ended lost rather than released
 * @param fencingToken the lease's fencing token, or 0 for a lease taken without fencing
 * @since 0.1.0
 */
public record LeaseRecord(
    String client,
    String resource,
    String token,
    long grantedNanos,
    long validUntilNanos,
    long endedNanos,
    boolean lost,
    long fencingToken) {

  public LeaseRecord {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(token, "token");
    if (fencingToken < 0) {
      throw new IllegalArgumentException(
          "fencingToken is " + fencingToken + ": it must be 0 (unfenced) or positive");
    }
  }

  /** A lease taken without fencing: its {@link #fencingToken()} is 0. */
  public LeaseRecord(
      String client,
      String resource,
      String token,
      long grantedNanos,
      long validUntilNanos,
      long endedNanos,
      boolean lost) {
    this(client, resource, token, grantedNanos, validUntilNanos, endedNanos, lost, 0);
  }

  /** The end of the time the client could rightly believe it held the lease. */
  public long validEndNanos() {
    return endedNanos - validUntilNanos < 0 ? endedNanos : validUntilNanos;
  }
}
