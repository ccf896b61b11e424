package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.fake.SimulatedNode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * An extension sent right after the lock (the ShedLock provider's {@code extend}, a caller's
 * {@code extend}) goes like any extension, which a transport may carry apart from the lock: on a
 * node that had not run the lock yet it would find no key, and the late lock would then set the
 * first ttl only, so that the key expires early there (seen in CI through the ShedLock
 * provider). It goes to such a node once that node answered the lock.
 */
class ExtendAfterLockTest {
  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration LONGER = Duration.ofSeconds(10);

  @Test
  void aNodeThatRunsTheLockLateGetsTheExtensionAfterIt() {
    assertTheLateNodeGetsTheExtension(new SimCluster(3, b -> b.retryCount(0)));
  }

  @Test
  void soDoesOneThatRunsAFencedLockLate() {
    assertTheLateNodeGetsTheExtension(new SimCluster(3, true, b -> b.fencing(true).retryCount(0)));
  }

  private static void assertTheLateNodeGetsTheExtension(SimCluster c) {
    c.node(2).lockLatency(Duration.ofMillis(30)); // within the node timeout (50 ms)
    Lease lease = c.redlock.acquireAsync("r", TTL).join(); // nodes 0 and 1 granted
    assertThat(c.node(2).pttl("r")).as("the lock has not run on node 2").isEqualTo(-2);

    CompletableFuture<Boolean> extended = lease.extendAsync(LONGER);
    assertThat(extended).as("confirmed by nodes 0 and 1").isCompletedWithValue(true);
    assertThat(c.node(0).pttl("r")).isEqualTo(LONGER.toMillis());
    assertThat(c.node(2).extendRequests()).as("sent before node 2 answered the lock").isZero();

    c.time.advance(Duration.ofMillis(30)); // node 2 runs the lock, then gets the extension
    for (SimulatedNode node : c.nodes) {
      assertThat(node.pttl("r")).as(node.name()).isGreaterThan(TTL.toMillis());
    }
  }

  @Test
  void aStoppedNodeGetsTheExtensionAfterTheLockItRunsOnResuming() {
    SimCluster c = new SimCluster(3, b -> b.retryCount(0));
    c.node(2).pause();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();

    assertThat(lease.extendAsync(LONGER)).isCompletedWithValue(true);
    assertThat(c.node(2).extendRequests()).as("sent before node 2 answered the lock").isZero();
    c.node(2).resume(); // runs the lock it held; its answer lets the extension go
    c.time.runDue();

    assertThat(c.node(2).pttl("r")).isEqualTo(LONGER.toMillis());
  }
}
