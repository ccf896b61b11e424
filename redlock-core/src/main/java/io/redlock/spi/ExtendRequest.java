package io.redlock.spi;

import java.util.List;
import java.util.Objects;

/**
 * One lease's extension in a batch ({@link NodeClient#extendBatch}): set the time to live of
 * every key of {@code keys} to {@code ttlMillis}, only if every one of them holds {@code
 * token}, as {@link NodeClient#extend} does.
 *
 * @param keys the lease's keys, at least one, none null
 * @param token the value each key must hold
 * @param ttlMillis the new time to live, in milliseconds, at least 1
 * @since 0.1.0
 */
public record ExtendRequest(List<String> keys, String token, long ttlMillis) {

  /**
   * @throws NullPointerException if {@code keys}, a key or {@code token} is null
   * @throws IllegalArgumentException if {@code keys} is empty or {@code ttlMillis} is below 1
   */
  public ExtendRequest {
    keys = List.copyOf(keys);
    Objects.requireNonNull(token, "token");
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("keys: at least one key is required");
    }
    if (ttlMillis < 1) {
      throw new IllegalArgumentException("ttlMillis " + ttlMillis + " is not accepted: at least 1");
    }
  }
}
