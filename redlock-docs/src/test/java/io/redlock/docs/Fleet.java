package io.redlock.docs;

import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;

/** Small helpers over a test fleet, shared by the snippet tests. */
final class Fleet {
  private Fleet() {}

  /**
   * Waits until no node holds {@code key}. A release returns once a majority deleted it; the
   * other nodes' deletes may still be on their way.
   */
  static void awaitReleased(RedisServers servers, String key) throws InterruptedException {
    Timing.await(key + " deleted on every node", () -> holding(servers, key) == 0);
  }

  /** How many nodes of {@code servers} hold {@code key}. */
  static int holding(RedisServers servers, String key) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if (servers.isRunning(i) && servers.command(i, "GET", key) != null) {
        count++;
      }
    }
    return count;
  }
}
