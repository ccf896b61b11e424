package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.redlock.LeaseLostException;
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
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link java.util.concurrent.locks.Lock} view on five real redis-server processes (a fresh
 * fleet, restart guard on): a short-ttl lock stays held for many ttls because the watchdog
 * extends it, a lock whose keys another client took on a majority reports the loss, and a timed
 * {@code tryLock} gives up on an interrupt holding nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockViewIT {
  private static final Duration TTL = Duration.ofSeconds(1);

  private final List<RedlockEvent.LeaseLost> losses = new CopyOnWriteArrayList<>();
  private final List<RedlockEvent.Extension> extended = new CopyOnWriteArrayList<>();
  private final List<RedlockEvent.NodeVote> acquireVotes = new CopyOnWriteArrayList<>();
  private RedisServers servers;
  private Redlock redlock;

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(5);
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void leaseLost(RedlockEvent.LeaseLost event) {
            losses.add(event);
          }

          @Override
          public void extended(RedlockEvent.Extension event) {
            extended.add(event);
          }

          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            if (event.operation() == RedlockEvent.Operation.ACQUIRE) {
              acquireVotes.add(event);
            }
          }
        };
    redlock =
        Redlock.create(RedlockConfig.builder().nodes(servers.uris()).listener(listener).build());
  }

  @AfterEach
  void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  /** Extensions a majority confirmed; one may go unconfirmed on a busy machine, and is retried. */
  private long confirmedExtensions() {
    return extended.stream()
        .filter(e -> e.outcome() == RedlockEvent.ExtendOutcome.EXTENDED)
        .count();
  }

  private static String resource() {
    return "lock-view:" + UUID.randomUUID();
  }

  @Test
  void aShortTtlLockIsHeldForManyTtlsBecauseTheWatchdogExtendsIt() throws Exception {
    String resource = resource();
    RedlockLock lock = redlock.asLock(resource, TTL);
    lock.lock();
    long start = System.nanoTime();
    String token = lock.lease().token();
    // Granted by a majority (a node whose vote timed out on a busy machine may never hold it)
    assertThat(servers.holding(resource, token)).isGreaterThanOrEqualTo(3);

    // Held for four ttls: without extension every key would have expired after one. Each poll
    // checks that a majority still holds the token, so a key that expires fails the test.
    int[] fewestHolding = {servers.size()};
    Timing.await(
        "four ttls to pass with the lock held and extended",
        Duration.ofSeconds(20),
        () -> {
          fewestHolding[0] = Math.min(fewestHolding[0], servers.holding(resource, token));
          return System.nanoTime() - start > TTL.multipliedBy(4).toNanos()
              && confirmedExtensions() >= 4;
        });
    assertThat(fewestHolding[0])
        .as("fewest nodes holding the token at a check")
        .isGreaterThanOrEqualTo(3);
    assertThat(lock.lease().isValid()).isTrue();
    assertThat(lock.lease().token()).isEqualTo(token);
    assertThat(losses).isEmpty();
    assertThat(lock.tryLock()).as("reentrant tryLock on a live lease").isTrue();
    assertThat(lock.getHoldCount()).isEqualTo(2);
    lock.unlock();

    lock.unlock(); // the last hold: the lease was never lost, so no LeaseLostException
    assertThat(lock.isLocked()).isFalse();
    Timing.await(
        "no node to hold the lock", Duration.ofSeconds(5), () -> servers.holding(resource) == 0);
  }

  @Test
  void keysTakenAwayOnAMajorityAreReportedAndUnlockFreesTheLockThenThrows() throws Exception {
    String resource = resource();
    // A few seconds, so that an extension that times out on a busy machine is retried before
    // the validity runs out: the loss must be found on the nodes (NOT_HELD), not by expiry.
    RedlockLock lock = redlock.asLock(resource, Duration.ofSeconds(3));
    lock.lock();
    String token = lock.lease().token();
    // Granted by a majority; whether nodes 3 and 4 hold it too changes nothing below: nodes
    // 0, 1 and 2 alone make the extension fail as NOT_HELD
    assertThat(servers.holding(resource, token)).isGreaterThanOrEqualTo(3);

    // Another client took the resource on nodes 0, 1 and 2 (say, after they lost our keys).
    for (int i = 0; i < 3; i++) {
      servers.command(i, "DEL", resource);
      servers.command(i, "SET", resource, "other", "PX", "60000");
    }
    Timing.await("the loss to be reported", Duration.ofSeconds(10), () -> !losses.isEmpty());
    assertThat(losses.get(0).cause()).isEqualTo(LossCause.NOT_HELD);
    assertThat(losses.get(0).lease().token()).isEqualTo(token);
    assertThat(lock.lease().isValid()).isFalse();
    assertThat(lock.tryLock()).as("reentrant tryLock after the loss: leadership lost").isFalse();
    assertThat(lock.getHoldCount()).isEqualTo(1);

    LeaseLostException e = (LeaseLostException) catchThrowable(lock::unlock);
    assertThat(e).as("unlock reports the loss").isNotNull();
    assertThat(e.lossCause()).isEqualTo(LossCause.NOT_HELD);
    assertThat(lock.isLocked()).as("the local lock is freed before the throw").isFalse();
    assertThat(lock.getHoldCount()).isZero();
    assertThat(servers.holding(resource, "other")).as("the other client's keys stay").isEqualTo(3);
    Timing.await(
        "our keys on nodes 3 and 4 to be released or expire",
        Duration.ofSeconds(5),
        () -> servers.holding(resource, token) == 0);
    assertThat(servers.holding(resource, "other")).isEqualTo(3);
  }

  @Test
  void aTimedTryLockStopsOnAnInterruptAndHoldsNothing() throws Exception {
    String resource = resource();
    for (int i = 0; i < servers.size(); i++) {
      servers.command(i, "SET", resource, "other", "PX", "60000"); // held by another client
    }
    RedlockLock lock = redlock.asLock(resource, TTL);
    CountDownLatch started = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Boolean> waiting =
          pool.submit(
              () -> {
                started.countDown();
                return lock.tryLock(60, TimeUnit.SECONDS);
              });
      started.await();
      Timing.await(
          "the waiting thread's first attempt to be voted down",
          Duration.ofSeconds(10),
          () -> acquireVotes.size() >= servers.size());
      pool.shutdownNow(); // interrupts the waiting thread

      long patience = Timing.scaled(Duration.ofSeconds(10)).toMillis();
      Throwable thrown = catchThrowable(() -> waiting.get(patience, TimeUnit.MILLISECONDS));
      assertThat(thrown).as("ends long before its 60 s").isNotInstanceOf(TimeoutException.class);
      assertThat(thrown).isInstanceOf(ExecutionException.class);
      assertThat(thrown.getCause()).isInstanceOf(InterruptedException.class);
    } finally {
      pool.shutdownNow();
    }
    assertThat(lock.isLocked()).as("the local lock is not held").isFalse();
    assertThat(servers.holding(resource, "other")).isEqualTo(servers.size());

    // Every node still holds the other client's value, so the interrupted attempt wrote
    // nothing anywhere. Once the resource is free, this thread takes the lock: the local lock
    // was given back too. (Retried: one attempt may time out on a busy machine.)
    for (int i = 0; i < servers.size(); i++) {
      servers.command(i, "DEL", resource);
    }
    long patience = Timing.scaled(Duration.ofSeconds(10)).toMillis();
    assertThat(lock.tryLock(patience, TimeUnit.MILLISECONDS)).isTrue();
    lock.unlock();
  }
}
