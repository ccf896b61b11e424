package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome.Vote;
import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Auto-extensions in batches: leases that fall due together go to each node as one {@code
 * extendBatch} call, and each lease is still judged, reported and lost on its own.
 */
class ExtensionBatchTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /** When a lease acquired now with {@link #TTL} is due: half its validity (9,898 ms) left. */
  private static final Duration DUE = Duration.ofMillis(9_898 - 5_000);

  private static SimCluster cluster(int n) {
    return new SimCluster(n, b -> b.retryCount(0));
  }

  private static List<Lease> holdAutoExtended(SimCluster c, String prefix, int count) {
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      leases.add(c.redlock.acquireAsync(prefix + i, TTL).join().autoExtend());
    }
    return leases;
  }

  @Test
  void leasesDueTogetherGoToEachNodeAsOneRequest() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 50);

    c.time.advance(DUE);

    for (SimulatedNode node : c.nodes) {
      assertThat(node.batchRequests()).isEqualTo(1);
      assertThat(node.batchedExtensions()).isEqualTo(50);
      assertThat(node.extendRequests()).as("no extension of its own").isEqualTo(50);
    }
    for (Lease lease : leases) {
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(9_000));
      assertThat(c.holding(lease.resources().get(0), lease.token())).isEqualTo(3);
    }
  }

  @Test
  void leasesBatchedTogetherStayTogether() {
    SimCluster c = cluster(3);
    holdAutoExtended(c, "early", 10);
    c.time.advance(Duration.ofMillis(100)); // within one step of the grid: the same slot
    holdAutoExtended(c, "late", 10);

    for (int period = 1; period <= 5; period++) {
      c.time.advance(Duration.ofSeconds(5));
      assertThat(c.node(0).batchRequests()).as("after period %d", period).isEqualTo(period);
      assertThat(c.node(0).batchedExtensions()).isEqualTo(20 * period);
    }
  }

  @Test
  void aLeaseIsExtendedNeverLateAndAtMostAQuarterOfItsThresholdEarly() {
    for (Duration ttl : List.of(Duration.ofSeconds(2), TTL, Duration.ofSeconds(30))) {
      for (int offsetMillis = 0; offsetMillis < 2_000; offsetMillis += 170) {
        SimCluster c = cluster(3);
        c.time.advance(Duration.ofMillis(offsetMillis)); // another place on the grid
        Lease lease = c.redlock.acquireAsync("r", ttl).join().autoExtend();
        long threshold = ttl.toNanos() / 2;
        long previous = c.node(0).batchRequests();
        Duration left = null;
        for (int step = 0; step < ttl.toMillis() && left == null; step++) {
          Duration before = lease.remaining();
          c.time.advance(Duration.ofMillis(1));
          if (c.node(0).batchRequests() > previous) {
            left = before;
          }
        }
        assertThat(left).as("ttl %s, offset %d ms: extended", ttl, offsetMillis).isNotNull();
        assertThat(left.toNanos())
            .as("ttl %s, offset %d ms: left when extended", ttl, offsetMillis)
            .isLessThanOrEqualTo(threshold + threshold / 4 + 1_000_000)
            .isGreaterThanOrEqualTo(threshold - 1_000_000);
      }
    }
  }

  @Test
  void eachKeyIsCheckedAgainstItsOwnTokenAndEachLeaseJudgedOnItsOwn() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 3);
    Lease taken = leases.get(1);
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    taken.onLost(lost::set);
    // Another holder's value on two of the three nodes, as after an expiry and a takeover.
    c.node(0).put("r1", "someone-else", Duration.ofSeconds(30));
    c.node(1).put("r1", "someone-else", Duration.ofSeconds(30));

    c.time.advance(DUE);

    assertThat(c.node(0).batchedExtensions()).isEqualTo(3);
    assertThat(leases.get(0).isValid()).isTrue();
    assertThat(leases.get(2).isValid()).isTrue();
    assertThat(leases.get(0).remaining()).isGreaterThan(Duration.ofMillis(9_000));
    assertThat(taken.state()).isEqualTo(Lease.State.LOST);
    assertThat(lost.get()).isNotNull();
    assertThat(lost.get().lossCause()).isEqualTo(LossCause.NOT_HELD);
    // The other holder's keys are neither extended nor deleted.
    for (int i = 0; i < 2; i++) {
      assertThat(c.node(i).valueOf("r1")).isEqualTo("someone-else");
      assertThat(c.node(i).pttl("r1")).isLessThanOrEqualTo(30_000 - DUE.toMillis());
    }
  }

  @Test
  void aNodeThatFailsTheBatchCostsEachLeaseOneVoteOnly() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 20);
    c.node(2).crash();

    c.time.advance(DUE);

    for (Lease lease : leases) {
      assertThat(lease.isValid()).isTrue();
      assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(9_000));
    }
  }

  @Test
  void aNodeThatDoesNotAnswerTimesOutForEveryLeaseOfTheBatchAndNoLongerCounts() {
    List<Vote> fromPaused = new java.util.concurrent.CopyOnWriteArrayList<>();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            if (event.operation() == RedlockEvent.Operation.EXTEND
                && event.outcome().index() == 2) {
              fromPaused.add(event.outcome().vote());
            }
          }
        };
    SimCluster c = new SimCluster(3, b -> b.retryCount(0).listener(listener));
    List<Lease> leases = holdAutoExtended(c, "r", 10);
    c.node(2).pause();

    while (c.node(0).batchRequests() == 0) {
      c.time.advance(Duration.ofMillis(1)); // up to the batch
    }
    assertThat(leases).allMatch(lease -> lease.remaining().compareTo(Duration.ofSeconds(9)) > 0);
    assertThat(fromPaused).as("not settled before the batch's wait").isEmpty();

    c.time.advance(c.redlock.config().nodeTimeout().multipliedBy(9));
    assertThat(fromPaused).as("a batch waits longer than one node timeout").isEmpty();
    c.time.advance(c.redlock.config().nodeTimeout()); // ten node timeouts: its longest wait
    assertThat(fromPaused).hasSize(10).containsOnly(Vote.TIMEOUT);
  }

  @Test
  void aBatchWaitsForABusyNodeLongerThanOneRequestDoesAndNeedsNoRetry() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 10);
    Duration busy = c.redlock.config().nodeTimeout().multipliedBy(4); // a server with a backlog
    for (SimulatedNode node : c.nodes) {
      node.latency(busy);
    }

    c.time.advance(DUE.plus(busy));

    for (Lease lease : leases) {
      assertThat(lease.remaining()).isGreaterThan(Duration.ofSeconds(9));
    }
    for (SimulatedNode node : c.nodes) {
      assertThat(node.batchRequests()).as("extended once, not cut off and sent again").isEqualTo(1);
    }
  }

  @Test
  void aBatchThatTooFewNodesAnswerKeepsEachLeaseUntilItsDeadlineAndTriesAgain() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 10);
    c.node(1).pause();
    c.node(2).pause();
    c.time.advance(DUE.plus(c.redlock.config().nodeTimeout().multipliedBy(10))); // cut off
    for (Lease lease : leases) {
      assertThat(lease.isValid()).as("kept until the old deadline").isTrue();
      assertThat(lease.remaining()).isLessThan(Duration.ofSeconds(6));
    }
    c.node(1).resume();
    c.node(2).resume();
    c.time.advance(Duration.ofMillis(500)); // a retry comes two node timeouts after a cut-off
    for (Lease lease : leases) {
      // Extended by the retry in flight when the nodes resumed: sent at most ten node timeouts
      // (a batch's longest wait) before that.
      assertThat(lease.remaining()).isGreaterThan(Duration.ofSeconds(8));
    }
    // The retries went in batches too: no extension of a lease on its own.
    assertThat(c.node(0).batchRequests()).isGreaterThanOrEqualTo(2);
    assertThat(c.node(0).extendRequests()).isEqualTo(c.node(0).batchedExtensions());
  }

  @Test
  void eachLeaseOfABatchTellsItsOwnStoryToTheListeners() {
    Map<Lease, RedlockEvent.ExtendOutcome> extensions = new ConcurrentHashMap<>();
    AtomicInteger votes = new AtomicInteger();
    AtomicInteger granted = new AtomicInteger();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void extended(RedlockEvent.Extension event) {
            extensions.put(event.lease(), event.outcome());
          }

          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            if (event.operation() == RedlockEvent.Operation.EXTEND) {
              votes.incrementAndGet();
              if (event.outcome().vote() == Vote.GRANTED) {
                granted.incrementAndGet();
              }
            }
          }
        };
    SimCluster c = new SimCluster(3, b -> b.retryCount(0).listener(listener));
    List<Lease> leases = holdAutoExtended(c, "r", 5);

    c.time.advance(DUE);

    assertThat(c.node(0).batchRequests()).isEqualTo(1);
    assertThat(extensions).hasSize(5);
    for (Lease lease : leases) {
      assertThat(extensions).containsEntry(lease, RedlockEvent.ExtendOutcome.EXTENDED);
    }
    assertThat(votes).hasValue(15);
    assertThat(granted).hasValue(15);
  }

  @Test
  void leasesThatLeaveTheirSlotAreNotBatchedAndTheOthersOfTheSlotStillAre() {
    SimCluster c = cluster(3);
    int idle = c.time.pendingTasks(); // the restart guard's probe tick
    List<Lease> leases = holdAutoExtended(c, "r", 40);
    // Released: the first, the last two and one in the middle of the slot they share, each
    // leaving another place of it.
    List<Lease> released = List.of(leases.get(0), leases.get(39), leases.get(17), leases.get(38));
    released.forEach(Lease::release);
    // A caller's extension two seconds on moves one lease to a later slot.
    c.time.advance(Duration.ofSeconds(2));
    Lease moved = leases.get(5);
    assertThat(moved.extendAsync(TTL)).isCompletedWithValue(true);

    c.time.advance(DUE.minusSeconds(2));

    List<Lease> kept = new ArrayList<>(leases);
    kept.removeAll(released);
    kept.remove(moved);
    for (SimulatedNode node : c.nodes) {
      assertThat(node.batchRequests()).isEqualTo(1);
      assertThat(node.batchedExtensions()).isEqualTo(kept.size());
    }
    for (Lease lease : kept) {
      assertThat(lease.remaining()).isGreaterThan(Duration.ofMillis(9_000));
      assertThat(c.holding(lease.resources().get(0), lease.token())).isEqualTo(3);
    }
    for (Lease lease : released) {
      assertThat(c.holding(lease.resources().get(0), lease.token())).isZero();
    }

    c.time.advance(Duration.ofSeconds(2));
    assertThat(c.node(0).batchRequests()).as("the moved lease, in its own slot").isEqualTo(2);
    assertThat(c.node(0).batchedExtensions()).isEqualTo(kept.size() + 1);
    assertThat(moved.remaining()).isGreaterThan(Duration.ofMillis(9_000));

    // Every lease gone, from every place of the slots: no slot and no timer task left.
    for (int i = 0; i < kept.size(); i += 2) {
      kept.get(i).release();
    }
    for (int i = kept.size() - 1; i >= 0; i--) {
      kept.get(i).release();
    }
    moved.release();
    c.time.advance(Duration.ofMillis(100)); // the node timeouts' tick of the releases runs out
    assertThat(c.time.pendingTasks()).as("nothing of a lease left on the timer").isEqualTo(idle);
  }

  @Test
  void manyLeasesDueTogetherAreSentInBoundedBatches() {
    SimCluster c = cluster(3);
    List<Lease> leases = holdAutoExtended(c, "r", 2_500);

    c.time.advance(DUE);

    for (SimulatedNode node : c.nodes) {
      assertThat(node.batchRequests()).isEqualTo(3); // 1,000 + 1,000 + 500
      assertThat(node.batchedExtensions()).isEqualTo(2_500);
    }
    assertThat(leases).allMatch(lease -> lease.remaining().compareTo(Duration.ofSeconds(9)) > 0);
  }

  @Test
  void aBatchNeverCarriesALeaseWhoseCallersExtensionIsInFlight() {
    SimCluster c = cluster(3);
    Lease busy = holdAutoExtended(c, "busy", 1).get(0);
    Lease idle = holdAutoExtended(c, "idle", 1).get(0);
    // Find the slot: the instant the idle lease's batch goes out, on a copy of the schedule.
    SimCluster probe = cluster(3);
    holdAutoExtended(probe, "busy", 1);
    long slotMillis = 0;
    while (probe.node(0).batchRequests() == 0) {
      probe.time.advance(Duration.ofMillis(1));
      slotMillis++;
    }
    c.time.advance(Duration.ofMillis(slotMillis - 5));
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Boolean> callers = busy.extendAsync(TTL); // answered 10 ms from now

    c.time.advance(Duration.ofMillis(5)); // the slot: the batch goes out
    assertThat(c.node(0).batchedExtensions()).as("only the idle lease").isEqualTo(1);
    assertThat(c.node(0).extendRequests()).as("the caller's, and the idle lease's").isEqualTo(2);

    c.time.advance(Duration.ofMillis(20));
    assertThat(callers).isCompletedWithValue(true);
    assertThat(busy.isValid()).isTrue();
    assertThat(idle.isValid()).isTrue();
    assertThat(idle.remaining()).isGreaterThan(Duration.ofSeconds(9));
  }

  @Test
  void aCallersExtensionWhileItsLeaseIsInABatchGoesOnlyOnceTheBatchDecided() {
    SimCluster c = cluster(3);
    Lease lease = holdAutoExtended(c, "r", 1).get(0);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10)); // each request answered 10 ms after it is sent
    }
    while (c.node(0).batchRequests() == 0) { // up to the batch
      c.time.advance(Duration.ofMillis(1));
    }

    CompletableFuture<Boolean> callers = lease.extendAsync(TTL.multipliedBy(2));
    for (SimulatedNode node : c.nodes) {
      assertThat(node.extendRequests()).as("the batch's only, the caller's waits").isEqualTo(1);
    }
    c.time.advance(Duration.ofMillis(10)); // the batch is answered and decided
    assertThat(callers).isNotDone();
    for (SimulatedNode node : c.nodes) {
      assertThat(node.extendRequests()).as("then the caller's, on its own").isEqualTo(2);
      assertThat(node.batchRequests()).isEqualTo(1);
    }
    c.time.advance(Duration.ofMillis(10));
    assertThat(callers).isCompletedWithValue(true);
    assertThat(lease.remaining()).isGreaterThan(TTL);
  }

  @Test
  void aReleaseAfterADelaySendsItsShorterExpiryOnlyOnceTheBatchInFlightIsOutToEveryNode() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    List<NodeClient> clients = new ArrayList<>();
    List<String> uris = new ArrayList<>();
    AtomicReference<Lease> held = new AtomicReference<>();
    AtomicInteger expiriesSentEarly = new AtomicInteger();
    for (int i = 0; i < 3; i++) {
      SimulatedNode node = new SimulatedNode("sim://node" + i, time);
      nodes.add(node);
      uris.add(node.name());
      boolean first = i == 0;
      clients.add(
          new Unbatched(node) {
            @Override
            public CompletionStage<List<Boolean>> extendBatch(List<ExtendRequest> requests) {
              if (first && held.get() != null) {
                // The application releases while the batch is being handed out: node 0 has
                // its part, nodes 1 and 2 not yet.
                int before = nodes.get(1).extendRequests();
                held.getAndSet(null).releaseAfter(Duration.ofSeconds(1));
                expiriesSentEarly.addAndGet(nodes.get(1).extendRequests() - before);
              }
              return node.extendBatch(requests);
            }
          });
    }
    // A transport with only the required operations has no INFO for the restart guard to
    // read: the guard cannot run over it (the ordering under test does not depend on it).
    RedlockConfig config =
        RedlockConfig.builder().nodes(uris).retryCount(0).restartGuard(false).build();
    Redlock redlock = Redlock.over(config, clients, time, new Random(42), Runnable::run);
    Lease lease = redlock.acquireAsync("r", TTL).join().autoExtend();
    for (SimulatedNode node : nodes) {
      node.latency(Duration.ofMillis(10)); // the batch is answered 10 ms after it is sent
    }
    held.set(lease);

    while (held.get() != null) { // up to the batch: a quarter of the threshold before DUE
      time.advance(Duration.ofMillis(1));
    }

    // Sent before the batch reached node 1, the expiry would land there first, and the
    // batch's extension after it would give the key its full ttl again.
    assertThat(expiriesSentEarly).hasValue(0);
    for (SimulatedNode node : nodes) {
      // ... and sent once it was out, without waiting for the batch's answers (a batch may
      // wait ten node timeouts): the batch's extension, then the expiry.
      assertThat(node.extendRequests()).isEqualTo(2);
    }
    time.advance(Duration.ofMillis(30)); // the batch is answered, then the expiry lands
    for (SimulatedNode node : nodes) {
      assertThat(node.pttl("r")).isBetween(900L, 1_000L);
    }
    assertThat(lease.state()).isEqualTo(Lease.State.RELEASED);
  }

  @Test
  void aTransportWithoutBatchesExtendsEachLeaseWithARequestOfItsOwn() {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    List<NodeClient> plain = new ArrayList<>();
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      SimulatedNode node = new SimulatedNode("sim://node" + i, time);
      nodes.add(node);
      plain.add(new Unbatched(node));
      uris.add(node.name());
    }
    // A transport with only the required operations has no INFO for the restart guard to
    // read: the guard cannot run over it (the batching under test does not depend on it).
    RedlockConfig config =
        RedlockConfig.builder().nodes(uris).retryCount(0).restartGuard(false).build();
    Redlock redlock = Redlock.over(config, plain, time, new Random(42), Runnable::run);
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      leases.add(redlock.acquireAsync("r" + i, TTL).join().autoExtend());
    }

    time.advance(DUE);

    for (SimulatedNode node : nodes) {
      assertThat(node.batchRequests()).isZero();
      assertThat(node.extendRequests()).isEqualTo(10);
    }
    assertThat(leases).allMatch(lease -> lease.remaining().compareTo(Duration.ofSeconds(9)) > 0);
  }

  @Test
  void aTransportThatAnswersABatchWithNothingCostsThatNodesVotesOnly() {
    FakeTime time = new FakeTime();
    List<NodeClient> clients = new ArrayList<>();
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      SimulatedNode node = new SimulatedNode("sim://node" + i, time);
      clients.add(
          i > 0
              ? node
              : new Unbatched(node) {
                @Override
                public CompletionStage<List<Boolean>> extendBatch(List<ExtendRequest> requests) {
                  return null; // a broken transport
                }
              });
      uris.add(node.name());
    }
    RedlockConfig config =
        RedlockConfig.builder().nodes(uris).retryCount(0).restartGuard(false).build();
    Redlock redlock = Redlock.over(config, clients, time, new Random(42), Runnable::run);
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      leases.add(redlock.acquireAsync("r" + i, TTL).join().autoExtend());
    }

    time.advance(DUE);

    assertThat(leases).allMatch(lease -> lease.remaining().compareTo(Duration.ofSeconds(9)) > 0);
  }

  /** A transport that offers only the operations every transport has: no {@code extendBatch}. */
  private static class Unbatched implements NodeClient {
    private final SimulatedNode node;

    Unbatched(SimulatedNode node) {
      this.node = node;
    }

    @Override
    public String name() {
      return node.name();
    }

    @Override
    public CompletionStage<Void> connected() {
      return node.connected();
    }

    @Override
    public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
      return node.lock(keys, token, ttlMillis);
    }

    @Override
    public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
      return node.extend(keys, token, ttlMillis);
    }

    @Override
    public CompletionStage<Boolean> unlock(List<String> keys, String token) {
      return node.unlock(keys, token);
    }

    @Override
    public void close() {
      node.close();
    }
  }
}
