package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.fake.SimulatedNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The lease rules of DESIGN §2 (extend, auto-extension, loss, release) on a fake clock. */
class LeaseTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration MS = Duration.ofMillis(1);
  private static final Duration NODE_TIMEOUT = Duration.ofMillis(50);

  private static SimCluster cluster(int n) {
    return new SimCluster(n, b -> b.retryCount(0).nodeTimeout(NODE_TIMEOUT));
  }

  /** Acquires {@code r} at once: the nodes answer without latency. */
  private static Lease acquire(SimCluster c, Duration ttl) {
    return c.redlock.acquireAsync("r", ttl).join();
  }

  private static int extendRequests(SimCluster c) {
    int total = 0;
    for (SimulatedNode node : c.nodes) {
      total += node.extendRequests();
    }
    return total;
  }

  private static int unlockRequests(SimCluster c) {
    int total = 0;
    for (SimulatedNode node : c.nodes) {
      total += node.unlockRequests();
    }
    return total;
  }

  private static void assertLost(Lease lease) {
    assertThat(lease.state()).isEqualTo(Lease.State.LOST);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
    assertThatThrownBy(lease::ensureValid).isInstanceOf(LeaseLostException.class);
  }

  // ---- extend ----

  @Test
  void extendMovesTheValidityToExtensionStartPlusNewTtlMinusDrift() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    c.time.advance(Duration.ofSeconds(5));
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    Duration newTtl = Duration.ofSeconds(20); // drift: 200 ms + 2 ms
    CompletableFuture<Boolean> extended = lease.extendAsync(newTtl);
    assertThat(extended).isNotDone();
    c.time.advance(Duration.ofMillis(10)); // confirmed 10 ms after the extension started

    assertThat(extended).isCompletedWithValue(true);
    // from the start: 20 s - 202 ms - the 10 ms the requests took (from the decision: 19.798 s)
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(20_000 - 202 - 10));
    assertThat(lease.isValid()).isTrue();
    for (SimulatedNode node : c.nodes) {
      assertThat(node.pttl("r")).isEqualTo(20_000);
      assertThat(node.valueOf("r")).isEqualTo(lease.token());
    }
    // valid past the old deadline, and exactly until the new one
    c.time.advance(Duration.ofMillis(20_000 - 202 - 10).minus(MS));
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.remaining()).isEqualTo(MS);
    c.time.advance(MS);
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void extendingAnExpiredLeaseThrowsMarksItLostAndSendsNoExtendRequest() {
    Duration ttl = Duration.ofSeconds(1); // drift 10 ms + 2 ms: valid for 988 ms
    SimCluster c = cluster(3);
    Lease lease = acquire(c, ttl);
    c.time.advance(Duration.ofMillis(990)); // validity over; the keys live 10 ms more
    assertThat(c.holding("r", lease.token())).as("keys outlive the validity").isEqualTo(3);

    assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(5)))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("r");
    assertThat(extendRequests(c)).isZero();
    assertThat(c.holding("r")).as("no key re-created or prolonged").isZero();
    assertLost(lease);
    c.time.advance(Duration.ofSeconds(10));
    assertLost(lease); // forever
    assertThat(extendRequests(c)).isZero();
  }

  @Test
  void extendThrowsLostWhenAMajorityHoldsAnotherValue() throws Exception {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    c.node(0).put("r", "other", TTL);
    c.node(1).put("r", "other", TTL);

    assertThatThrownBy(() -> lease.extend(TTL))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("majority");
    assertLost(lease);
    assertThat(c.holding("r", "other")).as("their keys stay").isEqualTo(2);
    assertThat(c.node(2).valueOf("r")).as("our leftover is deleted").isNull();
  }

  @Test
  void extendThrowsLostWhenAMajorityLostTheKeyAndAnotherTookIt() {
    SimCluster c = new SimCluster(5);
    Lease lease = acquire(c, TTL);
    // three nodes' clocks leapt forward and expired the key early, before the restart guard's
    // next probe could see it; another client took two of them
    for (int i = 0; i < 3; i++) {
      c.node(i).jumpClock(TTL.multipliedBy(2));
    }
    c.node(0).put("r", "other", TTL);
    c.node(1).put("r", "other", TTL);

    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);
    assertLost(lease);
    assertThat(c.holding("r", "other")).isEqualTo(2);
    assertThat(c.holding("r", lease.token())).isZero();
  }

  @Test
  void extendTooFewNodesAnswerReturnsFalseAndKeepsTheOldDeadline() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL); // valid until 9.898 s
    c.time.advance(Duration.ofSeconds(1));
    c.node(0).pause();
    c.node(1).pause();
    CompletableFuture<Boolean> extended = lease.extendAsync(TTL);
    c.time.advance(NODE_TIMEOUT.minus(MS));
    assertThat(extended).isNotDone();
    c.time.advance(MS);

    assertThat(extended).isCompletedWithValue(false);
    // min(old deadline 9.898 s, 1 s + 9.898 s): the old one
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(9_898 - 1_000 - 50));
    assertThat(lease.state()).isEqualTo(Lease.State.HELD);
    c.time.advance(Duration.ofMillis(9_898 - 1_000 - 50).minus(MS));
    assertThat(lease.isValid()).isTrue();
    c.time.advance(MS);
    assertThat(lease.isValid()).isFalse();
  }

  @Test
  void extendTooFewNodesAnswerWithAShorterTtlShrinksTheDeadline() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL); // valid until 9.898 s
    c.time.advance(Duration.ofSeconds(1));
    c.node(0).pause();
    c.node(1).pause();
    Duration shorter = Duration.ofSeconds(2); // drift 20 ms + 2 ms
    CompletableFuture<Boolean> extended = lease.extendAsync(shorter);
    c.time.advance(NODE_TIMEOUT);

    assertThat(extended).isCompletedWithValue(false);
    // node 2 applied the PEXPIRE: only start + 2 s - 22 ms is still guaranteed
    assertThat(c.node(2).pttl("r")).isEqualTo(2_000 - 50);
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(2_000 - 22 - 50));
    c.time.advance(Duration.ofMillis(2_000 - 22 - 50).minus(MS));
    assertThat(lease.isValid()).isTrue();
    c.time.advance(MS);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.state()).isEqualTo(Lease.State.LOST);
  }

  @Test
  void anExtensionConfirmedOnlyAfterTheOldDeadlineLosesTheLease() {
    Duration ttl = Duration.ofSeconds(1); // valid for 988 ms
    SimCluster c = cluster(3);
    Lease lease = acquire(c, ttl);
    c.time.advance(Duration.ofMillis(950));
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(45)); // confirmed at 995 ms, keys still there until 1 s
    }
    CompletableFuture<Boolean> extended = lease.extendAsync(ttl);
    c.time.advance(Duration.ofMillis(45));

    assertThat(SimCluster.failure(extended))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("validity ran out");
    assertLost(lease);
    c.time.advance(Duration.ofMillis(45)); // the compare-and-deletes land
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void aLostLeaseIsNeverValidAgainEvenIfTheNodesHoldItsTokenLater() throws Exception {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    c.node(0).put("r", "other", TTL);
    c.node(1).put("r", "other", TTL);
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);
    int extendsBefore = extendRequests(c);

    // every node holds our token again: an extension would now be confirmed everywhere
    for (SimulatedNode node : c.nodes) {
      node.put("r", lease.token(), TTL);
    }
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);
    assertThatThrownBy(lease::autoExtend).isInstanceOf(LeaseLostException.class);
    assertThat(extendRequests(c)).isEqualTo(extendsBefore);
    assertLost(lease);
    c.time.advance(Duration.ofSeconds(1));
    assertLost(lease);
  }

  @Test
  void extensionsAreAppliedOneAtATimeInTheOrderAsked() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Boolean> first = lease.extendAsync(Duration.ofSeconds(20));
    CompletableFuture<Boolean> second = lease.extendAsync(Duration.ofSeconds(5));
    assertThat(c.node(0).extendRequests()).as("the second waits for the first").isEqualTo(1);

    c.time.advance(Duration.ofMillis(10));
    assertThat(first).isCompletedWithValue(true);
    assertThat(second).isNotDone();
    assertThat(c.node(0).extendRequests()).isEqualTo(2);

    c.time.advance(Duration.ofMillis(10));
    assertThat(second).isCompletedWithValue(true);
    // the last one asked for wins, measured from its own start (10 ms)
    assertThat(c.node(0).pttl("r")).isEqualTo(5_000);
    assertThat(lease.remaining()).isEqualTo(Duration.ofMillis(5_000 - 52 - 10));
  }

  // ---- onLost ----

  @Test
  void onLostIsCalledOnceAtTheDeadlineWithoutAnyoneLooking() {
    Duration ttl = Duration.ofSeconds(1); // valid for 988 ms
    SimCluster c = cluster(3);
    Lease lease = acquire(c, ttl);
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<LeaseLostException> cause = new AtomicReference<>();
    lease.onLost(
        e -> {
          calls.incrementAndGet();
          cause.set(e);
        });

    c.time.advance(Duration.ofMillis(987));
    assertThat(calls).hasValue(0);
    c.time.advance(MS);
    assertThat(calls).as("told at the deadline, before anyone looked").hasValue(1);
    assertThat(cause.get().resources()).containsExactly("r");

    assertLost(lease);
    c.time.advance(Duration.ofSeconds(5));
    assertLost(lease);
    assertThat(calls).hasValue(1);
  }

  @Test
  void onLostRegisteredAfterTheLossIsCalledAtOnce() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, Duration.ofSeconds(1));
    c.time.advance(Duration.ofSeconds(1));
    assertThat(lease.isValid()).isFalse();
    AtomicInteger calls = new AtomicInteger();
    lease.onLost(e -> calls.incrementAndGet());
    assertThat(calls).hasValue(1);
    c.time.advance(Duration.ofSeconds(5));
    assertThat(calls).hasValue(1);
  }

  @Test
  void onLostIsNeverCalledForALeaseReleasedWhileValid() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, Duration.ofSeconds(1));
    AtomicInteger calls = new AtomicInteger();
    lease.onLost(e -> calls.incrementAndGet());
    lease.release();
    c.time.advance(Duration.ofSeconds(5));
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.state()).isEqualTo(Lease.State.RELEASED);
    lease.onLost(e -> calls.incrementAndGet());
    c.time.advance(Duration.ofSeconds(5));
    assertThat(calls).hasValue(0);
  }

  // ---- autoExtend ----

  @Test
  void autoExtendKeepsTheLeaseValidThenLosesItAtTheDeadlineWhenNodesStopAnswering() {
    Duration ttl = Duration.ofSeconds(1);
    SimCluster c = cluster(3);
    Lease lease = acquire(c, ttl);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(5));
    }
    AtomicInteger calls = new AtomicInteger();
    lease.onLost(e -> calls.incrementAndGet());
    assertThat(lease.autoExtend()).isSameAs(lease);
    assertThat(lease.autoExtend()).isSameAs(lease); // idempotent

    for (int step = 0; step < 400; step++) { // 4 s = 4 × ttl, in 10 ms steps
      c.time.advance(Duration.ofMillis(10));
      assertThat(lease.isValid()).as("valid after %d ms", (step + 1) * 10).isTrue();
    }
    assertThat(c.node(0).extendRequests()).isGreaterThanOrEqualTo(6);
    assertThat(c.holding("r", lease.token())).isEqualTo(3);
    assertThat(calls).hasValue(0);

    for (SimulatedNode node : c.nodes) {
      node.pause();
    }
    long deadlineNanos = lease.remaining().toNanos();
    assertThat(deadlineNanos).isPositive();
    c.time.advance(Duration.ofNanos(deadlineNanos)); // nobody looks meanwhile
    assertThat(calls).as("listener told by the deadline").hasValue(1);
    assertLost(lease);
    c.time.advance(Duration.ofSeconds(5));
    assertThat(calls).hasValue(1);
  }

  @Test
  void autoExtendOfAReleasedLeaseIsRefused() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    lease.release();
    assertThatThrownBy(lease::autoExtend).isInstanceOf(IllegalStateException.class);
  }

  // ---- release ----

  @Test
  void releaseDeletesTheKeysEverywhereAndIsIdempotent() {
    SimCluster c = cluster(3);
    Lease lease = acquire(c, TTL);
    assertThat(c.holding("r", lease.token())).isEqualTo(3);

    lease.release();
    assertThat(c.holding("r")).isZero();
    for (SimulatedNode node : c.nodes) {
      assertThat(node.unlockRequests()).isEqualTo(1);
    }
    assertThat(lease.state()).isEqualTo(Lease.State.RELEASED);
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.remaining()).isZero();
    assertThatThrownBy(lease::ensureValid)
        .isInstanceOf(IllegalStateException.class)
        .isNotInstanceOf(LeaseLostException.class);
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(IllegalStateException.class);
    assertThat(extendRequests(c)).isZero();

    lease.release();
    lease.releaseAsync().join();
    assertThat(unlockRequests(c)).isEqualTo(3);
    assertThat(lease.state()).isEqualTo(Lease.State.RELEASED);
  }

  @Test
  void releaseAfterExpiryNeverDeletesTheKeyOfTheNextHolder() {
    SimCluster c = cluster(3);
    Lease ours = acquire(c, Duration.ofSeconds(1));
    c.time.advance(Duration.ofSeconds(1)); // our keys expired; nobody looked at the lease
    Lease theirs = acquire(c, TTL);
    assertThat(theirs.token()).isNotEqualTo(ours.token());

    ours.release();
    assertThat(c.holding("r", theirs.token())).isEqualTo(3);
    assertThat(theirs.isValid()).isTrue();
    assertThat(theirs.extendAsync(TTL)).isCompletedWithValue(true);
  }

  @Test
  void closeReleasesTheLeaseForTryWithResources() {
    SimCluster c = cluster(3);
    Lease kept;
    try (Lease lease = acquire(c, TTL)) {
      kept = lease;
      assertThat(c.holding("r", lease.token())).isEqualTo(3);
    }
    assertThat(c.holding("r")).isZero();
    assertThat(kept.state()).isEqualTo(Lease.State.RELEASED);
    kept.close();
    assertThat(unlockRequests(c)).isEqualTo(3);
  }

  // ---- withLock / callWithLock ----

  @Test
  void callWithLockRunsTheActionUnderAnAutoExtendedLeaseAndReleasesAfter() throws Exception {
    SimCluster c = cluster(3);
    int idle = c.time.pendingTasks(); // the restart guard's probe tick
    Duration ttl = Duration.ofSeconds(1);
    AtomicReference<Lease> seen = new AtomicReference<>();
    String result =
        c.redlock.callWithLock(
            "r",
            ttl,
            lease -> {
              seen.set(lease);
              assertThat(c.holding("r", lease.token())).isEqualTo(3);
              for (int step = 0; step < 300; step++) { // 3 s = 3 × ttl
                c.time.advance(Duration.ofMillis(10));
                lease.ensureValid();
              }
              return "done";
            });
    assertThat(result).isEqualTo("done");
    assertThat(c.node(0).extendRequests()).isPositive();
    assertThat(seen.get().state()).isEqualTo(Lease.State.RELEASED);
    assertThat(c.holding("r")).isZero();
    c.time.advance(c.redlock.config().nodeTimeout()); // the rounds' deadline check ends
    assertThat(c.time.pendingTasks()).as("no watchdog left behind").isEqualTo(idle);
  }

  @Test
  void withLockReleasesAndPropagatesWhenTheActionThrows() {
    SimCluster c = cluster(3);
    AtomicReference<Lease> seen = new AtomicReference<>();
    IllegalStateException boom = new IllegalStateException("boom");
    assertThatThrownBy(
            () ->
                c.redlock.withLock(
                    "r",
                    TTL,
                    lease -> {
                      seen.set(lease);
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThat(boom.getSuppressed()).isEmpty();
    assertThat(seen.get().state()).isEqualTo(Lease.State.RELEASED);
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void withLockThrowsLostAfterTheActionWhenTheLeaseWasLostMeanwhile() {
    SimCluster c = cluster(3);
    Duration ttl = Duration.ofSeconds(1);
    AtomicInteger ran = new AtomicInteger();
    assertThatThrownBy(
            () ->
                c.redlock.withLock(
                    "r",
                    ttl,
                    lease -> {
                      for (int i = 0; i < 2; i++) {
                        c.node(i).put("r", "other", TTL); // another holder overwrote a majority
                      }
                      c.time.advance(Duration.ofSeconds(1)); // the watchdog's extension finds out
                      ran.incrementAndGet();
                    }))
        .isInstanceOf(LeaseLostException.class);
    assertThat(ran).hasValue(1);
    assertThat(c.holding("r", "other")).isEqualTo(2);
  }

  @Test
  void severalResourcesAreExtendedAndReleasedTogether() throws Exception {
    SimCluster c = cluster(3);
    Lease lease = c.redlock.acquireAsync(List.of("a", "b"), TTL).join();
    c.time.advance(Duration.ofSeconds(1));
    assertThat(lease.extend(Duration.ofSeconds(30))).isTrue();
    assertThat(c.node(1).pttl("a")).isEqualTo(30_000);
    assertThat(c.node(1).pttl("b")).isEqualTo(30_000);
    lease.release();
    assertThat(c.holding("a") + c.holding("b")).isZero();
  }
}
