package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.NodeState.Status;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Redlock#nodeStates()} over simulated nodes: what the restart guard's probes and the
 * connections' events tell of each node, with the guard on (the default) and off.
 */
class NodeStatesTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /** maxTtl plus its drift margin, with maxTtl = TTL. */
  private static final Duration HOLD_BACK = Duration.ofMillis(10_000 + 100 + 2);

  private static SimCluster cluster(boolean guard) {
    return new SimCluster(3, b -> b.ttl(TTL).maxTtl(TTL).retryCount(0).restartGuard(guard));
  }

  private static NodeState state(SimCluster c, int i) {
    return c.redlock.nodeStates().get(i);
  }

  @Test
  void aFreshClusterIsReachableAndCountedEverywhere() {
    SimCluster c = cluster(true);
    List<NodeState> states = c.redlock.nodeStates();
    assertThat(states).hasSize(3);
    for (int i = 0; i < 3; i++) {
      assertThat(states.get(i))
          .isEqualTo(new NodeState(i, "sim://node" + i, true, true, Status.COUNTED, ""));
    }
    assertThatThrownBy(() -> states.add(states.get(0)))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void aLostConnectionIsUnreachableAtOnceAndAnAnswerMakesItReachableAgain() {
    SimCluster c = cluster(true);
    c.node(1).crash();
    NodeState down = state(c, 1);
    assertThat(down.reachable()).isFalse();
    assertThat(down.counted()).as("not probed since it was reconnected").isFalse();
    assertThat(down.status()).isEqualTo(Status.UNREACHABLE);
    assertThat(down.reason()).isEqualTo("connection lost");

    c.time.advance(Duration.ofSeconds(1)); // the probe fails at once, as on a refused connection
    assertThat(state(c, 1).status()).isEqualTo(Status.UNREACHABLE);
    assertThat(state(c, 1).reason()).startsWith("no answer to the restart guard's probe");

    c.node(1).recover(); // the same data, a new process: held back until seen for the window
    c.time.advance(Duration.ofSeconds(1));
    NodeState back = state(c, 1);
    assertThat(back.reachable()).isTrue();
    assertThat(back.counted()).isFalse();
    assertThat(back.status()).isEqualTo(Status.HELD_BACK);
    assertThat(back.reason()).contains("counts in");
    c.time.advanceInSteps(HOLD_BACK, Duration.ofMillis(500));
    assertThat(state(c, 1).status()).isEqualTo(Status.COUNTED);
  }

  @Test
  void aMajorityRestartIsReachableAndHeldBack() {
    SimCluster c = cluster(true);
    c.node(0).restartEmpty();
    c.node(1).restartEmpty();
    c.time.advance(Duration.ofSeconds(1));
    List<NodeState> states = c.redlock.nodeStates();
    assertThat(states)
        .extracting(NodeState::status)
        .containsExactly(Status.HELD_BACK, Status.HELD_BACK, Status.COUNTED);
    assertThat(states).allMatch(NodeState::reachable);
  }

  @Test
  void aNodeThatRefusesTheProbeAfterAReconnectionIsReachableAndNotCounted() {
    SimCluster c = cluster(true);
    c.node(0).refuseInfo("NOPERM this user has no permissions to run the 'info' command");
    c.node(0).crash();
    c.node(0).recover();
    c.time.advance(Duration.ofSeconds(1));
    NodeState refused = state(c, 0);
    assertThat(refused.reachable()).as("a refusal is an answer").isTrue();
    assertThat(refused.counted()).isFalse();
    assertThat(refused.status()).isEqualTo(Status.PROBE_REFUSED);
    assertThat(refused.reason()).contains("NOPERM");
  }

  @Test
  void aNodeWhoseRegisterRaiseKeepsFailingIsUnconfirmed() {
    SimCluster c = cluster(true);
    c.node(0).refuseRegister("OOM command not allowed when used memory > 'maxmemory'");
    c.time.advanceInSteps(Duration.ofSeconds(7), Duration.ofMillis(500));
    NodeState unconfirmed = state(c, 0);
    assertThat(unconfirmed.status()).isEqualTo(Status.UNCONFIRMED);
    assertThat(unconfirmed.reachable()).isTrue();
    assertThat(unconfirmed.reason()).contains("max-ttl register").contains("OOM");
  }

  @Test
  void aReplicaIsExcluded() {
    SimCluster c = cluster(true);
    c.node(2).becomeReplica();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(state(c, 2).status()).isEqualTo(Status.EXCLUDED);
    assertThat(state(c, 2).reachable()).isTrue();
  }

  @Test
  void withTheGuardOffNodesAreStillProbedForWhetherTheyAnswer() {
    SimCluster c = cluster(false);
    assertThat(c.redlock.nodeStates()).extracting(NodeState::status).containsOnly(Status.COUNTED);
    c.node(0).crash();
    NodeState down = state(c, 0);
    assertThat(down.status()).isEqualTo(Status.UNREACHABLE);
    assertThat(down.counted()).as("without the guard every master counts").isTrue();

    c.node(0).restartEmpty();
    int probes = c.node(0).infoRequests();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.node(0).infoRequests()).isGreaterThan(probes);
    assertThat(state(c, 0).status()).as("no window without the guard").isEqualTo(Status.COUNTED);
  }

  @Test
  void aStatusAgreesWithTheFlags() {
    assertThatThrownBy(() -> new NodeState(0, "n", false, true, Status.COUNTED, ""))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new NodeState(0, "n", true, true, Status.HELD_BACK, "x"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
