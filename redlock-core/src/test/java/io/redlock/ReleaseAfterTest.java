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
