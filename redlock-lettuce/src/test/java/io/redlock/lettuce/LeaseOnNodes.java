package io.redlock.lettuce;

import io.redlock.Lease;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.Optional;

/**
 * A lease a test needs on particular nodes, not only on the majority that granted it. On a
 * loaded machine a node's vote may time out before its request was written, and that node then
 * never holds the lease: such a lease is released and taken again.
 */
final class LeaseOnNodes {
  /** How long a granted lease's last requests are given to land before it is taken again. */
  private static final Duration LANDING = Duration.ofMillis(500);

  /** Whether the nodes a test needs hold {@code lease}, waited for a moment. */
  @FunctionalInterface
  interface Held {
    boolean by(Lease lease) throws InterruptedException;
  }

  private LeaseOnNodes() {}

  /**
   * Takes a lease with {@code take} until {@code held} says the nodes hold it, for at most
   * {@code atMost} ({@link Timing#scaled scaled}).
   */
  static Lease take(String what, Duration atMost, Timing.Attempt<Lease> take, Held held)
      throws InterruptedException {
    return Timing.awaitValue(
        what,
        atMost,
        () -> {
          Optional<Lease> taken = take.attempt();
          if (taken.isPresent() && !held.by(taken.get())) {
            taken.get().release();
            return Optional.empty();
          }
          return taken;
        });
  }

  /** Every node of {@code servers} holds the lease's token under each of {@code keys}. */
  static Held everyNode(RedisServers servers, String... keys) {
    return lease -> {
      for (String key : keys) {
        if (!servers.awaitHeldByEvery(key, lease.token(), LANDING)) {
          return false;
        }
      }
      return true;
    };
  }

  /** Server {@code node} of {@code servers} holds the lease's token under {@code key}. */
  static Held node(RedisServers servers, int node, String key) {
    return lease -> servers.awaitHeldBy(node, key, lease.token(), LANDING);
  }
}
