package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The snippet of docs/fencing.md, and the paused holder it is for, on real nodes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FencingIT {
  private static RedisServers servers;

  /** A resource that checks tokens as docs/fencing.md says: larger than any it accepted. */
  static final class Store {
    private final Map<String, String> values = new HashMap<>();
    private final Map<String, Long> fences = new HashMap<>();

    synchronized boolean write(String key, String value, long token) {
      if (token <= fences.getOrDefault(key, 0L)) {
        return false;
      }
      fences.put(key, token);
      values.put(key, value);
      return true;
    }

    synchronized String read(String key) {
      return values.get(key);
    }
  }

  private final Store store = new Store();

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3);
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void theSnippetWritesWithItsToken() throws InterruptedException {
    RedlockConfig config = RedlockConfig.builder().nodes(servers.uris()).fencing(true).build();
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("invoice:42", Duration.ofSeconds(10))) {
      store.write("invoice:42", "paid", lease.fencingToken());
    }
    assertThat(store.read("invoice:42")).isEqualTo("paid");
  }

  @Test
  void aHolderThatWakesUpAfterItsLeaseEndedIsRefusedByTheStore() throws InterruptedException {
    RedlockConfig config = RedlockConfig.builder().nodes(servers.uris()).fencing(true).build();
    try (Redlock first = Redlock.create(config);
        Redlock second = Redlock.create(config)) {
      Lease paused = first.acquire("invoice:7", Duration.ofMillis(300));
      // The first holder stops (a GC pause) and its lease runs out meanwhile.
      Timing.await("the first lease to run out", () -> !paused.isValid());
      try (Lease next = second.acquire("invoice:7", Duration.ofSeconds(10))) {
        assertThat(next.fencingToken()).isGreaterThan(paused.fencingToken());
        assertThat(store.write("invoice:7", "refunded", next.fencingToken())).isTrue();
        // The first holder wakes up and writes with its old token: refused.
        assertThat(store.write("invoice:7", "paid", paused.fencingToken())).isFalse();
        // An equal token is refused too.
        assertThat(store.write("invoice:7", "again", next.fencingToken())).isFalse();
      }
    }
    assertThat(store.read("invoice:7")).isEqualTo("refunded");
  }
}
