package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.dao.CannotAcquireLockException;

/**
 * The registry while a majority of its five real nodes is paused, on the Spring Integration
 * line of the failsafe execution: waiting gives up on the outage. A fleet of its own, so that
 * the restart guard's view of the paused nodes does not slow other tests.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RegistryOutageIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5); // declared fresh: the restart guard counts them
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  /** Nodes that hold a key named {@code resource}. */
  private static int nodesHolding(String resource) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", resource) != -2) {
        count++;
      }
    }
    return count;
  }

  @Test
  void lockAndExecuteLockedGiveUpWithCannotAcquireLockExceptionWhileAMajorityIsPaused()
      throws Exception {
    String prefix = "si:" + UUID.randomUUID();
    // The defaults users get: maxWait 10 s is how long an outage is waited out.
    try (Redlock defaults = Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build())) {
      RedlockLockRegistry registry = new RedlockLockRegistry(defaults, prefix);
      Lock lock = registry.obtain("42");
      java.util.concurrent.atomic.AtomicBoolean ran =
          new java.util.concurrent.atomic.AtomicBoolean();
      ExecutorService elsewhere = Executors.newSingleThreadExecutor();
      for (int i = 0; i < 3; i++) {
        servers.pause(i);
      }
      try {
        java.util.concurrent.Future<?> executed =
            elsewhere.submit(
                () -> {
                  registry.executeLocked("43", () -> ran.set(true));
                  return null;
                });
        assertThatThrownBy(lock::lock)
            .isInstanceOf(CannotAcquireLockException.class)
            .hasMessageContaining(prefix + ":42")
            .hasMessageContaining("no majority of the nodes answered")
            .cause()
            .isInstanceOf(LockUnavailableException.class)
            .satisfies(
                e -> {
                  LockUnavailableException outage = (LockUnavailableException) e;
                  assertThat(outage.heldElsewhere()).isFalse();
                  // The paused nodes time out, then the restart guard holds them back.
                  assertThat(outage.lastOutcomes().subList(0, 3))
                      .extracting(NodeOutcome::vote)
                      .allMatch(
                          v -> v == NodeOutcome.Vote.TIMEOUT || v == NodeOutcome.Vote.HELD_BACK);
                });
        assertThatThrownBy(() -> executed.get(60, TimeUnit.SECONDS))
            .cause()
            .isInstanceOf(CannotAcquireLockException.class);
      } finally {
        for (int i = 0; i < 3; i++) {
          servers.resume(i);
        }
        elsewhere.shutdownNow();
      }
      assertThat(ran).as("executeLocked ran its task").isFalse();
      Timing.await(
          "no key of the failed attempts left",
          () -> nodesHolding(prefix + ":42") == 0 && nodesHolding(prefix + ":43") == 0);
      assertThat(((RegistryLock) lock).isLocked()).as("the local lock is free").isFalse();
      // The restart guard counts the resumed nodes again at its next successful probe.
      Timing.await("the lock, once the resumed nodes count again", lock::tryLock);
      lock.unlock();
    }
  }
}
