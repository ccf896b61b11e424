package io.redlock.testkit;

import java.util.Objects;

/**
 * A piece of work a client did under a lease: the side effect the lock is there to protect.
 *
 * @param client who did it
 * @param resource under which resource
 * @param token the lease it believed it held
 * @param startNanos when it began, on the monotonic clock
 * @param endNanos when it finished (the moment its effect became visible)
 * @since 0.1.0
 */
public record WorkRecord(
    String client, String resource, String token, long startNanos, long endNanos) {

  public WorkRecord {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(token, "token");
  }
}
