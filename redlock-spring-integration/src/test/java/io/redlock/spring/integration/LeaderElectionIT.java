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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on {@link RedlockLockRegistry}: two
 * candidates, each with its own {@link Redlock} reaching five nodes through its own proxies.
 * The leader is cut off from a majority of the nodes; the lead moves to the other one.
 *
 * <p><b>What "never two leaders at once" can mean here.</b> The leader learns that it lost
 * its lock only when its lease runs out (its extensions cannot reach a majority), and Spring
 * learns it only at the leader's next heartbeat, when its {@code tryLock} returns false. The
 * other candidate can acquire only once the keys expired on a majority of the nodes, which is
 * after the old lease's validity ended (validity is measured from before the last extension
 * was sent, minus the clock drift allowance). So what the library guarantees, and this test
 * asserts, is about leases: when the new leader is granted, the old leader's lease is no
 * longer valid, and the old leader's loss was reported (by the loss listener) without any
 * unlock; and Spring's own record of the old leadership ends at most about one heartbeat
 * after its lease did. Spring's granted and revoked events may overlap by up to that
 * heartbeat: a leader's work that must not overlap the next leader's checks its lease (or
 * uses fencing), as with any lease-based lock.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LeaderElectionIT {
  private static final Duration TTL = Duration.ofSeconds(1);
  private static final long HEARTBEAT_MILLIS = 200;

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
          Redlock.create(RedlockConfig.builder().nodes(uris).ttl(TTL).listener(listener).build());
      this.registry = new RedlockLockRegistry(redlock, "election");
      registry.setLossListener(
          (key, e) -> {
            lossNanos.compareAndSet(0, System.nanoTime());
            losses.add(key);
          });
      this.initiator = new LockRegistryLeaderInitiator(registry, this);
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
      revokedNanos.compareAndSet(0, System.nanoTime());
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
  void leadershipMovesWhenTheLeaderIsCutOffAndNeverOverlapsALease() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(5); // declared fresh: counted at once
        ProxiedFleet net = ProxiedFleet.of(servers, new FaultLog());
        Node a = new Node("a", net.urisFor("a"));
        Node b = new Node("b", net.urisFor("b"))) {
      a.rival = b;
      b.rival = a;
      a.initiator.start();
      Timing.await("a leads", a::leader);
      b.initiator.start();
      Timing.await("b tried and failed five times", () -> b.failedTries.get() >= 5);
      assertThat(b.grantedNanos.get()).as("b was never granted while a led").isZero();
      assertThat(a.leader()).isTrue();
      assertThat(a.leases).as("a's lease, as its listener saw it").isNotEmpty();

      net.partition("a", 0, 1, 2); // a reaches 2 of 5 nodes: its extensions fail
      Timing.await("b leads", b::leader);
      Timing.await("a no longer leads", () -> !a.leader() && a.revokedNanos.get() != 0);

      assertThat(b.rivalLeaseValidWhenGranted)
          .as("a's lease was invalid when b was granted")
          .isFalse();
      assertThat(a.losses).as("a's loss, reported with no unlock").containsExactly("leader");
      assertThat(a.lossNanos.get()).isLessThan(b.grantedNanos.get() + TTL.toNanos());
      Duration lateness = Duration.ofNanos(a.revokedNanos.get() - a.lossNanos.get());
      assertThat(lateness)
          .as("Spring revoked a's lead within about a heartbeat of its lease's loss")
          .isLessThan(Timing.scaled(Duration.ofMillis(HEARTBEAT_MILLIS + 800)));
      assertThat(b.leases.stream().anyMatch(Lease::isValid)).as("b holds a valid lease").isTrue();
      assertThat(a.leases.stream().anyMatch(Lease::isValid)).isFalse();

      // The old leader stepped down and runs again: cut the new one off, and the lead returns.
      net.heal("a");
      net.partition("b", 2, 3, 4);
      Timing.await("a leads again", () -> a.leader() && a.grants.get() == 2);
      Timing.await("b no longer leads", () -> !b.leader());
      assertThat(a.rivalLeaseValidWhenGranted)
          .as("b's lease was invalid when a was granted again")
          .isFalse();
      assertThat(b.losses).containsExactly("leader");
    }
  }
}
