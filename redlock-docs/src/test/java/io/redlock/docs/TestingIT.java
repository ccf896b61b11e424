package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The test kit snippet of docs/testing.md. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TestingIT {

  @Test
  void aMinorityDownStillLocks() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3);
        Redlock redlock = Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build())) {
      servers.kill(0); // a minority down: still locks
      try (Lease lease = redlock.acquire("orders:42", Duration.ofSeconds(10))) {
        lease.ensureValid();
        assertThat(servers.isRunning(0)).isFalse(); // test-only
        assertThat(Fleet.holding(servers, "orders:42")).isEqualTo(2); // test-only
      }
    }
  }
}
