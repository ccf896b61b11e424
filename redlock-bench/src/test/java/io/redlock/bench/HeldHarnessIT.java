package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the held-lease harness does between two measurements, on a real server. */
class HeldHarnessIT {
  private static final int KEYS = 100;

  @Test
  void deletingAMeasurementsKeysReclaimsThoseAlreadyPastTheirExpiry() throws Exception {
    try (RedisServers servers = RedisServers.start(1)) {
      // The server's expiry cycle off: what it would have reclaimed later, while the next
      // measurement ran, counted as that measurement's expired keys.
      servers.command(0, "DEBUG", "SET-ACTIVE-EXPIRE", "0");
      for (int i = 0; i < KEYS; i++) {
        servers.command(0, "SET", "held:floor:" + i, "token", "PX", "1");
        servers.command(0, "SET", "held:floor:live:" + i, "token", "PX", "60000");
      }
      servers.command(0, "SET", "held:other:0", "token", "PX", "60000");
      // Until the short keys are past their expiry: KEYS leaves them out, the server keeps them.
      long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (((List<?>) servers.command(0, "KEYS", "held:floor:*")).size() > KEYS) {
        assertThat(System.nanoTime() - limit).as("keys past their expiry within 10 s").isNegative();
        TimeUnit.MILLISECONDS.sleep(1);
      }
      assertThat(servers.command(0, "DBSIZE")).isEqualTo(2L * KEYS + 1);
      long expiredBefore = NodeStats.sample(servers, 0).expiredKeys();

      HeldHarness.deleteKeys(servers, 0, "held:floor:");

      assertThat(servers.command(0, "DBSIZE")).as("only the other measurement's key").isEqualTo(1L);
      assertThat(NodeStats.sample(servers, 0).expiredKeys() - expiredBefore)
          .as("counted as expired now, between two measurements")
          .isEqualTo(KEYS);
    }
  }
}
