package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.redlock.Redlock;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spring Integration 7's {@code DistributedLock} on the registry's locks. Runs in the default
 * failsafe execution; the 6.5 one excludes it, and should it be selected there, it is skipped
 * (the type does not exist there). So that JUnit can read this class without that type, it
 * names it nowhere: the locks are held as {@link Lock} and {@link Distributed} casts them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedLockIT {

  private static RedisServers servers;
  private static Redlock redlock;
  private static Redlock other;

  @BeforeAll
  static void start() {
    boolean present;
    try {
      Class.forName("org.springframework.integration.support.locks.DistributedLock");
      present = true;
    } catch (ClassNotFoundException e) {
      present = false;
    }
    assumeTrue(present, "DistributedLock exists from Spring Integration 7.0 on");
    servers = RedisServers.startFresh(3); // declared fresh: the restart guard counts them
    redlock = Redlock.create(TestConfigs.patient(servers));
    other = Redlock.create(TestConfigs.patient(servers));
  }

  @AfterAll
  static void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (other != null) {
      other.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  /** Nodes on which the key {@code resource} expires in more than {@code millis}. */
  private static int nodesWithTtlAbove(String resource, long millis) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", resource) > millis) {
        count++;
      }
    }
    return count;
  }

  @Test
  void lockWithATtlHoldsTheKeyForThatTtl() {
    String prefix = "si:" + UUID.randomUUID();
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, prefix); // ttl 30 s
    Lock lock = registry.obtain("k");
    Distributed.lock(lock, Duration.ofSeconds(50));
    try {
      assertThat(nodesWithTtlAbove(prefix + ":k", 40_000)).isGreaterThanOrEqualTo(2);
      Distributed.lock(lock, Duration.ofSeconds(5)); // reentrant: keeps the first ttl
      lock.unlock();
      assertThat(nodesWithTtlAbove(prefix + ":k", 40_000)).isGreaterThanOrEqualTo(2);
    } finally {
      lock.unlock();
    }
  }

  @Test
  void tryLockWithWaitAndTtl() throws Exception {
    String prefix = "si:" + UUID.randomUUID();
    Lock mine = new RedlockLockRegistry(redlock, prefix).obtain("k");
    Lock theirs = new RedlockLockRegistry(other, prefix).obtain("k");
    assertThat(Distributed.tryLock(mine, Duration.ofSeconds(5), Duration.ofSeconds(10))).isTrue();
    try {
      // The lock is taken with the registry's ttl, then extended to 10 s: the extension
      // returns once a majority confirmed, so the last node may still be answering.
      assertThat(nodesWithTtlAbove(prefix + ":k", 5_000)).isGreaterThanOrEqualTo(2);
      assertThat(servers.size() - nodesWithTtlAbove(prefix + ":k", 10_000))
          .as("nodes at ttl 10 s, not 30")
          .isGreaterThanOrEqualTo(2);
      Timing.await(
          "every node at ttl 10 s, not 30", () -> nodesWithTtlAbove(prefix + ":k", 10_000) == 0);
      ExecutorService thread = Executors.newSingleThreadExecutor();
      try {
        long start = System.nanoTime();
        assertThat(
                thread
                    .submit(
                        () ->
                            Distributed.tryLock(
                                theirs, Duration.ofMillis(300), Duration.ofSeconds(10)))
                    .get())
            .isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .isGreaterThanOrEqualTo(Duration.ofMillis(300));
      } finally {
        thread.shutdown();
      }
    } finally {
      mine.unlock();
    }
    assertThatThrownBy(() -> Distributed.tryLock(mine, Duration.ZERO, Duration.ZERO))
        .isInstanceOf(io.redlock.RedlockConfigException.class)
        .hasMessageStartingWith("ttl PT0S is not accepted: it must be positive");
    assertThatThrownBy(() -> Distributed.lock(mine, Duration.ofSeconds(-1)))
        .isInstanceOf(io.redlock.RedlockConfigException.class)
        .hasMessageStartingWith("ttl PT-1S is not accepted: it must be positive");
    assertThatThrownBy(() -> Distributed.lock(mine, Duration.ofDays(1)))
        .isInstanceOf(io.redlock.RedlockConfigException.class)
        .hasMessageContaining("ttl");
    assertThat(mine.tryLock()).as("nothing held after the refused ttl").isTrue();
    mine.unlock();
  }

  /** The calls of {@code DistributedLock}, on a {@link Lock}; loaded only when called. */
  static final class Distributed {
    private Distributed() {}

    static void lock(Lock lock, Duration ttl) {
      ((org.springframework.integration.support.locks.DistributedLock) lock).lock(ttl);
    }

    static boolean tryLock(Lock lock, Duration waitTime, Duration ttl) throws InterruptedException {
      return ((org.springframework.integration.support.locks.DistributedLock) lock)
          .tryLock(waitTime, ttl);
    }
  }
}
