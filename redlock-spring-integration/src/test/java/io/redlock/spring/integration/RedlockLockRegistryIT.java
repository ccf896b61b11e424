package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.LeaseLostException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.FaultLog;
import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.SpringVersion;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The registry against five real nodes, on the Spring Integration line the failsafe execution
 * put on the class path (7.0, then 6.5).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockLockRegistryIT {

  private static RedisServers servers;
  private static Redlock redlock;
  private static Redlock other;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5); // declared fresh: the restart guard counts them
    redlock = Redlock.create(TestConfigs.patient(servers));
    other = Redlock.create(TestConfigs.patient(servers));
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {redlock, other, servers}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
  }

  private static String registryKey() {
    return "si:" + UUID.randomUUID();
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
  void runsOnTheSpringIntegrationLineOfThisExecution() throws ClassNotFoundException {
    String expected = System.getProperty("redlock.test.spring-integration");
    assertThat(expected).as("set by the failsafe execution").isNotBlank();
    assertThat(LockRegistry.class.getPackage().getImplementationVersion()).isEqualTo(expected);
    // Spring Framework in the line that Spring Integration brings: 7.0 with 7, 6.2 with 6.5.
    String framework = expected.startsWith("7.") ? "7." : "6.2.";
    assertThat(SpringVersion.getVersion()).startsWith(framework);
    boolean distributed;
    try {
      Class.forName("org.springframework.integration.support.locks.DistributedLock");
      distributed = true;
    } catch (ClassNotFoundException e) {
      distributed = false;
    }
    assertThat(distributed).isEqualTo(expected.startsWith("7."));
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, registryKey());
    Lock lock = registry.obtain("k");
    assertThat(lock).isInstanceOf(RedlockRegistryLock.class);
    assertThat(lock.getClass() != RegistryLock.class)
        .as("the lock is a DistributedLock exactly when that type exists")
        .isEqualTo(distributed);
    if (distributed) {
      assertThat(
              Class.forName("org.springframework.integration.support.locks.DistributedLock")
                  .isInstance(lock))
          .isTrue();
    }
  }

  @Test
  void aHolderReadsItsLeaseAndAFencingTokenThatGrowsWithEachHolder() throws Exception {
    String prefix = registryKey();
    try (Redlock fenced =
        Redlock.create(TestConfigs.patient(servers).toBuilder().fencing(true).build())) {
      RedlockLockRegistry registry = new RedlockLockRegistry(fenced, prefix);
      RedlockRegistryLock idle = registry.obtain("42");
      assertThat(idle.lockKey()).isEqualTo("42");
      assertThatThrownBy(idle::lease).isInstanceOf(IllegalMonitorStateException.class);
      long first;
      // The docs' lines, from here to the end of the finally block.
      RedlockRegistryLock lock = registry.obtain("42");
      lock.lock();
      try {
        long token = lock.lease().fencingToken(); // fencing on in the Redlock's configuration
        first = token; // test-only
        assertThat(lock.lease().resources()).containsExactly(prefix + ":42"); // test-only
        lock.lock(); // test-only: reentrant, the same lease
        assertThat(lock.lease().fencingToken()).isEqualTo(token); // test-only
        lock.unlock(); // test-only
        // ... write order 42, passing the token along
      } finally {
        lock.unlock();
      }
      ExecutorService thread = Executors.newSingleThreadExecutor();
      try {
        long next =
            thread
                .submit(
                    () -> {
                      lock.lock();
                      try {
                        return lock.lease().fencingToken();
                      } finally {
                        lock.unlock();
                      }
                    })
                .get();
        assertThat(next).as("a later holder's token").isGreaterThan(first);
      } finally {
        thread.shutdown();
      }
    }
  }

  @Test
  void obtainCachesOneLockPerStringKey() {
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, registryKey());
    assertThat(registry.obtain("a")).isSameAs(registry.obtain("a"));
    assertThat(registry.obtain("a")).isNotSameAs(registry.obtain("b"));
    assertThatThrownBy(() -> registry.obtain(42))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockKey of java.lang.Integer is not accepted");
    assertThatThrownBy(() -> new RedlockLockRegistry(redlock, ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("registryKey");
    RedlockLockRegistry tooLong =
        new RedlockLockRegistry(redlock, registryKey(), Duration.ofDays(1));
    assertThatThrownBy(() -> tooLong.obtain("a"))
        .isInstanceOf(io.redlock.RedlockConfigException.class)
        .hasMessageContaining("ttl");
    for (Duration notPositive : List.of(Duration.ZERO, Duration.ofSeconds(-1))) {
      assertThatThrownBy(() -> new RedlockLockRegistry(redlock, registryKey(), notPositive))
          .isInstanceOf(io.redlock.RedlockConfigException.class)
          .hasMessageStartingWith("ttl " + notPositive + " is not accepted: it must be positive");
    }
    assertThatThrownBy(() -> new RedlockLockRegistry(redlock, registryKey(), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("ttl");
  }

  @Test
  void locksExcludeAcrossProcessesOnTheRegistryKeyPrefixedResource() throws Exception {
    String prefix = registryKey();
    RedlockLockRegistry here = new RedlockLockRegistry(redlock, prefix);
    RedlockLockRegistry there = new RedlockLockRegistry(other, prefix);
    Lock lock = here.obtain("42");
    lock.lock();
    try {
      assertThat(nodesHolding(prefix + ":42")).isGreaterThanOrEqualTo(3);
      ExecutorService thread = Executors.newSingleThreadExecutor();
      try {
        assertThat(thread.submit(() -> there.obtain("42").tryLock()).get()).isFalse();
      } finally {
        thread.shutdown();
      }
    } finally {
      lock.unlock();
    }
    Lock theirs = there.obtain("42");
    assertThat(theirs.tryLock(5, TimeUnit.SECONDS)).isTrue();
    theirs.unlock();
  }

  @Test
  void executeLockedRunsUnderTheLock() throws Exception {
    String prefix = registryKey();
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, prefix);
    int held = registry.executeLocked("job", () -> nodesHolding(prefix + ":job"));
    assertThat(held).isGreaterThanOrEqualTo(3);
    Timing.await("released on every node", () -> nodesHolding(prefix + ":job") == 0);
  }

  @Test
  void theInterruptFlagIsNeverSwallowed() throws Exception {
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, registryKey());
    Lock lock = registry.obtain("k");
    Thread.currentThread().interrupt();
    try {
      lock.lock(); // not interruptible: acquires, and keeps the flag
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      registry.renewLock("k");
      assertThat(Thread.interrupted()).as("flag kept by lock() and renewLock()").isTrue();
    } finally {
      lock.unlock();
    }
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
        .isInstanceOf(InterruptedException.class);
    Thread.currentThread().interrupt();
    assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();
    assertThat(lock.tryLock()).as("nothing is held after the interrupts").isTrue();
    lock.unlock();
  }

  @Test
  void renewLockExtendsTheHoldersLease() throws Exception {
    String prefix = registryKey();
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, prefix);
    assertThatThrownBy(() -> registry.renewLock("k"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not held by the current thread");
    Lock lock = registry.obtain("k");
    lock.lock();
    try {
      registry.renewLock("k", Duration.ofSeconds(50)); // the default ttl is 30 s
      int longer = 0;
      for (int i = 0; i < servers.size(); i++) {
        if ((Long) servers.command(i, "PTTL", prefix + ":k") > 40_000) {
          longer++;
        }
      }
      assertThat(longer).isGreaterThanOrEqualTo(3);
      assertThatThrownBy(() -> registry.renewLock("k", Duration.ofDays(1)))
          .isInstanceOf(io.redlock.RedlockConfigException.class);
    } finally {
      lock.unlock();
    }
  }

  @Test
  void theCacheNeverEvictsAHeldLock() throws Exception {
    RedlockLockRegistry registry = new RedlockLockRegistry(redlock, registryKey());
    registry.setCacheCapacity(2);
    Lock held = registry.obtain("held");
    held.lock();
    try {
      Lock idle = registry.obtain("idle");
      for (int i = 0; i < 5; i++) {
        registry.obtain("other" + i);
      }
      assertThat(registry.cached()).isEqualTo(2);
      assertThat(registry.obtain("held")).as("held: kept").isSameAs(held);
      assertThat(registry.obtain("idle")).as("idle: evicted").isNotSameAs(idle);
      // with the cache full of held locks, the lock just obtained is the one kept
      registry.setCacheCapacity(1);
      Lock newest = registry.obtain("newest");
      assertThat(registry.obtain("newest"))
          .as("newest: kept while held ones fill the cache")
          .isSameAs(newest);
      registry.setCacheCapacity(2);
      registry.expireUnusedOlderThan(0);
      assertThat(registry.obtain("held")).isSameAs(held);
      assertThat(registry.cached()).isLessThanOrEqualTo(2);
    } finally {
      held.unlock();
    }
    registry.expireUnusedOlderThan(-1);
    assertThat(registry.cached()).isZero();
  }

  @Test
  void aLeaseLostWhileHeldIsReportedAtOnceAndUnlockThrowsAfterFreeingTheLock() throws Exception {
    try (ProxiedFleet net = ProxiedFleet.of(servers, new FaultLog());
        Redlock cutOff =
            Redlock.create(
                RedlockConfig.builder()
                    .nodes(net.urisFor("holder"))
                    .ttl(Duration.ofSeconds(1))
                    .build())) {
      RedlockLockRegistry registry = new RedlockLockRegistry(cutOff, registryKey());
      List<String> lost = new CopyOnWriteArrayList<>();
      registry.setLossListener((key, e) -> lost.add(key + " " + e.lossCause()));
      Lock lock = registry.obtain("k");
      lock.lock();
      net.partition("holder", 0, 1, 2);
      Timing.await("the loss reported while the lock is still held", () -> !lost.isEmpty());
      assertThat(lost).hasSize(1);
      assertThat(lost.get(0)).startsWith("k ");
      assertThatThrownBy(lock::lock)
          .as("reentrant lock() on a lost lease")
          .isInstanceOf(ConcurrentModificationException.class)
          .hasCauseInstanceOf(LeaseLostException.class);
      assertThatThrownBy(lock::unlock)
          .isInstanceOf(ConcurrentModificationException.class)
          .hasMessageContaining("was lost while held (unlock)")
          .hasCauseInstanceOf(LeaseLostException.class);
      assertThatThrownBy(lock::unlock)
          .as("the local lock was freed")
          .isInstanceOf(IllegalMonitorStateException.class);

      net.heal("holder");
      assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
      lock.lock(); // two holds
      net.partition("holder", 0, 1, 2);
      Timing.await("the second loss reported", () -> lost.size() == 2);
      assertThat(lock.tryLock(1, TimeUnit.SECONDS))
          .as("reentrant tryLock on a lost lease: false, and both holds given up")
          .isFalse();
      ExecutorService thread = Executors.newSingleThreadExecutor();
      try {
        assertThat(thread.submit(() -> ((RegistryLock) registry.obtain("k")).isLocked()).get())
            .as("the local lock is free for other threads")
            .isFalse();
      } finally {
        thread.shutdown();
      }
      assertThatThrownBy(lock::unlock)
          .as("the holder's unlock still hears of the loss")
          .isInstanceOf(ConcurrentModificationException.class)
          .hasMessageContaining("already gave up its holds");
      assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
      net.heal("holder");
      assertThat(lock.tryLock(10, TimeUnit.SECONDS)).as("the next try starts afresh").isTrue();
      lock.unlock();
      assertThat(lost).hasSize(2);
    }
  }
}
