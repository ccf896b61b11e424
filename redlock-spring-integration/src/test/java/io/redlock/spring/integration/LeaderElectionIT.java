package io.redlock.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.FaultLog;
import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on {@link RedlockLockRegistry}: two
 * candidates, each with its own {@link Redlock} reaching five nodes through its own proxies.
 * The leader is cut off from a majority of the nodes; the lead moves to the other one, and
 * back.
 *
 * <p><b>Never two leaders at once, in Spring's own events.</b> The leader learns that it lost
 * its lock when its lease stops being valid (its extensions cannot reach a majority); the
 * other candidate can acquire only once the keys expired on a majority of the nodes, which is
 * later: the keys outlive the lease's validity by at least the clock drift allowance. Left to
 * itself, Spring learns of the loss only at the leader's next heartbeat, when its {@code
 * tryLock} returns false, so its revoked and granted events could overlap by up to a
 * heartbeat. Each candidate here runs the recipe of docs/integrations.md: the registry's loss
 * listener yields the leadership and interrupts the initiator's thread, which is asleep
 * between heartbeats ({@code yield()} alone is read only when that sleep ends), so Spring
 * revokes the lead when the loss is reported. The test asserts, on each hand-over, that the
 * old leader's {@code onRevoked} ran before the new leader's {@code onGranted}, that the old
 * lease was no longer valid at that grant, and that the loss was reported with no unlock.
 * The order rests on the revocation taking less than that margin, so a leader whose process
 * stalls longer (a long GC pause) can still overlap: work that must never overlap the next
 * leader's uses fencing tokens, as with any lease-based lock.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LeaderElectionIT {
  /**
   * Long enough for the watchdog to try an extension many times before the lease's validity
   * (about 2.25 s here) ends: it extends once half the ttl is left and tries again every two
   * node timeouts. With 1 s (validity about 740 ms, so about five tries of 50 ms each), a
   * loaded machine could fail them all and lose a lease the test expects to be held.
   */
  private static final Duration TTL = Duration.ofSeconds(3);

  /**
   * The margin between the old leader's loss and the earliest grant to the other: the keys
   * outlive the lease's validity by its drift allowance ({@code ttl × driftFactor + 2 ms}).
   * Spring's revocation must land within it. With the default factor that is 32 ms at this
   * ttl, which a shared two-core CI machine can spend on handing the loss to a callback
   * thread alone; 0.25 gives 752 ms, as docs/integrations.md advises for election.
   */
  private static final double DRIFT_FACTOR = 0.25;

  /**
   * Twice the ttl: the watchdog, not the heartbeat, extends the lease, and a heartbeat far
   * longer than the margin means that without the recipe Spring would almost always revoke
   * the old lead after granting the new one.
   */
  private static final long HEARTBEAT_MILLIS = 2 * TTL.toMillis();

  /** One candidate: its Redlock, its registry, its initiator and what happened to it. */
  private static final class Node implements Candidate, AutoCloseable {
    final String id;
    final Redlock redlock;
    final RedlockLockRegistry registry;
    final LockRegistryLeaderInitiator initiator;
    final List<Lease> leases = new CopyOnWriteArrayList<>();
    final List<String> losses = new CopyOnWriteArrayList<>();
    final AtomicLong lossNanos = new AtomicLong();
    final AtomicLong grantedNanos = new AtomicLong();
    final AtomicLong revokedNanos = new AtomicLong();
    final AtomicLong lastGrantedNanos = new AtomicLong();
    final AtomicLong lastRevokedNanos = new AtomicLong();

    /** Between this candidate's onGranted and its onRevoked, as Spring told it. */
    volatile boolean leading;

    /** Set when Spring granted this candidate the lead while it told the rival it led. */
    volatile boolean grantedWhileRivalLed;

    final AtomicInteger grants = new AtomicInteger();
    final AtomicInteger failedTries = new AtomicInteger();
    volatile Node rival;
    volatile Boolean rivalLeaseValidWhenGranted;

    Node(String id, List<String> uris) {
      this.id = id;
      RedlockListener listener =
          new RedlockListener() {
            @Override
            public void acquireFinished(RedlockEvent.AcquireFinished event) {
              if (event.lease() != null) {
                leases.add(event.lease());
              }
            }
          };
      this.redlock =
          Redlock.create(
              RedlockConfig.builder()
                  .nodes(uris)
                  .ttl(TTL)
                  .driftFactor(DRIFT_FACTOR)
                  .listener(listener)
                  .build());
      this.registry = new RedlockLockRegistry(redlock, "election");
      this.initiator = new LockRegistryLeaderInitiator(registry, this);
      // The recipe of docs/integrations.md: step down when the lease is lost.
      AtomicReference<Thread> selector = new AtomicReference<>();
      initiator.setTaskExecutor(
          new SimpleAsyncTaskExecutor(
              task -> {
                Thread thread = new Thread(task, "leader-selector-" + id);
                selector.set(thread);
                return thread;
              }));
      registry.setLossListener(
          (lockKey, lost) -> {
            lossNanos.compareAndSet(0, System.nanoTime()); // test-only
            losses.add(lockKey); // test-only
            if (lockKey.equals(initiator.getContext().getRole())) {
              initiator.getContext().yield(); // read when Spring's loop comes round again,
              selector.get().interrupt(); // so wake it from its sleep between heartbeats
            }
          });
      initiator.setHeartBeatMillis(HEARTBEAT_MILLIS);
      initiator.setBusyWaitMillis(50);
      initiator.setPublishFailedEvents(true);
      initiator.setLeaderEventPublisher(
          new LeaderEventPublisher() {
            @Override
            public void publishOnGranted(Object source, Context context, String role) {}

            @Override
            public void publishOnRevoked(Object source, Context context, String role) {}

            @Override
            public void publishOnFailedToAcquire(Object source, Context context, String role) {
              failedTries.incrementAndGet();
            }
          });
    }

    @Override
    public String getRole() {
      return "leader";
    }

    @Override
    public String getId() {
      return id;
    }

    @Override
    public void onGranted(Context context) {
      Node other = rival;
      if (other.leading) {
        grantedWhileRivalLed = true;
      }
      leading = true;
      lastGrantedNanos.set(System.nanoTime());
      if (other.leases.stream().anyMatch(Lease::isValid)) {
        rivalLeaseValidWhenGranted = true;
      } else if (rivalLeaseValidWhenGranted == null) {
        rivalLeaseValidWhenGranted = false;
      }
      grantedNanos.compareAndSet(0, System.nanoTime());
      grants.incrementAndGet();
    }

    @Override
    public void onRevoked(Context context) {
      leading = false;
      revokedNanos.compareAndSet(0, System.nanoTime());
      lastRevokedNanos.set(System.nanoTime());
    }

    boolean leader() {
      return initiator.getContext().isLeader();
    }

    @Override
    public void close() {
      initiator.stop();
      redlock.close();
    }
  }

  @Test
  void leadershipMovesWhenTheLeaderIsCutOffAndSpringNeverHasTwoLeaders() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(5); // declared fresh: counted at once
        ProxiedFleet net = ProxiedFleet.of(servers, new FaultLog());
        Node a = new Node("a", net.urisFor("a"));
        Node b = new Node("b", net.urisFor("b"))) {
      a.rival = b;
      b.rival = a;
      a.initiator.start();
      Timing.await("a leads", a::leader);
      b.initiator.start();
      // Each try waits up to a heartbeat for the lock.
      Timing.await(
          "b tried and failed twice",
          Duration.ofMillis(2 * HEARTBEAT_MILLIS).plus(Timing.DEFAULT_WAIT),
          () -> b.failedTries.get() >= 2);
      assertThat(b.grantedNanos.get()).as("b was never granted while a led").isZero();
      assertThat(a.leader()).isTrue();
      assertThat(a.leases).as("a's lease, as its listener saw it").isNotEmpty();

      net.partition("a", 0, 1, 2); // a reaches 2 of 5 nodes: its extensions fail
      // Spring sets the flag that leader() reads before it calls onGranted: wait for the call.
      Timing.await("b leads", () -> b.leader() && b.grants.get() == 1);
      Timing.await("a no longer leads", () -> !a.leader() && a.revokedNanos.get() != 0);

      assertThat(b.rivalLeaseValidWhenGranted)
          .as("a's lease was invalid when b was granted")
          .isFalse();
      assertThat(a.losses).as("a's loss, reported with no unlock").containsExactly("leader");
      assertThat(a.lossNanos.get())
          .as("a's loss reported before b's grant")
          .isLessThan(b.grantedNanos.get());
      assertThat(a.revokedNanos.get())
          .as("Spring revoked a's lead (onRevoked) before it granted b's (onGranted)")
          .isLessThan(b.grantedNanos.get());
      assertThat(b.grantedWhileRivalLed).as("b granted while a was told it led").isFalse();
      // b's listener hears its lease on b's event thread, which may run after onGranted
      Timing.await("b holds a valid lease", () -> b.leases.stream().anyMatch(Lease::isValid));
      assertThat(a.leases.stream().anyMatch(Lease::isValid)).isFalse();

      // The old leader stepped down and runs again: cut the new one off, and the lead returns.
      net.heal("a");
      net.partition("b", 2, 3, 4);
      Timing.await("a leads again", () -> a.leader() && a.grants.get() == 2);
      Timing.await("b no longer leads", () -> !b.leader() && b.lastRevokedNanos.get() != 0);
      assertThat(a.rivalLeaseValidWhenGranted)
          .as("b's lease was invalid when a was granted again")
          .isFalse();
      assertThat(b.losses).containsExactly("leader");
      assertThat(b.lastRevokedNanos.get())
          .as("Spring revoked b's lead before it granted a's again")
          .isLessThan(a.lastGrantedNanos.get());
      assertThat(a.grantedWhileRivalLed).as("a granted while b was told it led").isFalse();
    }
  }
}
