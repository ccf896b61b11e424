package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.NodeOutcome.Vote;
import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The restart guard and the start-up checks of DESIGN §3, over simulated nodes. */
class RestartGuardTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /** maxTtl plus its drift margin, with maxTtl = TTL. */
  private static final Duration HOLD_BACK = Duration.ofMillis(10_000 + 100 + 2);

  private static final String MARKER = FreshMarker.key("");
  private static final NodeInfo.Persistence AOF_ALWAYS =
      new NodeInfo.Persistence(true, "always", false, true);

  private static SimCluster cluster(int n) {
    return new SimCluster(n, b -> b.ttl(TTL).maxTtl(TTL).retryCount(0));
  }

  /** Nodes no client uses yet, with no marker: what {@code init} is for. */
  private static SimCluster bare(int n) {
    return SimCluster.bare(n);
  }

  private static List<SimulatedNode> bareNodes(int n, FakeTime time) {
    List<SimulatedNode> nodes = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(new SimulatedNode("sim://node" + i, time));
    }
    return nodes;
  }

  private static RedlockConfig bareConfig() {
    return RedlockConfig.builder()
        .nodes("sim://node0", "sim://node1", "sim://node2")
        .ttl(TTL)
        .maxTtl(TTL)
        .build();
  }

  private static LockUnavailableException failure(CompletableFuture<Lease> attempt) {
    return (LockUnavailableException) SimCluster.failure(attempt);
  }

  /**
   * {@code init} left a record that admits the process {@code runId} and carries a cluster
   * identity for {@code size} nodes.
   */
  private static void assertDeclared(String value, String runId, int size) {
    io.redlock.internal.NodeRecord record = io.redlock.internal.NodeRecord.parse(value);
    assertThat(record).as(value).isNotNull();
    assertThat(record.admits(runId)).as(value).isTrue();
    assertThat(record.identity()).as(value).isNotNull();
    assertThat(record.identity().size()).isEqualTo(size);
  }

  @Test
  void aNodeRestartedEmptyIsHeldBackForMaxTtlPlusDrift() {
    SimCluster c = cluster(3);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    // node 0 restarts and forgets our key: until every lease it may have forgotten has
    // ended, its votes must not count, or it could grant our resource to someone else
    c.node(0).restartEmpty();
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1)); // the probe sees the new run_id
    c.node(1).recover();
    lease.release();
    c.time.advance(Duration.ofSeconds(1));

    LockUnavailableException e = failure(c.redlock.acquireAsync("s", TTL));
    assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(c.node(0).lockRequests()).as("a held-back node is not asked").isEqualTo(1);

    c.time.advanceInSteps(HOLD_BACK, Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("t", TTL)).isCompleted();
  }

  @Test
  void theErrorSaysHowLongUntilHeldBackNodesCountAndHowToDeclareAClusterFresh() {
    SimCluster c = cluster(3);
    c.node(0).restartEmpty();
    c.node(1).restartEmpty();
    c.time.advance(Duration.ofSeconds(2));
    LockUnavailableException e = failure(c.redlock.acquireAsync("r", TTL));
    assertThat(e.lastOutcomes()).filteredOn(o -> o.vote() == Vote.HELD_BACK).hasSize(2);
    // restarted at +0, first seen by the probe at +1 s (the window runs from then, not from
    // the uptime the node reports): one node more counts for a majority in 10.102 - 1 s
    assertThat(e.getMessage())
        .contains("2 node(s) held back by the restart guard")
        .contains("majority in 9102 ms")
        .contains("redlock init");
  }

  @Test
  void aMinorityHeldBackDoesNotStopTheLock() {
    SimCluster c = cluster(5);
    c.node(0).restartEmpty();
    c.node(1).restartEmpty();
    c.time.advance(Duration.ofSeconds(1));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(c.holding("r", lease.token())).isEqualTo(3);
    assertThat(c.node(0).valueOf("r")).isNull();
  }

  @Test
  void aTtlAboveMaxTtlIsRefusedAndNeverWidensTheWindow() {
    SimCluster c = cluster(3);
    assertThatThrownBy(() -> c.redlock.acquireAsync("long", Duration.ofHours(6)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("ttl 360 min")
        .hasMessageContaining("maxTtl (10 s)");
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThatThrownBy(() -> lease.extend(Duration.ofHours(6)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("maxTtl");
    lease.release();
    c.node(0).restartEmpty();
    c.node(1).crash();
    c.time.advanceInSteps(HOLD_BACK.plusSeconds(1), Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("s", TTL)).as("node 0 counts after one window").isCompleted();
  }

  @Test
  void everyClientRaisesTheClusterRegisterAndWaitsOutTheLongestMaxTtlInIt() {
    SimCluster c = cluster(3);
    assertThat(c.node(0).maxTtlRegister()).as("raised by the first probe").isEqualTo(10_000);
    // another client of the cluster uses maxTtl 30 s: its leases may outlive our window
    c.node(2).maxTtlRegister(Duration.ofSeconds(30), Duration.ofMinutes(1));
    c.time.advance(Duration.ofSeconds(1));
    c.node(0).restartEmpty();
    c.node(1).crash();
    c.time.advanceInSteps(HOLD_BACK.plusSeconds(2), Duration.ofMillis(500));
    LockUnavailableException e = failure(c.redlock.acquireAsync("r", TTL));
    assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(e.lastOutcomes().get(0).detail()).contains("of 30.302 s");
    c.time.advanceInSteps(Duration.ofSeconds(20), Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aLongerMaxTtlLapsesFromTheRegisterOnceItsClientIsGoneAndItsLeasesAreOver() {
    SimCluster c = cluster(3);
    List<NodeClient> views = new ArrayList<>();
    c.nodes.forEach(node -> views.add(new io.redlock.fake.SecondClient(node)));
    Redlock longer =
        Redlock.over(
            RedlockConfig.builder()
                .nodes(c.nodes.stream().map(SimulatedNode::name).toList())
                .ttl(TTL)
                .maxTtl(Duration.ofSeconds(60))
                .retryCount(0)
                .build(),
            views,
            c.time,
            new Random(7),
            Runnable::run);
    longer.acquireAsync("long", Duration.ofSeconds(60)).join();
    c.time.advance(Duration.ofSeconds(1)); // both clients probe: the register holds 60 s
    assertThat(c.node(2).maxTtlRegister()).isEqualTo(60_000);
    // The longer client vanishes, as in a crash: no more raises, and its lease on "long" lives
    // on for up to 60 s.
    views.forEach(NodeClient::close);
    c.node(0).restartEmpty();
    c.node(1).crash();
    c.time.advanceInSteps(Duration.ofSeconds(30), Duration.ofMillis(500));
    LockUnavailableException held = failure(c.redlock.acquireAsync("r", TTL));
    assertThat(held.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(held.lastOutcomes().get(0).detail()).contains("of 60.602 s");
    assertThat(failure(c.redlock.acquireAsync("long", TTL)).lastOutcomes().get(0).vote())
        .as("the departed client's lease is still valid, node 0 forgot it")
        .isEqualTo(Vote.HELD_BACK);
    assertThat(c.node(2).valueOf("long")).isNotNull();
    // The register lapses one hold after the longer client's last raise (60 s, its drift, 5 s,
    // stretched by 1 %): past its leases' end, and then it widens no window.
    c.time.advanceInSteps(Duration.ofSeconds(37), Duration.ofMillis(500));
    assertThat(c.node(2).maxTtlRegister()).isEqualTo(10_000);
    c.node(0).restartEmpty();
    c.time.advanceInSteps(Duration.ofSeconds(5), Duration.ofMillis(500));
    LockUnavailableException again = failure(c.redlock.acquireAsync("r", TTL));
    assertThat(again.lastOutcomes().get(0).detail()).contains("of 10.102 s");
    c.time.advanceInSteps(HOLD_BACK.minusSeconds(4), Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("r", TTL))
        .as("node 0 counts after this client's own window")
        .isCompleted();
    longer.closeAsync();
  }

  @Test
  void aNodeWhoseRegisterRaiseFailsStopsCountingBeforeItsEntryCouldLapse() {
    SimCluster c = cluster(3);
    c.time.advance(Duration.ofSeconds(1));
    c.node(0).refuseRegister("NOPERM this user has no permissions to run the 'eval' command");
    c.node(1).crash();
    c.time.advanceInSteps(Duration.ofSeconds(4), Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("r", TTL))
        .as("a few failed raises: its entry still outlasts a lease granted now")
        .isCompleted();
    c.time.advanceInSteps(Duration.ofSeconds(2), Duration.ofMillis(500));
    LockUnavailableException e = failure(c.redlock.acquireAsync("s", TTL));
    assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(e.lastOutcomes().get(0).detail()).contains("max-ttl register").contains("NOPERM");
    c.node(0).refuseRegister(null);
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.redlock.acquireAsync("s", TTL)).isCompleted();
  }

  @Test
  void aNodeWhoseClockJumpedForwardIsHeldBackLikeARestartedOne() {
    SimCluster c = cluster(3);
    c.time.advance(Duration.ofSeconds(1)); // a first periodic probe: the clock's baseline
    c.node(0).jumpClock(Duration.ofSeconds(30));
    c.time.advance(Duration.ofSeconds(1)); // the next probe sees 31 s pass in 1 s
    c.node(1).crash();
    assertThat(failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0).vote())
        .isEqualTo(Vote.HELD_BACK);
  }

  @Test
  void anEightMillisecondStepIsFlaggedWhenA200MillisecondTtlIsInUse() {
    SimCluster c = cluster(3);
    c.time.advanceInSteps(Duration.ofSeconds(5), Duration.ofSeconds(1)); // the node's rate
    // a 200 ms lease has a drift margin of 2 ms + 1 % = 4 ms: on a node whose clock steps
    // 8 ms forward its key would expire 4 ms before the holder stops believing it valid
    c.node(0).jumpClock(Duration.ofMillis(8));
    c.time.advance(Duration.ofSeconds(1));
    c.node(1).crash();
    NodeOutcome outcome =
        failure(c.redlock.acquireAsync("r", Duration.ofMillis(200))).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("jumped forward by at least 8.00 ms");
  }

  @Test
  void aStepJustBeyondTheTwoMillisecondToleranceIsFlaggedAndOneWithinItIsNot() {
    SimCluster c = cluster(3);
    c.time.advanceInSteps(Duration.ofSeconds(5), Duration.ofSeconds(1));
    c.node(0).jumpClock(Duration.ofMillis(2)); // the drift margin's floor: within every margin
    c.node(2).jumpClock(Duration.ofMillis(3));
    c.time.advance(Duration.ofSeconds(1));
    c.node(1).crash();
    List<NodeOutcome> outcomes = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes();
    assertThat(outcomes.get(0).vote()).isEqualTo(Vote.GRANTED);
    assertThat(outcomes.get(2).vote()).isEqualTo(Vote.HELD_BACK);
  }

  @Test
  void aStepWithinTheProbesRoundTripsIsNotFlagged() {
    SimCluster c = cluster(3);
    // each probe of node 0 takes 10 ms: its TIME was read somewhere in those 10 ms, so two
    // readings can be 10 ms further apart than their midpoints say
    c.node(0).latency(Duration.ofMillis(10));
    c.time.advanceInSteps(Duration.ofSeconds(10), Duration.ofSeconds(1));
    c.node(0).jumpClock(Duration.ofMillis(8)); // cannot be told from the round trips
    c.time.advanceInSteps(Duration.ofSeconds(2), Duration.ofSeconds(1));
    c.node(1).crash();
    CompletableFuture<Lease> attempt = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(20));
    assertThat(attempt).isCompleted();
  }

  @Test
  void aClockRunningAtExactlyDriftFactorIsNotFlaggedOverALongRun() {
    SimCluster c = cluster(3);
    for (int tenth = 0; tenth < 3_000; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1)); // 1 ms per 100 ms: driftFactor, 1 %
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aClockRunningWithinDriftFactorIsNotFlagged() {
    SimCluster c = cluster(3);
    for (int second = 0; second < 120; second++) {
      c.node(0).jumpClock(Duration.ofMillis(9)); // 0.9 % fast: within driftFactor 1 %
      c.time.advance(Duration.ofSeconds(1));
    }
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aClockFivePercentFastIsFlaggedByTheRateRuleAndNeverCounts() {
    SimCluster c = cluster(3);
    // 5 % fast from the start, in 5 ms pieces every 100 ms: between two probes the clock gains
    // exactly what its own rate predicts, so the step rule sees no step; only the rate rule,
    // which judges that rate against driftFactor, can flag it
    for (int tenth = 0; tenth < 300; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(5));
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote())
        .as("still held back after 30 s, three windows")
        .isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail())
        .contains("ran ahead by 50 ms in 1000 ms (5.00%, more than driftFactor 1.00%)")
        .doesNotContain("jumped");
  }

  @Test
  void aClockRunningAheadOfDriftFactorInSmallStepsIsCaughtByTheRateRule() {
    SimCluster c = cluster(3);
    for (int second = 0; second < 60; second++) {
      // 11 ms a second, 1.1 %: each second's gain is what its own rate predicts (no step),
      // and that rate is beyond driftFactor
      c.node(0).jumpClock(Duration.ofMillis(11));
      c.time.advance(Duration.ofSeconds(1));
    }
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("more than driftFactor");
  }

  @Test
  void aClockThatRanSlowAndThenStepsForwardIsFlagged() {
    SimCluster c = cluster(3);
    for (int second = 0; second < 10; second++) {
      c.node(0).jumpClock(Duration.ofMillis(-5)); // 0.5 % slow: harmless on its own
      c.time.advance(Duration.ofSeconds(1));
    }
    // 4 ms forward in 1 s is only 0.4 % of the interval, but 9 ms beyond the node's own rate:
    // a lease taken just before it loses 9 ms at once
    c.node(0).jumpClock(Duration.ofMillis(-5 + 9));
    c.time.advance(Duration.ofSeconds(1));
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("jumped forward");
  }

  /**
   * Node 0 persists every write and restarts at once as a new process that counts at once (the
   * marker of the process before proves its data was loaded), its clock having run at {@code
   * tenthsGain} per 100 ms since the start; returns once the guard saw the new process.
   */
  private static SimCluster restartedCountingAtOnce(Duration tenthsGain) {
    SimCluster c = cluster(3);
    c.node(0).persistence(AOF_ALWAYS);
    for (int tenth = 0; tenth < 50; tenth++) {
      c.node(0).jumpClock(tenthsGain);
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(0).crash();
    c.node(0).recover();
    for (int tenth = 0; tenth < 10; tenth++) {
      c.node(0).jumpClock(tenthsGain);
      c.time.advance(Duration.ofMillis(100)); // the probe sees the new run_id
    }
    return c;
  }

  @Test
  void anEightMillisecondStepInTheFirstIntervalOfANewProcessIsFlagged() {
    SimCluster c = restartedCountingAtOnce(Duration.ZERO);
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).as("counts at once").isCompleted();
    c.node(1).recover();
    // within driftFactor of the interval (10 ms in 1 s), so the rate rule lets it pass: only a
    // step check can see it, against the rate its host's clock kept under the process before
    c.node(0).jumpClock(Duration.ofMillis(8));
    c.time.advance(Duration.ofSeconds(1));
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("s", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("jumped forward by at least 8.00 ms");
  }

  @Test
  void aClockAtExactlyDriftFactorIsNotFlaggedInTheFirstIntervalOfANewProcess() {
    SimCluster c = restartedCountingAtOnce(Duration.ofMillis(1)); // 1 %, driftFactor
    for (int tenth = 0; tenth < 30; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1));
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(1).crash();
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aNewProcessOnAFasterClockWithinDriftFactorIsFlaggedOnceAndThenCounts() {
    // the process before ran on a perfect clock; the new one (on another host, say) on a clock
    // 0.5 % fast: within driftFactor, but 5 ms a second beyond the rate measured before
    SimCluster c = restartedCountingAtOnce(Duration.ZERO);
    for (int tenth = 0; tenth < 10; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1).dividedBy(2));
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("jumped forward by at least");
    // measured anew from then on, not flagged again at every probe: it counts after a window
    for (int tenth = 0; tenth < HOLD_BACK.plusSeconds(2).toMillis() / 100; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1).dividedBy(2));
      c.time.advance(Duration.ofMillis(100));
    }
    assertThat(c.redlock.acquireAsync("s", TTL)).isCompleted();
  }

  @Test
  void anEightMillisecondStepInTheFirstIntervalAfterAFlagIsFlaggedAgain() {
    SimCluster c = cluster(3);
    c.time.advanceInSteps(Duration.ofSeconds(5), Duration.ofSeconds(1));
    c.node(0).jumpClock(Duration.ofSeconds(30));
    c.time.advance(Duration.ofSeconds(1)); // flagged: held back from this probe on
    c.node(0).jumpClock(Duration.ofMillis(8));
    c.time.advance(Duration.ofSeconds(1)); // a second step, 1 s later
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("jumped forward by at least 8.00 ms");
    // the hold back runs from the second step: a window after the first, it still does not
    // count; a window after the second, it does
    c.time.advanceInSteps(HOLD_BACK.minusMillis(900), Duration.ofMillis(100));
    assertThat(failure(c.redlock.acquireAsync("s", TTL)).lastOutcomes().get(0).vote())
        .isEqualTo(Vote.HELD_BACK);
    c.time.advanceInSteps(Duration.ofSeconds(1), Duration.ofMillis(100));
    assertThat(c.redlock.acquireAsync("t", TTL)).isCompleted();
  }

  @Test
  void aClockAtExactlyDriftFactorIsNotFlaggedAgainInTheFirstIntervalAfterAFlag() {
    SimCluster c = cluster(3);
    for (int tenth = 0; tenth < 50; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1)); // 1 %, driftFactor
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(0).jumpClock(Duration.ofSeconds(30));
    for (int tenth = 0; tenth < 10; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1));
      c.time.advance(Duration.ofMillis(100)); // flagged for the jump of 30 s
    }
    for (int tenth = 0; tenth < 20; tenth++) {
      c.node(0).jumpClock(Duration.ofMillis(1));
      c.time.advance(Duration.ofMillis(100));
    }
    c.node(1).crash();
    NodeOutcome outcome = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("ran ahead by").doesNotContain("jumped");
  }

  @Test
  void aNodeDeclaredFreshCountsAtOnceUntilItRestarts() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = bareNodes(3, time);
    InitReport report = ClusterInit.over(List.copyOf(nodes), bareConfig(), false);
    assertThat(report.complete()).isTrue();
    assertDeclared(nodes.get(0).valueOf(MARKER), nodes.get(0).runId(), 3);
    assertThat(report.nodes().get(0).runId()).isEqualTo(nodes.get(0).runId());
    SimCluster c = SimCluster.over(nodes, time, b -> b.ttl(TTL).maxTtl(TTL).retryCount(0));
    c.redlock.acquireAsync("after", TTL).join().release(); // at once, not after a window

    c.node(0).restartEmpty(); // the marker is gone with the keys
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(failure(c.redlock.acquireAsync("restarted", TTL)).lastOutcomes().get(0).vote())
        .isEqualTo(Vote.HELD_BACK);
  }

  @Test
  void aMarkerOfAnEarlierProcessDoesNotCountWithoutPersistence() {
    SimCluster c = cluster(3);
    c.node(0).putPersistent(MARKER, FreshMarker.value(c.node(0).runId()));
    c.node(0).crash();
    c.node(0).recover(); // keys kept (as if loaded from disk), new run_id, no AOF reported
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0).vote())
        .isEqualTo(Vote.HELD_BACK);
  }

  @Test
  void aNodeThatPersistsEveryWriteAndLoadedItsDataCountsAtOnceAfterARestart() {
    SimCluster c = cluster(3);
    c.node(0).persistence(AOF_ALWAYS);
    c.time.advance(Duration.ofSeconds(1)); // this client sees it trusted and durable
    c.node(0).crash();
    // it watched the process before, trusted and durable to its last answer; the data the new
    // one loaded holds all this client saw: continuity
    c.node(0).recover();
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  /**
   * Node 0 (AOF, {@code appendfsync always}) and two watching clients whose probes are half a
   * second apart: the first probes at 0, 1, 2... s, the second at 0.5, 1.5, 2.5... s. A copy of
   * node 0's data is taken at 2.05 s, after the first client's last probe and before the
   * second's; the scene stands at 2.6 s, each case then restores it. The second client saw
   * newer data of the process than the copy holds.
   */
  private static final class CopyBetweenWatchers {
    final SimCluster c = cluster(3);
    final List<io.redlock.fake.SecondClient> secondViews = new ArrayList<>();
    final Redlock second;
    final java.util.Map<String, Object> copy;

    CopyBetweenWatchers() {
      c.node(0).persistence(AOF_ALWAYS);
      c.time.advance(Duration.ofMillis(500));
      second = secondClient(c, secondViews);
      c.time.advance(Duration.ofMillis(1_550));
      copy = c.node(0).copyData();
      c.time.advance(Duration.ofMillis(550));
    }

    /** Moves the clock by {@code millis}; node 0's record then. */
    String after(long millis) {
      c.time.advance(Duration.ofMillis(millis));
      return c.node(0).valueOf(MARKER);
    }

    /** Moves the clock by {@code millis}; node 0's record then says it loaded older data. */
    void loadedOlderAfter(long millis, String when) {
      assertThat(after(millis)).as(when).contains("admitted=- ").contains("why=loaded-older");
    }

    /** With node 1 down, node 0 is held back for both watchers and {@code others}. */
    void assertHeldBackForAll(Redlock... others) {
      c.node(1).crash();
      List<Redlock> clients = new ArrayList<>(List.of(c.redlock, second));
      clients.addAll(List.of(others));
      for (Redlock client : clients) {
        assertThat(failure(client.acquireAsync("r", TTL)).lastOutcomes().get(0).vote())
            .isEqualTo(Vote.HELD_BACK);
      }
      for (Redlock client : clients.subList(1, clients.size())) {
        client.close();
      }
    }
  }

  /**
   * The copy restored at once: the first client probes first and vouches for the data (it
   * holds all it saw); the second takes that trust back at its next probe, for both clients.
   */
  @Test
  void aCopyOlderThanWhatOneWatcherSawLosesTheTrustAnotherWatcherGaveIt() {
    CopyBetweenWatchers scene = new CopyBetweenWatchers();
    scene.c.node(0).crash();
    scene.c.node(0).recoverFrom(scene.copy);
    assertThat(scene.after(400)).as("3.0 s, the first client").contains("why=continued");
    scene.loadedOlderAfter(500, "3.5 s, the second client");
    scene.after(500); // 4.0 s: the first reads it
    scene.assertHeldBackForAll();
  }

  /**
   * The new process started after the first client's next probe failed: the second client,
   * which saw more, judges first, and the first may not admit it afterwards.
   */
  @Test
  void aWatcherThatSawLessDoesNotAdmitACopyAnotherFoundOlderThanItSaw() {
    CopyBetweenWatchers scene = new CopyBetweenWatchers();
    scene.c.node(0).crash();
    scene.after(600); // 3.2 s: the first client's probe failed
    scene.c.node(0).recoverFrom(scene.copy);
    scene.loadedOlderAfter(300, "3.5 s, the second client");
    scene.loadedOlderAfter(500, "4.0 s, the first, which could vouch before");
    scene.assertHeldBackForAll();
  }

  /**
   * A new client (a new pod, a cron job) records the new process first, before both watchers:
   * the one that saw more must still say it loaded older data, so that the one that saw less
   * does not admit it afterwards.
   */
  @Test
  void aNewClientThatRecordsTheRestartFirstDoesNotLetAWatcherThatSawLessAdmitIt() {
    CopyBetweenWatchers scene = new CopyBetweenWatchers();
    scene.c.node(0).crash();
    scene.after(600); // 3.2 s: the first client's probe failed
    scene.c.node(0).recoverFrom(scene.copy);
    Redlock newcomer = secondClient(scene.c); // probes at once: it watched nothing
    assertThat(scene.after(0)).contains("admitted=- ").contains("why=restarted");
    scene.loadedOlderAfter(300, "3.5 s, the second client");
    scene.loadedOlderAfter(500, "4.0 s, the first, which could vouch before");
    scene.assertHeldBackForAll(newcomer);
  }

  /**
   * As the first case, but the second client's write of what it found loses its
   * compare-and-set: it writes it again at its next probe, though it then watches the new
   * process.
   */
  @Test
  void aProofOfLossWhoseWriteLostItsRaceIsWrittenAgainAtTheNextProbe() {
    CopyBetweenWatchers scene = new CopyBetweenWatchers();
    scene.c.node(0).crash();
    scene.c.node(0).recoverFrom(scene.copy);
    assertThat(scene.after(400)).as("3.0 s, the first client").contains("why=continued");
    scene.secondViews.get(0).loseNextRecordWrite();
    assertThat(scene.after(500)).as("3.5 s, the second's write lost").contains("why=continued");
    scene.loadedOlderAfter(1_000, "4.5 s, written again");
    scene.after(500); // 5.0 s: the first reads it
    scene.assertHeldBackForAll();
  }

  /** A second client over the same simulated nodes, with the settings of {@link #cluster}. */
  private static Redlock secondClient(SimCluster c) {
    return secondClient(c, new ArrayList<>());
  }

  /** The same, its connections added to {@code views}. */
  private static Redlock secondClient(SimCluster c, List<io.redlock.fake.SecondClient> views) {
    c.nodes.forEach(node -> views.add(new io.redlock.fake.SecondClient(node)));
    return Redlock.over(
        RedlockConfig.builder()
            .nodes(c.nodes.stream().map(SimulatedNode::name).toList())
            .ttl(TTL)
            .maxTtl(TTL)
            .retryCount(0)
            .build(),
        List.<NodeClient>copyOf(views),
        c.time,
        new Random(7),
        Runnable::run);
  }

  @Test
  void persistenceDoesNotCountWithoutLoadedDataOrAfterARewrite() {
    SimCluster c = cluster(3);
    c.node(0).persistence(AOF_ALWAYS);
    c.node(0).restartEmpty(); // AOF on, but nothing loaded: no marker of an earlier process
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompletedExceptionally();

    c.node(1).recover();
    c.node(2).putPersistent(MARKER, FreshMarker.value("an-earlier-process"));
    // AOF switched on at run time: it rewrote the file from what memory held
    c.node(2).persistence(new NodeInfo.Persistence(true, "always", true, true));
    c.node(2).crash();
    c.node(2).recover();
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.redlock.acquireAsync("s", TTL)).isCompletedExceptionally();
  }

  @Test
  void aNewRunIdIsNotTrustedToHaveStartedBeforeTheOldProcessLastAnswered() {
    SimCluster c = cluster(3);
    c.time.advance(Duration.ofSeconds(1));
    // restarted empty, then its wall clock stepped: it claims to have been up for an hour
    c.node(0).restartEmptyClaimingUptime(Duration.ofHours(1));
    c.node(1).crash();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0).vote())
        .isEqualTo(Vote.HELD_BACK);
    c.time.advanceInSteps(HOLD_BACK, Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void aNodeThatRefusesTheProbeIsNamedInTheError() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(new SimulatedNode("sim://acl" + i, time));
    }
    nodes.get(0).refuseInfo("NOPERM this user has no permissions to run the 'info' command");
    nodes.get(1).crash();
    Redlock redlock = redlockOver(nodes, time);
    NodeOutcome outcome = failure(redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(outcome.detail()).contains("refused").contains("NOPERM");
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
    assertThat(redlock.acquireAsync("r", TTL)).isCompletedExceptionally();
    time.advanceInSteps(HOLD_BACK.plusSeconds(1), Duration.ofMillis(100));
    assertThat(redlock.acquireAsync("r", TTL)).isCompleted();
  }

  @Test
  void initRefusesAClusterWhereANodeHoldsKeysAndWritesNothing() {
    SimCluster c = bare(3);
    c.node(2).put("orders:42", "someone", TTL);
    InitReport report = ClusterInit.over(List.copyOf(c.nodes), bareConfig(), false);
    assertThat(report.complete()).isFalse();
    assertThat(report.nodes().get(2).outcome()).isEqualTo(InitReport.Outcome.HOLDS_KEYS);
    assertThat(report.nodes().get(2).detail()).contains("1 key");
    assertThat(report.nodes().get(0).outcome()).isEqualTo(InitReport.Outcome.NOT_WRITTEN);
    for (SimulatedNode node : c.nodes) {
      assertThat(node.valueOf(MARKER)).isNull();
    }
    InitReport forced = ClusterInit.over(List.copyOf(c.nodes), bareConfig(), true);
    assertThat(forced.complete()).isTrue();
    assertDeclared(c.node(2).valueOf(MARKER), c.node(2).runId(), 3);
  }

  @Test
  void initWithAKeyPrefixLooksOnlyUnderThePrefixAndMarksUnderIt() {
    SimCluster c = bare(3);
    RedlockConfig config = bareConfig().toBuilder().keyPrefix("app:").build();
    c.node(0).put("other-app:x", "v", TTL);
    InitReport report = ClusterInit.over(List.copyOf(c.nodes), config, false);
    assertThat(report.complete()).isTrue();
    assertDeclared(c.node(0).valueOf("app:" + FreshMarker.KEY_SUFFIX), c.node(0).runId(), 3);
    c.node(1).put("app:orders", "v", TTL);
    assertThat(ClusterInit.over(List.copyOf(c.nodes), config, false).complete()).isFalse();
  }

  @Test
  void initRefusesWhenANodeCannotBeChecked() {
    SimCluster c = bare(3);
    c.node(1).crash();
    InitReport report = ClusterInit.over(List.copyOf(c.nodes), bareConfig(), false);
    assertThat(report.nodes().get(1).outcome()).isEqualTo(InitReport.Outcome.UNCHECKED);
    assertThat(c.node(0).valueOf(MARKER)).isNull();
  }

  @Test
  void initRefusesWhileAClientRunsEvenWithNoLockKeyAnywhere() {
    // a majority restarted empty: the leases' keys are gone from every node that held them,
    // and only the clients' live register entries show that locking went on seconds ago
    SimCluster c = cluster(3);
    c.redlock.acquireAsync("held", TTL).join();
    for (SimulatedNode node : c.nodes) {
      node.restartEmpty();
    }
    c.time.advance(Duration.ofSeconds(1)); // the client raises its entry on the new processes
    InitReport report = ClusterInit.over(List.copyOf(c.nodes), c.redlock.config(), false);
    assertThat(report.complete()).isFalse();
    assertThat(report.nodes())
        .allSatisfy(
            node -> assertThat(node.outcome()).isEqualTo(InitReport.Outcome.CLIENTS_RUNNING));
    for (SimulatedNode node : c.nodes) {
      // the client's record of the restart, and no marker that admits the process
      assertThat(io.redlock.internal.NodeRecord.parse(node.valueOf(MARKER)).admits(node.runId()))
          .isFalse();
    }
  }

  @Test
  void twoUrisReachingOneServerAreRefusedAtStart() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes =
        List.of(
            new SimulatedNode("sim://a", time),
            new SimulatedNode("sim://b", time),
            new SimulatedNode("sim://c", time));
    nodes.get(2).sameServerAs(nodes.get(0));
    assertThatThrownBy(() -> redlockOver(nodes, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("sim://a")
        .hasMessageContaining("sim://c")
        .hasMessageContaining("same server");
  }

  @Test
  void aNodeExcludedAsAReplicaCountsAgainAfterAFreshWindowOnceItIsAMasterAgain() {
    SimCluster c = cluster(3);
    c.node(0).becomeReplica();
    c.time.advance(Duration.ofSeconds(1));
    c.node(1).crash();
    NodeOutcome excluded = failure(c.redlock.acquireAsync("r", TTL)).lastOutcomes().get(0);
    assertThat(excluded.vote()).isEqualTo(Vote.HELD_BACK);
    assertThat(excluded.detail()).contains("excluded");
    c.node(0).becomeMaster(); // promoted, or the replication was undone
    c.time.advance(Duration.ofSeconds(1));
    NodeOutcome back = failure(c.redlock.acquireAsync("s", TTL)).lastOutcomes().get(0);
    assertThat(back.detail())
        .as("still probed, and held back for a fresh window")
        .contains("seen for");
    c.time.advanceInSteps(HOLD_BACK, Duration.ofMillis(500));
    assertThat(c.redlock.acquireAsync("t", TTL)).isCompleted();
  }

  @Test
  void aNodeThatRefusesItsProbeIsProbedOnTheTimerOnlyNotBeforeEveryAcquisition() {
    SimCluster c = cluster(3);
    c.node(0).refuseInfo("NOPERM this user has no permissions to run the 'info' command");
    c.node(0).crash(); // a lost connection: unknown until probed
    c.node(0).recover();
    c.time.advance(Duration.ofSeconds(1)); // the timer's probe is refused
    int before = c.node(0).infoRequests();
    for (int i = 0; i < 10; i++) {
      c.redlock.acquireAsync("r" + i, TTL).join().release();
    }
    assertThat(c.node(0).infoRequests()).isEqualTo(before);
  }

  @Test
  void aReplicaIsRefusedAtStart() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes =
        List.of(
            new SimulatedNode("sim://a", time),
            new SimulatedNode("sim://b", time),
            new SimulatedNode("sim://c", time));
    nodes.get(1).becomeReplica();
    assertThatThrownBy(() -> redlockOver(nodes, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("sim://b")
        .hasMessageContaining("replica");
  }

  @Test
  void aClientThatListsFewerNodesThanInitDeclaredIsRefusedAtStart() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = bareNodes(3, time);
    assertThat(ClusterInit.over(List.copyOf(nodes), bareConfig(), false).complete()).isTrue();
    // Two of the three: a majority of 2 that a client listing all three never crosses.
    assertThatThrownBy(() -> redlockOver(nodes.subList(0, 2), time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("cluster of 3 nodes")
        .hasMessageContaining("this client lists 2");
    redlockOver(nodes, time).close(); // the declared list is fine
  }

  @Test
  void aClientThatListsMoreNodesThanInitDeclaredDoesNotUseTheDeclaredOnes() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> declared = bareNodes(3, time);
    assertThat(ClusterInit.over(List.copyOf(declared), bareConfig(), false).complete()).isTrue();
    List<SimulatedNode> five = new ArrayList<>(declared);
    five.add(new SimulatedNode("sim://new-a", time));
    five.add(new SimulatedNode("sim://new-b", time));
    assertThatThrownBy(() -> redlockOver(five, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("cluster of 3 nodes")
        .hasMessageContaining("this client lists 5");
  }

  @Test
  void aNodeOfAnotherClusterIsNotUsedAndNamed() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> one = bareNodes(3, time);
    List<SimulatedNode> other = bareNodes(3, time);
    assertThat(ClusterInit.over(List.copyOf(one), bareConfig(), false).complete()).isTrue();
    assertThat(ClusterInit.over(List.copyOf(other), bareConfig(), false).complete()).isTrue();
    List<SimulatedNode> mixed = List.of(one.get(0), one.get(1), other.get(2));
    assertThatThrownBy(() -> redlockOver(mixed, time))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining(other.get(2).name())
        .hasMessageContaining("mixes clusters");
  }

  private static Redlock redlockOver(List<SimulatedNode> nodes, FakeTime time) {
    List<String> uris = new ArrayList<>();
    for (SimulatedNode node : nodes) {
      uris.add(node.name());
    }
    RedlockConfig config =
        RedlockConfig.builder().nodes(uris).ttl(TTL).maxTtl(TTL).retryCount(0).build();
    try {
      return Redlock.over(
          config, List.<NodeClient>copyOf(nodes), time, new Random(1), Runnable::run);
    } catch (java.util.concurrent.CompletionException e) {
      throw (RuntimeException) e.getCause();
    }
  }
}
