package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The held-lease floor of the benchmark ({@link HeldFloor}) does what its figures are read as:
 * it keeps every key alive on every node with the library's extension script, in chunks, and
 * lets go of them when released.
 */
class HeldFloorIT {
  /** More than two chunks, the last one partial. */
  private static final int HELD = 2 * HeldFloor.CHUNK + 500;

  private static final Duration TTL = Duration.ofSeconds(2);

  @Test
  void keepsEveryKeyAliveOnEveryNodeWithTheBatchScript() throws Exception {
    try (RedisServers servers = RedisServers.start(3);
        HeldFloor floor = new HeldFloor(servers.uris(), TTL)) {
      long[] extendedBefore = new long[servers.size()];
      for (int i = 0; i < servers.size(); i++) {
        extendedBefore[i] = pexpires(servers, i);
      }
      floor.hold("floor:", HELD);
      // Two rounds of extensions on every node: the keys taken first were set to expire one ttl
      // after they were taken, and the second round comes a whole ttl after the first key.
      // A limit only so that a floor that never extends fails instead of hanging the build.
      long limit = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      for (int i = 0; i < servers.size(); i++) {
        while (pexpires(servers, i) - extendedBefore[i] < 2L * HELD) {
          assertThat(System.nanoTime() - limit)
              .as("node %d extended two rounds of keys within a minute", i + 1)
              .isNegative();
          TimeUnit.MILLISECONDS.sleep(50);
        }
      }
      for (int i = 0; i < servers.size(); i++) {
        assertThat(servers.command(i, "DBSIZE")).as("keys on node %d", i + 1).isEqualTo(HELD * 1L);
        assertThat(NodeStats.sample(servers, i).expiredKeys())
            .as("keys expired on node %d", i + 1)
            .isZero();
        // Only batches: one script per chunk and round, no extension sent alone.
        assertThat(NodeStats.sample(servers, i).calls().getOrDefault("evalsha", 0L))
            .as("scripts run on node %d", i + 1)
            .isLessThan(2L * HELD / 10);
      }

      floor.releaseAll();
      for (int i = 0; i < servers.size(); i++) {
        assertThat(servers.command(i, "DBSIZE"))
            .as("keys left on node %d after the release", i + 1)
            .isEqualTo(0L);
      }
    }
  }

  @Test
  void takesAndReleasesALockBesideTheHeldOnes() throws Exception {
    try (RedisServers servers = RedisServers.start(3);
        HeldFloor floor = new HeldFloor(servers.uris(), TTL)) {
      floor.hold("floor:", 10);
      assertThat(floor.takeAndRelease("beside")).isTrue();
      assertThat(floor.takeAndRelease("floor:3")).as("a key the floor holds").isFalse();
      for (int i = 0; i < servers.size(); i++) {
        assertThat(servers.command(i, "EXISTS", "beside")).isEqualTo(0L);
        assertThat(servers.command(i, "DBSIZE")).isEqualTo(10L);
      }
    }
  }

  private static long pexpires(RedisServers servers, int i) {
    return NodeStats.sample(servers, i).calls().getOrDefault("pexpire", 0L);
  }
}
