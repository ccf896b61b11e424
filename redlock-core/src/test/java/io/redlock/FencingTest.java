package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.spi.NodeInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Fenced acquisitions over simulated nodes: how the token is chosen, and when it is refused. */
class FencingTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final String COUNTER = "__redlock_fence__:r";

  @Test
  void theTokenIsOneMoreThanTheLargestTrustedCounterAndReachesEveryNode() {
    SimCluster c = new SimCluster(3, true, b -> b.fencing(true).retryCount(0));
    c.node(1).putPersistent(COUNTER, "41");
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(lease.fencingToken()).isEqualTo(42);
    for (int i = 0; i < 3; i++) {
      assertThat(c.node(i).valueOf(COUNTER)).as("node %d", i).isEqualTo("42");
    }
    lease.release();
    assertThat(c.redlock.acquireAsync("r", TTL).join().fencingToken()).isEqualTo(43);
  }

  @Test
  void nodesWhoseStateIsNotKnownCompleteAreNotTrustedAndTheAttemptIsUndone() {
    SimCluster c = new SimCluster(3, false, b -> b.fencing(true).retryCount(0));
    // seen for the window, the nodes count for locks; no client ever saw their data complete
    c.time.advanceInSteps(Duration.ofSeconds(61), Duration.ofSeconds(1));
    Throwable failure = SimCluster.failure(c.redlock.acquireAsync("r", TTL));
    assertThat(failure)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("trusted fencing counters")
        .hasMessageContaining("not known complete");
    assertThat(((LockUnavailableException) failure).lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsOnly(NodeOutcome.Vote.UNTRUSTED);
    assertThat(c.holding("r")).isZero();
    assertThat(c.node(0).valueOf(COUNTER)).isNull();
  }

  @Test
  void aLeaseOnSeveralResourcesTakesOneTokenAboveAllOfThem() {
    SimCluster c = new SimCluster(3, true, b -> b.fencing(true).retryCount(0));
    c.node(0).putPersistent("__redlock_fence__:b", "9");
    Lease lease = c.redlock.acquireAsync(List.of("a", "b"), TTL).join();
    assertThat(lease.fencingToken()).isEqualTo(10);
    assertThat(c.node(2).valueOf("__redlock_fence__:a")).isEqualTo("10");
    assertThat(c.node(2).valueOf("__redlock_fence__:b")).isEqualTo("10");
  }

  @Test
  void anUnfencedInstanceNeitherReadsNorWritesCounters() {
    SimCluster c = new SimCluster(3, true, b -> b.retryCount(0));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThatThrownBy(lease::fencingToken)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("fencing(true)");
    assertThat(c.node(0).valueOf(COUNTER)).isNull();
  }

  @Test
  void aLockKeyDeletedOnAMajorityBetweenTheRoundsFailsTheAttemptAndUndoesIt() {
    Duration ttl = Duration.ofMillis(100); // valid for 97 ms
    SimCluster c =
        new SimCluster(
            3, true, b -> b.fencing(true).retryCount(0).nodeTimeout(Duration.ofMillis(99)));
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(20));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", ttl);
    c.time.advance(Duration.ofMillis(20)); // the lock round is won; the confirmations travel
    assertThat(lease).isNotDone();
    String token = c.node(0).valueOf("r");
    assertThat(token).isNotNull();
    for (int i = 0; i < 2; i++) { // deleted on two of three, as by an eviction or a DEL
      c.node(i).latency(Duration.ZERO);
      assertThat(c.node(i).unlock(List.of("r"), token).toCompletableFuture().join()).isTrue();
    }
    c.time.advance(Duration.ofMillis(20));
    Throwable failure = SimCluster.failure(lease);
    assertThat(failure)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("not confirmed by a majority");
    c.time.advance(Duration.ofMillis(20)); // the undo reaches the slow node
    assertThat(c.holding("r")).as("nodes left locked").isZero();
    int raised = 0;
    for (int i = 0; i < 3; i++) {
      raised += c.node(i).valueOf(COUNTER) != null ? 1 : 0;
    }
    assertThat(raised).as("nodes whose counter was raised").isLessThanOrEqualTo(1);
    CompletableFuture<Lease> next = c.redlock.acquireAsync("r", ttl);
    c.time.advance(Duration.ofMillis(20));
    // free again; token 1 was never usable (no majority confirmed it), so it may come again
    assertThat(next.join().fencingToken()).as("free again").isPositive();
  }

  @Test
  void aConfirmationThatArrivesAfterTheValidityFailsTheAttemptAndUndoesIt() {
    Duration ttl = Duration.ofMillis(100); // valid for 97 ms
    SimCluster c =
        new SimCluster(
            3, true, b -> b.fencing(true).retryCount(0).nodeTimeout(Duration.ofMillis(99)));
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(60)); // the lock round at 60 ms, confirmed at 120
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", ttl);
    c.time.advance(Duration.ofMillis(60));
    assertThat(lease).isNotDone();
    assertThat(c.holding("r")).isEqualTo(3);
    c.time.advance(Duration.ofMillis(60));
    Throwable failure = SimCluster.failure(lease);
    assertThat(failure)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("after the validity");
    c.time.advance(Duration.ofMillis(60)); // the undo travels as slowly
    assertThat(c.holding("r")).as("nodes left locked").isZero();
  }

  @Test
  void nodesThatMayEvictCountersAreUntrustedAndAMajorityOfThemFailsTheAttempt() {
    SimCluster c = new SimCluster(3, true, b -> b.fencing(true).retryCount(0));
    c.node(0).memory(new NodeInfo.Memory(64L << 20, "allkeys-lru"));
    c.node(1).memory(new NodeInfo.Memory(64L << 20, "allkeys-lru"));
    c.node(2).memory(new NodeInfo.Memory(64L << 20, "volatile-lru")); // evicts only keys with ttl
    c.time.advance(Duration.ofSeconds(1)); // the restart guard's next probe reads them
    Throwable failure = SimCluster.failure(c.redlock.acquireAsync("r", TTL));
    assertThat(failure)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("trusted fencing counters")
        .hasMessageContaining("allkeys");
    assertThat(((LockUnavailableException) failure).lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsExactly(
            NodeOutcome.Vote.UNTRUSTED, NodeOutcome.Vote.UNTRUSTED, NodeOutcome.Vote.GRANTED);
    assertThat(c.holding("r")).isZero();
    assertThat(c.node(2).valueOf(COUNTER)).as("no token confirmed").isNull();
  }

  @Test
  void aCounterThatIsNotANumberIsAFailedVoteNamingItNeverAZero() {
    SimCluster c = new SimCluster(3, true, b -> b.fencing(true).retryCount(0));
    c.node(0).putPersistent(COUNTER, "garbage");
    c.node(1).putPersistent(COUNTER, "41");
    c.node(2).putPersistent(COUNTER, "12x");
    Throwable failure = SimCluster.failure(c.redlock.acquireAsync("r", TTL));
    assertThat(failure).isInstanceOf(LockUnavailableException.class);
    List<NodeOutcome> outcomes = ((LockUnavailableException) failure).lastOutcomes();
    assertThat(outcomes)
        .extracting(NodeOutcome::vote)
        .containsExactly(NodeOutcome.Vote.ERROR, NodeOutcome.Vote.GRANTED, NodeOutcome.Vote.ERROR);
    assertThat(outcomes.get(0).detail()).contains(COUNTER);
    assertThat(c.holding("r")).isZero();
    assertThat(c.node(1).valueOf(COUNTER)).isEqualTo("41");

    c.node(2).putPersistent(COUNTER, "7"); // repaired: a majority reads 41 and 7
    assertThat(c.redlock.acquireAsync("r", TTL).join().fencingToken()).isEqualTo(42);
  }
}
