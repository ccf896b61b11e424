package io.redlock.docs;

import io.redlock.testkit.RedisServers;

/** Small helpers over a test fleet, shared by the snippet tests. */
final class Fleet {
  private Fleet() {}

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
