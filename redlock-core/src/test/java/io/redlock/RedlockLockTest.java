package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.redlock.fake.SimulatedNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The {@link java.util.concurrent.locks.Lock} view over simulated nodes and a fake clock. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockLockTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  private static SimCluster cluster() {
    return new SimCluster(
        3,
        b ->
            b.ttl(TTL)
                .retryCount(2)
                .maxWait(Duration.ofSeconds(1))
                .retryDelay(Duration.ofMillis(200))
                .retryJitter(Duration.ofMillis(100)));
  }

  private static void takenByAnother(SimCluster c, Duration ttl) {
    for (SimulatedNode node : c.nodes) {
      node.put("r", "other", ttl);
    }
  }

  private static int extendRequests(SimCluster c) {
    return c.nodes.stream().mapToInt(SimulatedNode::extendRequests).sum();
  }

  @Test
  void onlyTheFirstHoldAcquiresAndOnlyTheLastUnlockReleases() {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    lock.lock();
    lock.lock();
    assertThat(lock.tryLock()).isTrue();
    assertThat(lock.getHoldCount()).isEqualTo(3);
    assertThat(c.totalLockRequests()).as("one round for three holds").isEqualTo(3);
    String token = lock.lease().token();

    lock.unlock();
    lock.unlock();
    assertThat(lock.getHoldCount()).isEqualTo(1);
    assertThat(c.holding("r", token)).as("held until the last unlock").isEqualTo(3);
    lock.unlock();
    assertThat(lock.isLocked()).isFalse();
    assertThat(c.holding("r")).isZero();
    assertThatThrownBy(lock::unlock)
        .isInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining("not held by the current thread");
  }

  @Test
  void anotherThreadOfThisJvmIsKeptOutLocallyAndCannotUnlock() throws Exception {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    String[] token = new String[1];
    Thread holder =
        new Thread(
            () -> {
              lock.lock();
              token[0] = lock.lease().token();
            });
    holder.start();
    holder.join(20_000);
    assertThat(token[0]).as("the other thread holds it").isNotNull();
    int requests = c.totalLockRequests();

    assertThat(c.redlock.asLock("r")).as("one view per resource").isSameAs(lock);
    assertThat(lock.isLocked()).isTrue();
    assertThat(lock.tryLock()).isFalse();
    assertThat(lock.tryLock(1, TimeUnit.NANOSECONDS)).isFalse();
    assertThat(c.totalLockRequests()).as("decided locally, no node asked").isEqualTo(requests);
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(lock::lease).isInstanceOf(IllegalMonitorStateException.class);
    assertThat(c.holding("r", token[0])).isEqualTo(3);
  }

  @Test
  void tryLockMakesExactlyOneAttempt() {
    SimCluster c = new SimCluster(3, b -> b.retryCount(10));
    takenByAnother(c, TTL);
    RedlockLock lock = c.redlock.asLock("r");
    assertThat(lock.tryLock()).isFalse();
    assertThat(c.totalLockRequests()).isEqualTo(3);
    assertThat(lock.isLocked()).isFalse();
    c.time.advance(Duration.ofSeconds(5));
    assertThat(c.totalLockRequests()).as("no retry").isEqualTo(3);
  }

  // The blocking calls below run on the test thread: while they wait, the fake clock runs its
  // timer (FakeTime.await), so time passes exactly as the lock's own timers say.

  @Test
  void tryLockWithATimeWaitsExactlyThatLongAcrossRetryBudgets() throws Exception {
    SimCluster c = cluster(); // a budget: 3 attempts within 1 s
    takenByAnother(c, Duration.ofMinutes(1));
    RedlockLock lock = c.redlock.asLock("r");
    long start = c.time.nanoTime();

    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isFalse();
    assertThat(c.time.nanoTime() - start).isEqualTo(TimeUnit.SECONDS.toNanos(5));
    assertThat(c.totalLockRequests() / 3).as("attempts: more than one budget").isGreaterThan(3);
    assertThat(c.holding("r", "other")).as("only the other holder's keys").isEqualTo(3);
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void tryLockWithATimeGetsTheLockWhenItFreesUpInTime() throws Exception {
    SimCluster c = cluster();
    takenByAnother(c, Duration.ofSeconds(2));
    RedlockLock lock = c.redlock.asLock("r");
    long start = c.time.nanoTime();

    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
    assertThat(c.time.nanoTime() - start)
        .isBetween(TimeUnit.SECONDS.toNanos(2), TimeUnit.SECONDS.toNanos(5) - 1);
    assertThat(c.holding("r", lock.lease().token())).isEqualTo(3);
    lock.unlock();
  }

  @Test
  void lockInterruptiblyLeavesNothingHeldWhenInterrupted() {
    SimCluster c = cluster();
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10)); // the answers are still on their way
    }
    RedlockLock lock = c.redlock.asLock("r");
    Thread caller = Thread.currentThread();
    c.time.schedule(caller::interrupt, Duration.ofMillis(5).toNanos());

    assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
    assertThat(c.totalLockRequests()).isEqualTo(3);
    assertThat(lock.isLocked()).as("the local lock is free").isFalse();
    c.time.advance(Duration.ofMillis(10)); // granted now, after the caller gave up
    c.time.advance(Duration.ofMillis(10)); // and released
    assertThat(c.holding("r")).as("no key left on any node").isZero();
    assertThat(Thread.interrupted()).as("the exception consumed the interrupt").isFalse();
  }

  @Test
  void lockIsNotInterruptibleAndRestoresTheInterruptFlag() {
    SimCluster c = cluster();
    takenByAnother(c, Duration.ofSeconds(3));
    RedlockLock lock = c.redlock.asLock("r");
    long start = c.time.nanoTime();
    Thread caller = Thread.currentThread();
    c.time.schedule(caller::interrupt, Duration.ofMillis(100).toNanos());

    lock.lock(); // across three budgets of 1 s, and the interrupt
    assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
    assertThat(c.time.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(3));
    assertThat(c.holding("r", lock.lease().token())).isEqualTo(3);
    lock.unlock();
  }

  @ParameterizedTest
  @ValueSource(strings = {"lock", "lockInterruptibly"})
  void waitingGivesUpWhenNoMajorityAnsweredForMaxWait(String how) {
    SimCluster c = cluster(); // maxWait 1 s
    c.node(0).crash();
    c.node(1).crash();
    RedlockLock lock = c.redlock.asLock("r");
    long start = c.time.nanoTime();

    Throwable thrown =
        catchThrowable(
            () -> {
              if (how.equals("lock")) {
                lock.lock();
              } else {
                lock.lockInterruptibly();
              }
            });

    assertThat(thrown)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("no majority of the nodes answered")
        .hasMessageContaining("last attempt: [sim://node0 HELD_BACK");
    LockUnavailableException outage = (LockUnavailableException) thrown;
    assertThat(outage.lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsExactly(
            NodeOutcome.Vote.HELD_BACK, NodeOutcome.Vote.HELD_BACK, NodeOutcome.Vote.GRANTED);
    assertThat(outage.heldElsewhere()).isFalse();
    assertThat(outage.elapsed()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
    assertThat(c.time.nanoTime() - start)
        .as("one budget of 1 s and the next, at most")
        .isLessThan(TimeUnit.SECONDS.toNanos(3));
    assertThat(lock.isLocked()).as("the local lock is free").isFalse();
    c.time.advance(Duration.ofMillis(100));
    assertThat(c.holding("r")).as("the answering node's grants were undone").isZero();
  }

  @Test
  void waitingOnAHolderNeverGivesUpEvenWithANodeDown() {
    SimCluster c = cluster(); // maxWait 1 s
    takenByAnother(c, Duration.ofSeconds(2));
    c.node(0).crash(); // a minority down: the rest still show the holder
    RedlockLock lock = c.redlock.asLock("r");
    c.time.schedule(() -> c.node(0).recover(), TimeUnit.SECONDS.toNanos(1));
    long start = c.time.nanoTime();

    lock.lock(); // the holder's keys expire after 2 s: budgets of 1 s meet it twice

    assertThat(c.time.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(2));
    assertThat(c.holding("r", lock.lease().token())).isGreaterThanOrEqualTo(2);
    lock.unlock();
  }

  @ParameterizedTest
  @ValueSource(strings = {"lock", "lockInterruptibly", "tryLock", "tryLock(time)"})
  void theLeaseIsExtendedWhileHeldHoweverItWasTaken(String how) throws InterruptedException {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    switch (how) {
      case "lock" -> lock.lock();
      case "lockInterruptibly" -> lock.lockInterruptibly();
      case "tryLock" -> assertThat(lock.tryLock()).isTrue();
      case "tryLock(time)" -> assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
      default -> throw new IllegalArgumentException(how);
    }
    c.time.advanceInSteps(Duration.ofSeconds(35), Duration.ofMillis(500));
    assertThat(lock.lease().isValid()).isTrue();
    assertThat(extendRequests(c)).isGreaterThan(0);
    lock.unlock();
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void aLostLeaseFailsReentryAndUnlockFreesTheLockThenThrows() {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    lock.lock();
    takenByAnother(c, Duration.ofMinutes(1)); // the nodes forgot us; another took it
    c.time.advanceInSteps(Duration.ofSeconds(6), Duration.ofMillis(500)); // the watchdog looks

    assertThat(lock.lease().isValid()).isFalse();
    assertThat(lock.tryLock()).as("leader election: leadership lost").isFalse();
    assertThat(lock.getHoldCount()).isEqualTo(1);
    assertThatThrownBy(lock::lock).isInstanceOf(LeaseLostException.class);
    assertThat(lock.getHoldCount()).isEqualTo(1);

    LeaseLostException e = (LeaseLostException) catchThrowable(lock::unlock);
    assertThat(e).isNotNull();
    assertThat(e.lossCause()).isEqualTo(LossCause.NOT_HELD);
    assertThat(lock.isLocked()).as("freed before throwing").isFalse();
    assertThat(c.holding("r", "other")).as("the other holder's keys stay").isEqualTo(3);
  }

  @Test
  void unlockAfterTheRedlockClosedReportsTheLoss() {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    lock.lock();
    c.redlock.close();
    LeaseLostException e = (LeaseLostException) catchThrowable(lock::unlock);
    assertThat(e.lossCause()).isEqualTo(LossCause.CLOSED);
    assertThat(lock.isLocked()).isFalse();
  }

  @Test
  void newConditionSaysWhyItIsNotSupported() {
    SimCluster c = cluster();
    assertThatThrownBy(() -> c.redlock.asLock("r").newCondition())
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("signal from another process");
  }

  @Test
  void badInputGetsTheSameErrorAsAcquire() {
    SimCluster c = cluster();
    Redlock r = c.redlock;
    assertSameError(
        () -> r.asLock(null), () -> r.acquireAsync(java.util.Collections.singletonList(null), TTL));
    assertSameError(() -> r.asLock(""), () -> r.acquireAsync("", TTL));
    String huge = "x".repeat(RedlockConfig.MAX_KEY_BYTES + 1);
    assertSameError(() -> r.asLock(huge), () -> r.acquireAsync(huge, TTL));
    Duration tooShort = Duration.ofMillis(20); // not longer than the 50 ms node timeout
    assertSameError(() -> r.asLock("r", tooShort), () -> r.acquireAsync("r", tooShort));
    assertSameError(() -> r.asLock("r", null), () -> r.acquireAsync("r", null));
    assertSameError(
        () -> r.asLock("r", Duration.ofDays(400)), () -> r.acquireAsync("r", Duration.ofDays(400)));
    assertThatThrownBy(() -> r.asLock("r", Duration.ofDays(400)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("maxTtl");
  }

  @Test
  void oneResourceHasOneViewAndItsTtl() {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    assertThat(c.redlock.asLock("r", TTL)).isSameAs(lock);
    assertThat(c.redlock.asLock("s")).isNotSameAs(lock);
    assertThatThrownBy(() -> c.redlock.asLock("r", Duration.ofSeconds(20)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl 20000 ms", "'r'", "10000 ms");
  }

  private static void assertSameError(Runnable asLock, Runnable acquire) {
    Throwable expected = catchThrowable(acquire::run);
    Throwable actual = catchThrowable(asLock::run);
    assertThat(expected).isNotNull();
    assertThat(actual).isNotNull().hasSameClassAs(expected).hasMessage(expected.getMessage());
  }

  @Test
  void viewsOfLeasesNotHeldAreNotPinned() {
    SimCluster c = cluster();
    RedlockLock lock = c.redlock.asLock("r");
    lock.lock();
    assertThat(List.copyOf(pinned(c))).containsExactly(lock);
    lock.unlock();
    assertThat(pinned(c)).isEmpty();
  }

  private static java.util.Set<RedlockLock> pinned(SimCluster c) {
    return c.redlock.lockViews().pinned;
  }
}
