package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.fake.SimulatedNode;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What happens around a lease: withLock's exits, closing mid-acquisition, the watchdog. */
class LifecycleTest {
  private static final Duration TTL = Duration.ofSeconds(2);

  /** Throws a checked exception the compiler does not see, as Kotlin or Lombok code can. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> void sneakyThrow(Throwable t) throws E {
    throw (E) t;
  }

  @Test
  void withLockReleasesWhenTheActionThrowsACheckedExceptionSneakily() {
    SimCluster c = new SimCluster(3);
    IOException thrown = new IOException("disk full");
    assertThatThrownBy(() -> c.redlock.withLock("r", TTL, lease -> sneakyThrow(thrown)))
        .isSameAs(thrown);
    assertThat(c.holding("r")).isZero();
    c.time.advanceInSteps(Duration.ofSeconds(10), Duration.ofMillis(100));
    assertThat(c.node(0).extendRequests()).isZero(); // no watchdog left extending it
  }

  @Test
  void withLockPropagatesTheLossTheActionSawItself() {
    SimCluster c = new SimCluster(3);
    assertThatThrownBy(
            () ->
                c.redlock.withLock(
                    "r",
                    TTL,
                    lease -> {
                      for (SimulatedNode node : c.nodes) {
                        node.pause(); // the watchdog cannot extend any more
                      }
                      c.time.advanceInSteps(TTL, Duration.ofMillis(10));
                      lease.ensureValid();
                    }))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("validity ran out");
  }

  @Test
  void closeDuringARetryDelayFailsTheAcquisitionInsteadOfHanging() {
    SimCluster c =
        new SimCluster(3, b -> b.retryDelay(Duration.ofMillis(100)).retryJitter(Duration.ZERO));
    for (SimulatedNode node : c.nodes) {
      node.put("r", "other", Duration.ofHours(1));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    assertThat(lease).isNotDone(); // first attempt failed, the retry waits on the timer
    c.redlock.close();
    assertThat(SimCluster.failure(lease))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    c.time.advance(Duration.ofSeconds(1));
    assertThat(c.node(0).lockRequests()).isEqualTo(1);
  }

  @Test
  void closeDuringAnAttemptReleasesWhatTheAttemptGets() {
    SimCluster c = new SimCluster(3);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(5));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.redlock.close();
    c.time.advance(Duration.ofMillis(20));
    assertThat(SimCluster.failure(lease)).isInstanceOf(IllegalStateException.class);
    assertThat(c.holding("r")).isZero();
  }

  /**
   * Closing releases the leases one after the other, which takes seconds at 100,000 held: the
   * leases not released yet are still extended meanwhile, not left to run out and be reported
   * lost (a WARN line each).
   */
  @Test
  void closeKeepsExtendingTheLeasesItHasNotReleasedYet() {
    SimCluster c = new SimCluster(3);
    Lease first = c.redlock.acquireAsync("a", TTL).join().autoExtend();
    Lease second = c.redlock.acquireAsync("b", TTL).join().autoExtend();
    AtomicInteger lost = new AtomicInteger();
    first.onLost(e -> lost.incrementAndGet());
    second.onLost(e -> lost.incrementAndGet());
    AtomicBoolean once = new AtomicBoolean();
    c.node(0)
        .onUnlockRequest(
            () -> { // the first release sent takes two ttls of the closing thread
              if (once.compareAndSet(false, true)) {
                c.time.advanceInSteps(TTL.multipliedBy(2), Duration.ofMillis(10));
              }
            });

    CompletableFuture<Void> closed = c.redlock.closeAsync();
    c.time.advance(Duration.ofSeconds(1));

    assertThat(closed).isDone();
    assertThat(lost.get()).isZero();
    assertThat(first.state()).isEqualTo(Lease.State.RELEASED);
    assertThat(second.state()).isEqualTo(Lease.State.RELEASED);
    assertThat(c.holding("a") + c.holding("b")).isZero();
  }

  @Test
  void releasingALeasePastItsDeadlineTellsTheLostListeners() {
    SimCluster c = new SimCluster(3);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    AtomicInteger told = new AtomicInteger();
    c.time.advance(TTL); // past the deadline; the watch has not run yet
    lease.onLost(e -> told.incrementAndGet());
    lease.release();
    assertThat(told.get()).isEqualTo(1);
    assertThat(lease.state()).isEqualTo(Lease.State.LOST);
  }

  @Test
  void autoExtendOfALeasePastItsDeadlineThrowsLost() {
    SimCluster c = new SimCluster(3);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    c.time.advance(TTL);
    assertThatThrownBy(lease::autoExtend).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void aHighAutoExtendThresholdDoesNotExtendBackToBack() {
    SimCluster c = new SimCluster(3, b -> b.autoExtendThreshold(0.999));
    Lease lease = c.redlock.acquireAsync("r", TTL).join().autoExtend();
    c.time.advanceInSteps(Duration.ofSeconds(1), Duration.ofMillis(1));
    // at most one extension per node timeout (50 ms), however little room the threshold leaves
    assertThat(c.node(0).extendRequests()).isBetween(1, 21);
    assertThat(lease.isValid()).isTrue();
  }

  @Test
  void aLostLeaseReportsAFreshExceptionEachTime() {
    SimCluster c = new SimCluster(3);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    c.time.advance(TTL);
    Throwable first = org.assertj.core.api.Assertions.catchThrowable(lease::ensureValid);
    Throwable second = org.assertj.core.api.Assertions.catchThrowable(lease::ensureValid);
    assertThat(first).isInstanceOf(LeaseLostException.class).isNotSameAs(second);
    assertThat(first.getMessage()).isEqualTo(second.getMessage());
  }
}
