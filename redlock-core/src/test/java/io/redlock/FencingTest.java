package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
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
    Throwable failure = SimCluster.failure(c.redlock.acquireAsync("r", TTL));
    assertThat(failure)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("trusted fencing counters")
        .hasMessageContaining("not declared fresh");
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
}
