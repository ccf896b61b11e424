package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.LossCause;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.RedlockLock;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The snippets of docs/usage.md, run against three real redis-server processes, guard on. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UsageIT {
  private static RedisServers servers;
  private static List<String> nodes;
  private Redlock redlock;
  private final List<Object> done = new CopyOnWriteArrayList<>();
  private final AtomicReference<LossCause> stopped = new AtomicReference<>();

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

  @BeforeEach
  void connect() {
    redlock = Redlock.create(RedlockConfig.builder().nodes(nodes).build());
  }

  @AfterEach
  void close() {
    redlock.close();
  }

  private void transfer(Duration remaining) {
    assertThat(remaining).isPositive();
    assertThat(Fleet.holding(servers, "account:1")).isGreaterThanOrEqualTo(2);
    assertThat(Fleet.holding(servers, "account:2")).isGreaterThanOrEqualTo(2);
    done.add("transfer");
  }

  private void process(Lease lease) {
    lease.ensureValid();
    done.add("process");
  }

  private void stopImport(LossCause cause) {
    stopped.set(cause);
  }

  private void runImport(Lease lease) {
    lease.ensureValid();
    done.add("import");
  }

  private long countRows() {
    assertThat(Fleet.holding(servers, "nightly-report")).isGreaterThanOrEqualTo(2);
    return 42;
  }

  @Test
  void severalResources() throws Exception {
    Lease lease = redlock.acquire(List.of("account:1", "account:2"), Duration.ofSeconds(10));
    try {
      lease.ensureValid(); // throws LeaseLostException once the validity ran out
      transfer(lease.remaining());
    } finally {
      lease.release();
    }
    assertThat(done).containsExactly("transfer");
    Fleet.awaitReleased(servers, "account:1");
  }

  @Test
  void acquireAsync() throws Exception {
    CompletableFuture<Void> processed = // test-only
        redlock
            .acquireAsync("orders:42", Duration.ofSeconds(10))
            .orTimeout(2, TimeUnit.SECONDS) // gives up after 2 s; a lease granted later is released
            .thenAccept(
                lease -> {
                  try (lease) {
                    process(lease);
                  }
                });
    processed.get(10, TimeUnit.SECONDS);
    assertThat(done).containsExactly("process");
    Fleet.awaitReleased(servers, "orders:42");
  }

  @Test
  void autoExtendAndOnLost() throws Exception {
    Lease lease = redlock.acquire("import", Duration.ofSeconds(10));
    lease.onLost(lost -> stopImport(lost.lossCause()));
    lease.autoExtend(); // extends whenever half of the ttl is left
    try {
      runImport(lease);
    } finally {
      lease.release();
    }
    assertThat(done).containsExactly("import");
    assertThat(stopped.get()).as("onLost is not called for a lease released while valid").isNull();

    // A lease that nobody extends is lost when its validity runs out, and onLost hears it.
    Lease shortLease = redlock.acquire("import", Duration.ofSeconds(1));
    shortLease.onLost(lost -> stopImport(lost.lossCause()));
    Timing.await("onLost called", () -> stopped.get() != null);
    assertThat(stopped.get()).isEqualTo(LossCause.EXPIRED);
  }

  @Test
  void callWithLock() throws Exception {
    long rows =
        redlock.callWithLock("nightly-report", Duration.ofSeconds(30), lease -> countRows());
    assertThat(rows).isEqualTo(42);
    Fleet.awaitReleased(servers, "nightly-report");
  }

  @Test
  void releaseAfter() throws Exception {
    Lease lease = redlock.acquire("digest", Duration.ofSeconds(10));
    lease.releaseAfter(Duration.ofMinutes(1)); // nobody acquires "digest" for a minute
    assertThat(lease.isValid()).isFalse();
    assertThat(redlock.tryAcquire("digest", Duration.ofSeconds(10))).isEmpty();
    int standing = 0; // releaseAfter returns once a majority set the new expiry
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", "digest") > Duration.ofSeconds(50).toMillis()) {
        standing++;
      }
    }
    assertThat(standing).isGreaterThanOrEqualTo(2);
    for (int i = 0; i < servers.size(); i++) {
      servers.command(i, "DEL", "digest");
    }
  }

  @Test
  void lockView() throws Exception {
    Lock lock = redlock.asLock("orders:42");
    lock.lock();
    try {
      // only this thread, of this process and of every other, works on orders:42
      assertThat(Fleet.holding(servers, "orders:42")).isGreaterThanOrEqualTo(2); // test-only
    } finally {
      lock.unlock(); // throws LeaseLostException if the lease was lost meanwhile
    }

    boolean ran = false; // test-only
    if (lock.tryLock(5, TimeUnit.SECONDS)) { // retries for at most 5 s
      try {
        // ...
        ran = true; // test-only
      } finally {
        lock.unlock();
      }
    }
    assertThat(ran).isTrue();
    assertThat(((RedlockLock) lock).isLocked()).isFalse();
    Fleet.awaitReleased(servers, "orders:42");
  }

  @Test
  void listener() throws Exception {
    List<String> alerts = new CopyOnWriteArrayList<>();
    RedlockListener lostLeases =
        new RedlockListener() {
          @Override
          public void leaseLost(RedlockEvent.LeaseLost event) {
            alerts.add(event.lease().resources() + " lost: " + event.cause());
          }
        };
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
            .listener(lostLeases)
            .build();

    try (Redlock listened = Redlock.create(config.toBuilder().nodes(nodes).build())) {
      Lease lease = listened.acquire("report", Duration.ofSeconds(1)); // never extended
      Timing.await("the listener heard the loss", () -> !alerts.isEmpty());
      assertThat(alerts).containsExactly("[report] lost: EXPIRED");
      assertThat(lease.isValid()).isFalse();
    }
  }
}
