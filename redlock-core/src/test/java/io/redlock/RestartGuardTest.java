package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.NodeOutcome.Vote;
import io.redlock.sim.FakeTime;
import io.redlock.sim.SimulatedNode;
import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The restart guard and the start-up checks of DESIGN §3, over simulated nodes. */
class RestartGuardTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration HOLD_BACK = Duration.ofMillis(10_000 + 100 + 2); // ttl + drift

  @Test
  void aNodeRestartedEmptyIsHeldBackForTheLongestTtlPlusDrift() {
    SimCluster c = new SimCluster(3, b -> b.ttl(TTL).retryCount(0));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    // node 0 restarts and forgets our key: until every lease it may have forgotten has
    // ended, its votes must not count, or it could grant our resource to someone else
    c.node(0).restartEmpty();
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1)); // the probe sees the new run_id
    c.node(1).recover();
    lease.release();
    c.time.advance(Duration.ofSeconds(1));

    CompletableFuture<Lease> early = c.redlock.acquireAsync("s", TTL);
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(early);
    assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.ERROR);
    assertThat(e.lastOutcomes().get(0).detail()).contains("restart guard");
    assertThat(c.node(0).lockRequests()).as("a held-back node is not asked").isEqualTo(1);

    c.time.advanceInSteps(HOLD_BACK, Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("t", TTL)).isCompleted();
  }

  @Test
  void aMinorityHeldBackDoesNotStopTheLock() {
    SimCluster c = new SimCluster(5, b -> b.ttl(TTL));
    c.node(0).restartEmpty();
    c.node(1).restartEmpty();
    c.time.advance(Duration.ofSeconds(1));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(c.holding("r", lease.token())).isEqualTo(3);
    assertThat(c.node(0).valueOf("r")).isNull();
  }

  @Test
  void aNodeWhoseClockJumpedForwardIsHeldBackLikeARestartedOne() {
    SimCluster c = new SimCluster(3, b -> b.ttl(TTL).retryCount(0));
    c.time.advance(Duration.ofSeconds(1)); // a first periodic probe: the clock's baseline
    c.node(0).jumpClock(Duration.ofSeconds(30));
    c.time.advance(Duration.ofSeconds(1)); // the next probe sees 31 s pass in 1 s
    c.node(1).crash();
    LockUnavailableException e =
        (LockUnavailableException) SimCluster.failure(c.redlock.acquireAsync("r", TTL));
    assertThat(e.lastOutcomes().get(0).detail()).contains("restart guard");
  }

  @Test
  void aSlowlyDriftingClockWithinTheMarginIsNotAJump() {
    SimCluster c = new SimCluster(3, b -> b.ttl(TTL));
    for (int second = 0; second < 20; second++) {
      c.node(0).jumpClock(Duration.ofMillis(50)); // 5 % fast: under the 102 ms margin a second
      c.time.advance(Duration.ofSeconds(1));
    }
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void withTheGuardOffARestartedNodeCountsAtOnce() {
    SimCluster c = new SimCluster(3, b -> b.ttl(TTL).restartGuard(false));
    c.node(0).restartEmpty();
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aFreshClusterIsHeldBackUntilItHasBeenUpForTheHoldBack() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      SimulatedNode node = new SimulatedNode("sim://fresh" + i, time);
      node.restartEmpty(); // started just now
      nodes.add(node);
    }
    Redlock redlock = redlockOver(nodes, time);
    assertThat(redlock.acquireAsync("r", TTL)).isNotCompleted();
    time.advanceInSteps(HOLD_BACK.plusSeconds(1), Duration.ofMillis(100));
    // the acquisition's retries (default budget: 10 s) ran out first; a new one succeeds
    assertThat(redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void twoUrisReachingOneServerAreRefusedAtStart() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = List.of(new SimulatedNode("sim://a", time),
        new SimulatedNode("sim://b", time), new SimulatedNode("sim://c", time));
    nodes.get(2).sameServerAs(nodes.get(0));
    assertThatThrownBy(() -> redlockOver(nodes, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("sim://a").hasMessageContaining("sim://c")
        .hasMessageContaining("same server");
  }

  @Test
  void aReplicaIsRefusedAtStart() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = List.of(new SimulatedNode("sim://a", time),
        new SimulatedNode("sim://b", time), new SimulatedNode("sim://c", time));
    nodes.get(1).becomeReplica();
    assertThatThrownBy(() -> redlockOver(nodes, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("sim://b").hasMessageContaining("replica");
  }

  private static Redlock redlockOver(List<SimulatedNode> nodes, FakeTime time) {
    List<String> uris = new ArrayList<>();
    for (SimulatedNode node : nodes) {
      uris.add(node.name());
    }
    RedlockConfig config = RedlockConfig.builder().nodes(uris).ttl(TTL).build();
    try {
      return Redlock.over(config, List.<NodeClient>copyOf(nodes), time, new Random(1),
          Runnable::run);
    } catch (java.util.concurrent.CompletionException e) {
      throw (RuntimeException) e.getCause();
    }
  }
}
