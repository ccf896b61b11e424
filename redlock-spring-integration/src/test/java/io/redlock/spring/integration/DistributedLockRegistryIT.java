package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.stereotype.Component;

/**
 * {@link RedlockDistributedLockRegistry}, Spring Integration 7's {@code
 * LockRegistry<DistributedLock>}, in a Spring application context against three real nodes:
 * injection points typed as Spring Integration 7's own registries take it, and its locks are
 * {@code DistributedLock}s with their lease and fencing token. Spring Integration 7 only: the
 * 6.5 failsafe execution leaves it out.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedLockRegistryIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3); // declared fresh: the restart guard counts them
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static int nodesHolding(String key) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", key) > 0) {
        count++;
      }
    }
    return count;
  }

  @Configuration
  static class LockConfig {
    @Bean
    Redlock redlock() {
      return Redlock.create(
          RedlockConfig.builder()
              .nodes(servers.uris())
              .nodeTimeout(Duration.ofMillis(500)) // test-only
              .fencing(true)
              .build());
    }

    @Bean
    RedlockDistributedLockRegistry lockRegistry(Redlock redlock) {
      // instead of new RedisLockRegistry(connectionFactory, "orders")
      return new RedlockDistributedLockRegistry(redlock, "orders");
    }

    @Bean
    OrderService orderService(LockRegistry<DistributedLock> lockRegistry) {
      return new OrderService(lockRegistry);
    }

    @Bean
    TypedInjectionPoints typedInjectionPoints(
        ExpirableLockRegistry<DistributedLock> expirable,
        RenewableLockRegistry<DistributedLock> renewable,
        LockRegistry<?> any) {
      return new TypedInjectionPoints(List.of(expirable, renewable, any));
    }
  }

  /** Code written against Spring Integration 7's types, as for {@code RedisLockRegistry}. */
  @Component
  static class OrderService {
    final LockRegistry<DistributedLock> lockRegistry;

    OrderService(LockRegistry<DistributedLock> lockRegistry) {
      this.lockRegistry = lockRegistry;
    }

    /** Ships an order under its lock, held with a ttl of its own; returns the fencing token. */
    long ship(String order) {
      DistributedLock lock = lockRegistry.obtain(order);
      lock.lock(Duration.ofSeconds(45)); // this lock's own ttl, at most maxTtl
      try {
        return ((RedlockDistributedLock) lock).lease().fencingToken();
      } finally {
        lock.unlock();
      }
    }
  }

  record TypedInjectionPoints(List<LockRegistry<?>> registries) {}

  @Test
  void injectionPointsOfSpringIntegration7sTypesTakeTheRegistry() {
    try (AnnotationConfigApplicationContext context =
        new AnnotationConfigApplicationContext(LockConfig.class)) {
      RedlockDistributedLockRegistry registry =
          context.getBean(RedlockDistributedLockRegistry.class);
      assertThat(context.getBean(OrderService.class).lockRegistry).isSameAs(registry);
      assertThat(context.getBean(TypedInjectionPoints.class).registries())
          .allSatisfy(r -> assertThat(r).isSameAs(registry));
      assertThat(context.getBean(AbstractRedlockLockRegistry.class)).isSameAs(registry);

      OrderService orders = context.getBean(OrderService.class);
      long first = orders.ship("42");
      long second = orders.ship("42");
      assertThat(first).isPositive();
      assertThat(second).as("a later holder's token").isGreaterThan(first);
    }
  }

  @Test
  void obtainReturnsADistributedLockWhoseTtlIsTheOneGiven() throws Exception {
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .nodeTimeout(Duration.ofMillis(500))
                .build())) {
      RedlockDistributedLockRegistry registry =
          new RedlockDistributedLockRegistry(redlock, "si7-ttl");
      RedlockDistributedLock lock = registry.obtain("42");
      assertThat(registry.obtain("42")).isSameAs(lock);
      assertThat(lock.lockKey()).isEqualTo("42");
      assertThat(lock.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(50))).isTrue();
      try {
        assertThat(lock.lease().resources()).containsExactly("si7-ttl:42");
        int longer = 0;
        for (int i = 0; i < servers.size(); i++) {
          if ((Long) servers.command(i, "PTTL", "si7-ttl:42") > 40_000) {
            longer++;
          }
        }
        assertThat(longer).as("nodes at the given 50 s, not the default 30 s").isGreaterThan(1);
        assertThatThrownBy(() -> lock.lease().fencingToken())
            .as("fencing is off in this Redlock")
            .isInstanceOf(IllegalStateException.class);
      } finally {
        lock.unlock();
      }
      int held =
          registry.executeLocked("43", Duration.ofSeconds(5), () -> nodesHolding("si7-ttl:43"));
      assertThat(held).as("nodes holding the key while the task ran").isGreaterThan(1);
      assertThat(registry.toString()).startsWith("RedlockDistributedLockRegistry{registryKey=si7");
    }
  }
}
