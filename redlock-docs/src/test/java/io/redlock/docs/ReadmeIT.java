package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlock.Lease;
import io.redlock.LossCause;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.micrometer.RedlockMetrics;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
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

  private static void awaitMeasured(MeterRegistry meterRegistry) throws InterruptedException {
    Timing.await(
        "the acquisition to be measured",
        () -> meterRegistry.find("redlock.acquire").timers().stream().anyMatch(t -> t.count() > 0));
  }

  /**
   * The snippets proposed for the README's sections on the {@code Lock} view, the listener SPI
   * and Micrometer: the same code, run on the fleet.
   */
  @Test
  void javaHabits() throws Exception {
    RedlockConfig config = RedlockConfig.builder().nodes(nodes).build();
    List<LossCause> losses = new CopyOnWriteArrayList<>();
    MeterRegistry meterRegistry = new SimpleMeterRegistry();
    try (Redlock redlock = Redlock.create(config)) {

      Lock lock = redlock.asLock("inventory:7", Duration.ofSeconds(5));
      lock.lock(); // reentrant, bound to this thread, extended while held
      try {
        // ... only this thread, of all processes, updates inventory:7
        assertThat(Fleet.holding(servers, "inventory:7")).isGreaterThanOrEqualTo(2); // test-only
      } finally {
        lock.unlock(); // throws LeaseLostException if the lease was lost meanwhile
      }
    }

    RedlockListener onLoss =
        new RedlockListener() {
          @Override
          public void leaseLost(RedlockEvent.LeaseLost event) {
            losses.add(event.cause()); // on a thread of its own, never the lock's
          }
        };
    RedlockMetrics metrics = RedlockMetrics.builder(meterRegistry).build(); // redlock.* meters
    Redlock watched = Redlock.create(config.toBuilder().listener(onLoss).listener(metrics).build());
    try { // test-only
      watched.withLock("inventory:7", Duration.ofSeconds(5), lease -> {}); // test-only
    } finally { // test-only
      watched.close(); // test-only
    } // test-only
    awaitMeasured(meterRegistry); // test-only
    assertThat(losses).isEmpty(); // test-only
  }
}
