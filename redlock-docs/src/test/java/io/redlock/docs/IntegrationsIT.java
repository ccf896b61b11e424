package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.micrometer.RedlockMetrics;
import io.redlock.micrometer.RedlockNodeGauges;
import io.redlock.shedlock.RedlockLockProvider;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The snippets of docs/integrations.md, run against three real redis-server processes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IntegrationsIT {
  private static RedisServers servers;
  private static List<String> nodes;

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

  @Test
  void shedLock() throws Exception {
    try (Redlock redlock = Redlock.create(RedlockConfig.builder().nodes(nodes).build())) {
      LockProvider lockProvider =
          new RedlockLockProvider(redlock, "billing"); // instead of RedisLockProvider
      // The README's ShedLock snippet: an executor over the same kind of provider
      LockingTaskExecutor executor =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock));
      // One attempt per call, as above: a slow node on a loaded machine may refuse one.
      java.util.concurrent.atomic.AtomicBoolean ran =
          new java.util.concurrent.atomic.AtomicBoolean();
      Timing.await(
          "the executor ran the task under the lock",
          () -> {
            executor.executeWithLock(
                (Runnable) () -> ran.set(true),
                new LockConfiguration(
                    Instant.now(), "readme-job", Duration.ofSeconds(30), Duration.ZERO));
            return ran.get();
          });
      // ShedLock's README lockAtMostFor, past the default maxTtl: kept with short ttls
      LockConfiguration nightly =
          new LockConfiguration(
              Instant.now(), "nightly-job", Duration.ofMinutes(14), Duration.ZERO);
      // A lock is one attempt; on a loaded machine one may meet a slow node, so try again.
      AtomicReference<Optional<SimpleLock>> locked = new AtomicReference<>(Optional.empty());
      Timing.await(
          "a first lock",
          () -> {
            locked.set(lockProvider.lock(nightly));
            return locked.get().isPresent();
          });
      Optional<SimpleLock> first = locked.get();
      assertThat(Fleet.holding(servers, "billing:nightly-job")).isGreaterThanOrEqualTo(2);
      assertThat(lockProvider.lock(nightly)).as("held: the second run is skipped").isEmpty();
      first.get().unlock();
      Fleet.awaitReleased(servers, "billing:nightly-job");
    }
  }

  @Test
  void micrometer() throws Exception {
    MeterRegistry meterRegistry = new SimpleMeterRegistry();
    ObservationRegistry observationRegistry = ObservationRegistry.create();
    RedlockMetrics metrics =
        RedlockMetrics.builder(meterRegistry)
            .observationRegistry(observationRegistry) // optional: spans through a tracing bridge
            .build();
    Redlock redlock =
        Redlock.create(RedlockConfig.builder().nodes(nodes).listener(metrics).build());
    try (redlock) {
      new RedlockNodeGauges(redlock).bindTo(meterRegistry);
      assertThat(meterRegistry.get("redlock.nodes.quorum").gauge().value()).isEqualTo(2.0);
      try (Lease lease = redlock.acquire("nightly", Duration.ofSeconds(2))) {
        lease.ensureValid();
      }
      // events reach the listener on its own thread, a moment later
      Timing.await(
          "an acquisition counted",
          () ->
              meterRegistry.find("redlock.acquire").tag("outcome", "acquired").timer() != null
                  && meterRegistry.get("redlock.acquire").tag("outcome", "acquired").timer().count()
                      == 1);
      Timing.await(
          "a release timed", () -> meterRegistry.get("redlock.release").timer().count() == 1);
    }
  }
}
