package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * The code of the "Spring Integration" section of docs/integrations.md, run in a Spring
 * application context against three real nodes, on both Spring Integration lines.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpringIntegrationDocsIT {
  static List<String> nodes;

  @Configuration
  static class LockConfig {
    @Bean
    Redlock redlock() {
      return Redlock.create(RedlockConfig.builder().nodes(nodes).build());
    }

    @Bean
    RedlockLockRegistry lockRegistry(Redlock redlock) {
      // instead of new RedisLockRegistry(connectionFactory, "orders")
      return new RedlockLockRegistry(redlock, "orders");
    }

    @Bean
    LockRegistryLeaderInitiator leaderInitiator(RedlockLockRegistry lockRegistry) {
      LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(lockRegistry);
      // Step down when the lease is lost, not at the next heartbeat (see "Leader election")
      AtomicReference<Thread> selector = new AtomicReference<>();
      initiator.setTaskExecutor(
          new SimpleAsyncTaskExecutor(
              task -> {
                Thread thread = new Thread(task, "leader-selector");
                selector.set(thread);
                return thread;
              }));
      lockRegistry.setLossListener(
          (lockKey, lost) -> {
            if (lockKey.equals(initiator.getContext().getRole())) {
              initiator.getContext().yield(); // read when Spring's loop comes round again,
              selector.get().interrupt(); // so wake it from its sleep between heartbeats
            }
          });
      return initiator;
    }
  }

  private final List<Integer> shipped = new java.util.ArrayList<>();

  private void shipOrder(int order) {
    shipped.add(order);
  }

  /** The README's Spring Integration snippet: executeLocked runs the task under the lock. */
  @Test
  void theReadmeSnippetRunsTheTaskUnderTheLock() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3); // test-only
        Redlock redlock = Redlock.create(TestConfigs.patient(servers))) { // test-only
      RedlockLockRegistry registry = new RedlockLockRegistry(redlock, "orders");
      registry.executeLocked("42", () -> shipOrder(42));
      assertThat(shipped).containsExactly(42);
      Lock again = registry.obtain("42");
      assertThat(again.tryLock()).as("released after the task").isTrue();
      again.unlock();
    }
  }

  @Test
  void theSnippetRunsInAnApplicationContext() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3)) { // test-only
      nodes = servers.uris(); // test-only
      try (AnnotationConfigApplicationContext spring = // test-only
          new AnnotationConfigApplicationContext(LockConfig.class)) { // test-only
        RedlockLockRegistry lockRegistry = spring.getBean(RedlockLockRegistry.class); // test-only
        boolean[] worked = new boolean[1]; // test-only
        Lock lock = lockRegistry.obtain("42");
        lock.lock();
        try {
          // ... work on order 42
          worked[0] = true; // test-only
        } finally {
          lock.unlock(); // ConcurrentModificationException if the lease was lost meanwhile
        }
        assertThat(worked[0]).isTrue();
        LockRegistryLeaderInitiator leader = spring.getBean(LockRegistryLeaderInitiator.class);
        Timing.await("the only candidate leads", () -> leader.getContext().isLeader());
        Timing.await(
            "orders:42 released on every node",
            () -> {
              for (int i = 0; i < servers.size(); i++) {
                if (!servers.command(i, "EXISTS", "orders:42").equals(0L)) {
                  return false;
                }
              }
              return true;
            });
      }
    }
  }
}
