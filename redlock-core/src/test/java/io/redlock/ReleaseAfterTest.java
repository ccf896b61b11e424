package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.fake.SimulatedNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Lease#releaseAfter}: given up now, its keys standing for a minimum hold. */
class ReleaseAfterTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  private static SimCluster cluster() {
    return new SimCluster(3, b -> b.retryCount(0));
  }

  @Test
  void theKeysStandForTheDelayThenTheResourceIsFree() {
    SimCluster c = cluster();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();

    lease.releaseAfter(Duration.ofSeconds(3));

    assertThat(lease.state()).isEqualTo(Lease.State.RELEASED);
    assertThat(lease.isValid()).isFalse();
    for (SimulatedNode node : c.nodes) {
      assertThat(node.pttl("r")).isEqualTo(3_000);
      assertThat(node.unlockRequests()).isZero();
    }
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompletedExceptionally();
    c.time.advance(Duration.ofSeconds(3));
    assertThat(c.holding("r")).isZero();
    assertThat(c.redlock.acquireAsync("r", TTL).join().isValid()).isTrue();
  }

  /**
   * The shorter expiry goes like an extension, which a transport may carry apart from the
   * lock: on a node that had not run the lock yet it would find no key, and the late lock
   * would then set the full ttl (seen in CI through the ShedLock provider's lockAtLeastFor).
   */
  @Test
  void aNodeThatRunsTheLockLateGetsTheShorterExpiryAfterIt() {
    SimCluster c = cluster();
    assertTheLateNodeGetsTheShorterExpiry(c);
  }

  @Test
  void soDoesOneThatRunsAFencedLockLate() {
    SimCluster c = new SimCluster(3, true, b -> b.fencing(true).retryCount(0));
    assertTheLateNodeGetsTheShorterExpiry(c);
  }

  private static void assertTheLateNodeGetsTheShorterExpiry(SimCluster c) {
    c.node(2).lockLatency(Duration.ofMillis(30)); // within the node timeout (50 ms)
    Lease lease = c.redlock.acquireAsync("r", TTL).join(); // nodes 0 and 1 granted
    assertThat(c.node(2).pttl("r")).as("the lock has not run on node 2").isEqualTo(-2);

    lease.releaseAfter(Duration.ofSeconds(3)); // returns on the majority of 0 and 1
    assertThat(c.node(0).pttl("r")).isEqualTo(3_000);
    assertThat(c.node(2).extendRequests()).as("sent before node 2 answered the lock").isZero();

    c.time.advance(Duration.ofMillis(30)); // node 2 runs the lock, then gets the expiry
    for (SimulatedNode node : c.nodes) {
      assertThat(node.pttl("r")).as(node.name()).isLessThanOrEqualTo(3_000).isPositive();
    }
    c.time.advance(Duration.ofSeconds(3));
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void aStoppedNodeGetsTheShorterExpiryAfterTheLockItRunsOnResuming() {
    SimCluster c = cluster();
    c.node(2).pause();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();

    lease.releaseAfter(Duration.ofSeconds(3));
    assertThat(c.node(2).extendRequests()).as("sent before node 2 answered the lock").isZero();
    c.node(2).resume(); // runs the lock it held; its answer lets the expiry go
    c.time.runDue();

    assertThat(c.node(2).pttl("r")).isEqualTo(3_000);
  }

  @Test
  void anotherHoldersKeyIsLeftAlone() {
    SimCluster c = cluster();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    c.node(0).put("r", "other", Duration.ofHours(1)); // ours expired there, another took it

    lease.releaseAfter(Duration.ofSeconds(1));

    assertThat(c.node(0).valueOf("r")).isEqualTo("other");
    assertThat(c.node(0).pttl("r")).isEqualTo(3_600_000);
    assertThat(c.node(1).pttl("r")).isEqualTo(1_000);
  }

  @Test
  void aReleasedLeaseIsNotTouchedAgain() {
    SimCluster c = cluster();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    lease.release();

    lease.releaseAfter(Duration.ofSeconds(1));

    assertThat(c.node(0).extendRequests()).isZero();
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void aDelayOutsideItsRangeIsRefusedWithItsName() {
    SimCluster c = cluster();
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThatThrownBy(() -> lease.releaseAfter(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delay")
        .hasMessageContaining("1 ms to maxTtl (60 s)");
    assertThatThrownBy(() -> lease.releaseAfter(Duration.ofSeconds(61)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delay");
    assertThatThrownBy(() -> lease.releaseAfter(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("delay");
    assertThat(lease.isValid()).isTrue(); // a refused call changes nothing
  }
}
