package io.redlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link RedlockLockProvider#currentLease()}: the lease, and its fencing token, of the task that
 * ShedLock's own executor runs, against three real nodes with fencing on. Runs on ShedLock 6
 * and 7 (the module's two failsafe executions).
 *
 * <p>The executor makes one attempt per run: the node timeout is 500 ms rather than 50 ms, so
 * that a loaded machine does not refuse a run these tests expect to happen.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CurrentLeaseIT {
  private static RedisServers servers;
  private static Redlock redlock;
  private static RedlockLockProvider provider;
  private static LockingTaskExecutor executor;

  @BeforeAll
  static void start() throws InterruptedException {
    servers = RedisServers.startFresh(3); // declared fresh, as fencing needs
    redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .nodeTimeout(Duration.ofMillis(500))
                .fencing(true)
                .build());
    provider = new RedlockLockProvider(redlock, "jobs");
    executor = new DefaultLockingTaskExecutor(provider);
    // On a loaded machine the nodes may connect (and be probed) after the Redlock is made;
    // each run below is one attempt, so start once a lock can be had.
    Timing.await(
        "the nodes are connected and counted",
        () -> {
          try {
            Optional<Lease> lease = redlock.tryAcquire("warm-up:" + UUID.randomUUID());
            lease.ifPresent(Lease::release);
            return lease.isPresent();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  @AfterAll
  static void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private static LockConfiguration job(String name) {
    return new LockConfiguration(ClockProvider.now(), name, Duration.ofMinutes(14), Duration.ZERO);
  }

  /** Runs {@code task} under the lock {@code name}; fails if it did not run. */
  private static void run(String name, Runnable task) {
    AtomicReference<Boolean> ran = new AtomicReference<>(false);
    executor.executeWithLock(
        (Runnable)
            () -> {
              ran.set(true);
              task.run();
            },
        job(name));
    assertThat(ran.get()).as("task %s ran", name).isTrue();
  }

  private static Lease current() {
    return RedlockLockProvider.currentLease().orElseThrow();
  }

  @Test
  void aTaskReadsItsLeaseWhoseFencingTokenGrowsFromRunToRun() {
    String name = "export-" + UUID.randomUUID();
    List<Lease> seen = new ArrayList<>();
    assertThat(RedlockLockProvider.currentLease()).as("outside a task").isEmpty();
    for (int i = 0; i < 2; i++) {
      run(
          name,
          () -> {
            Lease lease = current();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.resources()).containsExactly(provider.resourceOf(name));
            seen.add(lease);
          });
      assertThat(RedlockLockProvider.currentLease()).as("after the run").isEmpty();
    }
    assertThat(seen.get(0).fencingToken()).isPositive();
    assertThat(seen.get(1).fencingToken()).isGreaterThan(seen.get(0).fencingToken());
  }

  @Test
  void theLeaseAndItsTokenStayTheSameWhenLockExtenderExtendsIt() {
    run(
        "extended-" + UUID.randomUUID(),
        () -> {
          Lease before = current();
          long token = before.fencingToken();
          LockExtender.extendActiveLock(Duration.ofMinutes(20), Duration.ZERO);
          assertThat(current()).isSameAs(before);
          assertThat(current().fencingToken()).isEqualTo(token);
          assertThat(before.isValid()).isTrue();
        });
  }

  @Test
  void aNestedTaskSeesItsOwnLeaseAndTheOuterTaskItsOwnAgainAfterwards() {
    String outer = "outer-" + UUID.randomUUID();
    String inner = "inner-" + UUID.randomUUID();
    run(
        outer,
        () -> {
          Lease mine = current();
          run(
              inner,
              () -> {
                assertThat(current()).isNotSameAs(mine);
                assertThat(current().resources()).containsExactly(provider.resourceOf(inner));
              });
          assertThat(current()).isSameAs(mine);
          // ShedLock runs a task nested in one of the same name under the outer lock.
          run(outer, () -> assertThat(current()).isSameAs(mine));
          assertThat(current()).isSameAs(mine);
        });
    assertThat(RedlockLockProvider.currentLease()).isEmpty();
  }

  @Test
  void aLeaseLostInATaskStaysCurrentAndInvalidAndTheNextTaskHasItsOwn() {
    String name = "lost-" + UUID.randomUUID();
    AtomicReference<Lease> lost = new AtomicReference<>();
    // The executor unlocks the lock it was given, which the failed extension spent: ShedLock
    // throws for that, after the task ran.
    assertThatThrownBy(
            () ->
                run(
                    name,
                    () -> {
                      lost.set(current());
                      for (int i = 0; i < servers.size(); i++) {
                        servers.command(i, "DEL", provider.resourceOf(name));
                      }
                      assertThatThrownBy(
                              () ->
                                  LockExtender.extendActiveLock(
                                      Duration.ofMinutes(20), Duration.ZERO))
                          .isInstanceOf(LockExtender.LockCanNotBeExtendedException.class);
                      assertThat(current()).isSameAs(lost.get());
                      assertThat(current().isValid()).isFalse();
                    }))
        .isInstanceOf(IllegalStateException.class);
    String next = "next-" + UUID.randomUUID();
    run(
        next,
        () -> {
          assertThat(current()).isNotSameAs(lost.get());
          assertThat(current().resources()).containsExactly(provider.resourceOf(next));
        });
    assertThat(RedlockLockProvider.currentLease()).as("the spent lock's lease is gone").isEmpty();
  }

  @Test
  void aLockUnlockedFromAnotherThreadIsNoLongerCurrentOnTheThreadThatTookIt() {
    String task = "task-" + UUID.randomUUID();
    String handed = "handed-" + UUID.randomUUID();
    run(
        task,
        () -> {
          Lease mine = current();
          SimpleLock lock = provider.lock(job(handed)).orElseThrow();
          assertThat(current().resources()).containsExactly(provider.resourceOf(handed));
          CompletableFuture.runAsync(lock::unlock).join();
          assertThat(current()).isSameAs(mine);
        });
  }

  @Test
  void aLockTakenOutsideATaskIsNotATasksLease() {
    SimpleLock lock = provider.lock(job("direct-" + UUID.randomUUID())).orElseThrow();
    try {
      assertThat(RedlockLockProvider.currentLease()).isEmpty();
    } finally {
      lock.unlock();
    }
  }
}
