package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's quick start, run against three real redis-server processes, guard on. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadmeIT {
  private static RedisServers servers;
  private static List<String> nodes;
  private final AtomicInteger reports = new AtomicInteger();

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3);
    nodes = servers.uris();
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private void writeReport() {
    assertThat(Fleet.holding(servers, "nightly-report")).isGreaterThanOrEqualTo(2);
    reports.incrementAndGet();
  }

  @Test
  void quickStart() throws Exception {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
            .build();
    config = config.toBuilder().nodes(nodes).build(); // test-only: the fleet's addresses
    try (Redlock redlock = Redlock.create(config)) {

      try (Lease lease = redlock.acquire("orders:42", Duration.ofSeconds(10))) {
        lease.ensureValid(); // right before each side effect
        // ... work well inside lease.remaining()
        assertThat(Fleet.holding(servers, "orders:42")).isGreaterThanOrEqualTo(2); // test-only
      }

      Optional<Lease> maybe =
          redlock.tryAcquire("orders:42", Duration.ofSeconds(10)); // one attempt
      maybe.ifPresent(Lease::release); // test-only: one attempt may meet a slow node; fine
      CompletableFuture<Lease> later = redlock.acquireAsync("orders:42", Duration.ofSeconds(10));
      later.get(10, TimeUnit.SECONDS).release(); // test-only

      // auto-extended while the action runs, released after it
      redlock.withLock("nightly-report", Duration.ofSeconds(30), lease -> writeReport());
      assertThat(reports).hasValue(1); // test-only
      Fleet.awaitReleased(servers, "nightly-report"); // test-only
    }
  }
}
