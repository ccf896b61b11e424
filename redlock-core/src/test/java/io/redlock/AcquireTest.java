package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.NodeOutcome.Vote;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The acquisition rules of DESIGN §2 over simulated nodes and a fake clock; no sleeps. */
class AcquireTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private static final Duration MS = Duration.ofMillis(1);

  @Test
  void succeedsWithExactlyAQuorumOfGrants() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0));
    c.node(3).put("r", "other", TTL);
    c.node(4).put("r", "other", TTL);
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    assertThat(lease).isCompleted();
    assertThat(c.holding("r", lease.join().token())).isEqualTo(3);
  }

  @Test
  void failsOneGrantShortOfAQuorumAndUndoesTheGrants() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0));
    for (int i = 2; i < 5; i++) {
      c.node(i).put("r", "other", TTL);
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.attempts()).isEqualTo(1);
    assertThat(e.lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsExactly(Vote.GRANTED, Vote.GRANTED, Vote.TAKEN, Vote.TAKEN, Vote.TAKEN);
    assertThat(e.getMessage()).contains("r", "1 attempt", "3 of 5", "TAKEN");
    assertThat(c.node(0).valueOf("r")).isNull();
    assertThat(c.node(1).valueOf("r")).isNull();
    assertThat(c.holding("r", "other")).isEqualTo(3);
  }

  @Test
  void aFailedAttemptIsUndoneOnlyWhereItMayHaveSetSomething() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0));
    for (int i = 2; i < 5; i++) {
      c.node(i).put("r", "other", TTL);
    }
    assertThat(c.redlock.acquireAsync("r", TTL)).isCompletedExceptionally();
    // the granting nodes are released; a node that answered TAKEN set nothing: left alone
    assertThat(c.node(0).unlockRequests()).isEqualTo(1);
    assertThat(c.node(1).unlockRequests()).isEqualTo(1);
    for (int i = 2; i < 5; i++) {
      assertThat(c.node(i).unlockRequests()).isZero();
      assertThat(c.node(i).valueOf("r")).isEqualTo("other");
    }
  }

  @Test
  void quorumIsAMajorityForEvenNAndForOneNode() {
    SimCluster four = new SimCluster(4, b -> b.retryCount(0));
    four.node(0).put("r", "other", TTL);
    assertThat(four.redlock.acquireAsync("r", TTL)).isCompleted();
    SimCluster fourTwoTaken = new SimCluster(4, b -> b.retryCount(0));
    fourTwoTaken.node(0).put("r", "other", TTL);
    fourTwoTaken.node(1).put("r", "other", TTL);
    assertThat(fourTwoTaken.redlock.acquireAsync("r", TTL)).isCompletedExceptionally();

    SimCluster one = new SimCluster(1, b -> b.retryCount(0));
    Lease lease = one.redlock.acquireAsync("r", TTL).join();
    assertThat(one.node(0).valueOf("r")).isEqualTo(lease.token());
    assertThat(one.redlock.acquireAsync("r", TTL)).isCompletedExceptionally();
  }

  @Test
  void requestsGoToAllNodesAtOnceAndSuccessIsDecidedAtTheQuorum() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(50)));
    for (int i = 0; i < 5; i++) {
      c.node(i).latency(Duration.ofMillis(1 + 2 * i)); // answers at 1, 3, 5, 7, 9 ms
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    // every node got its request before any answer arrived: a fan-out, not a walk
    assertThat(c.totalLockRequests()).isEqualTo(5);
    c.time.advance(Duration.ofMillis(4));
    assertThat(lease).isNotDone();
    c.time.advance(MS); // third answer at 5 ms
    assertThat(lease).isCompleted();
    // validity counts from before the first request: ttl - drift - 5 ms
    Duration drift = Duration.ofMillis(100 + 2);
    assertThat(lease.join().remaining()).isEqualTo(TTL.minus(drift).minusMillis(5));
  }

  @Test
  void failureIsDecidedAsSoonAsAQuorumCannotBeReached() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0));
    c.node(0).pause();
    c.node(1).pause();
    for (int i = 2; i < 5; i++) {
      c.node(i).latency(Duration.ofMillis(2));
    }
    for (int i = 2; i < 5; i++) {
      c.node(i).put("r", "other", TTL);
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(2));
    // three taken: the two paused nodes cannot make a majority; decided before the timeout,
    // and the cleanup goes out at once to every node that may hold the token
    assertThat(c.node(0).unlockRequests()).isEqualTo(1);
    assertThat(c.node(1).unlockRequests()).isEqualTo(1);
    for (int i = 2; i < 5; i++) {
      assertThat(c.node(i).unlockRequests()).isZero();
    }
    // the failure is reported once the cleanup is sent, not when the paused nodes time out
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.elapsed()).isEqualTo(Duration.ofMillis(2));
    assertThat(e.lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsExactly(Vote.PENDING, Vote.PENDING, Vote.TAKEN, Vote.TAKEN, Vote.TAKEN);
  }

  @Test
  void aDeadAndAPausedNodeDoNotDelayAHealthyMajority() {
    SimCluster c = new SimCluster(5, b -> b.nodeTimeout(Duration.ofMillis(50)));
    c.node(0).crash();
    c.node(1).pause();
    for (int i = 2; i < 5; i++) {
      c.node(i).latency(MS);
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(MS);
    assertThat(lease).isCompleted();
  }

  @Test
  void tooManyUnansweredNodesFailTheAttemptAtTheNodeTimeout() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(50)));
    c.node(0).crash();
    c.node(1).pause();
    c.node(2).pause();
    for (int i = 3; i < 5; i++) {
      c.node(i).latency(MS);
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(49));
    assertThat(lease).isNotDone();
    c.time.advance(MS);
    assertThat(c.node(3).unlockRequests()).isEqualTo(1); // decided: the cleanup is out
    c.time.advance(Duration.ofMillis(50)); // and settled, the paused nodes timing out again
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.elapsed()).isEqualTo(Duration.ofMillis(50));
    assertThat(e.lastOutcomes())
        .extracting(NodeOutcome::vote)
        // the crashed node's lost connection made the restart guard hold it back
        .containsExactly(Vote.HELD_BACK, Vote.TIMEOUT, Vote.TIMEOUT, Vote.GRANTED, Vote.GRANTED);
    assertThat(c.node(3).valueOf("r")).isNull();
    assertThat(c.node(4).valueOf("r")).isNull();
  }

  @Test
  void quorumReachedWithoutValidityLeftIsAFailure() {
    Duration ttl = Duration.ofMillis(100); // drift 1 ms + 2 ms: valid for 97 ms
    SimCluster c = new SimCluster(3, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(99)));
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(97));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", ttl);
    c.time.advance(Duration.ofMillis(97));
    Throwable e = SimCluster.failure(lease); // failed; the cleanup is on its way
    assertThat(e)
        .isInstanceOf(LockUnavailableException.class)
        .hasMessageContaining("after the validity");
    assertThat(c.holding("r")).isEqualTo(3); // the releases travel as slowly
    c.time.advance(Duration.ofMillis(97));
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void justEnoughValidityLeftIsASuccess() {
    Duration ttl = Duration.ofMillis(100);
    SimCluster c = new SimCluster(3, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(99)));
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(96));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", ttl);
    c.time.advance(Duration.ofMillis(96));
    assertThat(lease.join().remaining()).isEqualTo(MS);
  }

  @Test
  void afterAFailureEveryNodeIsCleanedUpIncludingThoseThatTimedOut() {
    SimCluster c = new SimCluster(5, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(50)));
    c.node(2).pause();
    c.node(3).pause();
    c.node(4).pause();
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(100)); // decided at 50 ms, cleanup settled at 100 ms
    assertThat(SimCluster.failure(lease)).isInstanceOf(LockUnavailableException.class);
    assertThat(c.node(0).valueOf("r")).isNull();
    assertThat(c.node(1).valueOf("r")).isNull();
    // the paused nodes wake up: each runs the held SET, then the release sent after it
    for (int i = 2; i < 5; i++) {
      assertThat(c.node(i).unlockRequests()).isEqualTo(1);
      c.node(i).resume();
    }
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void retriesUntilTheRetryCountIsSpent() {
    SimCluster c =
        new SimCluster(
            3,
            b ->
                b.retryCount(3)
                    .retryDelay(Duration.ofMillis(100))
                    .retryJitter(Duration.ofMillis(50)));
    for (int i = 0; i < 3; i++) {
      c.node(i).put("r", "other", Duration.ofHours(1));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advanceInSteps(Duration.ofSeconds(2), Duration.ofMillis(10));
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.attempts()).isEqualTo(4);
    assertThat(c.node(0).lockRequests()).isEqualTo(4);
  }

  @Test
  void retriesUntilTheMaximumWaitIsSpent() {
    SimCluster c =
        new SimCluster(
            3,
            b ->
                b.retryCount(1000)
                    .maxWait(Duration.ofMillis(250))
                    .retryDelay(Duration.ofMillis(100))
                    .retryJitter(Duration.ZERO));
    for (int i = 0; i < 3; i++) {
      c.node(i).put("r", "other", Duration.ofHours(1));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advanceInSteps(Duration.ofSeconds(2), Duration.ofMillis(10));
    // attempts at 0, 100 and 200 ms; one at 300 ms would start past the 250 ms budget
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.attempts()).isEqualTo(3);
    assertThat(e.elapsed()).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void aRetrySucceedsOnceTheHolderIsGone() {
    SimCluster c =
        new SimCluster(
            3, b -> b.retryDelay(Duration.ofMillis(100)).retryJitter(Duration.ofMillis(20)));
    for (int i = 0; i < 3; i++) {
      c.node(i).put("r", "other", Duration.ofMillis(250));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advanceInSteps(Duration.ofMillis(500), Duration.ofMillis(10));
    assertThat(lease).isCompleted();
    assertThat(c.holding("r", lease.join().token())).isEqualTo(3);
  }

  @Test
  void retryDelaysAreJitteredWithinTheConfiguredRange() {
    SimCluster c =
        new SimCluster(
            1,
            b ->
                b.retryCount(50)
                    .maxWait(Duration.ofMinutes(1))
                    .retryDelay(Duration.ofMillis(100))
                    .retryJitter(Duration.ofMillis(50)));
    c.node(0).put("r", "other", Duration.ofHours(1));
    c.redlock.acquireAsync("r", TTL);
    int previous = c.node(0).lockRequests();
    int sinceLast = 0;
    java.util.Set<Integer> gaps = new java.util.HashSet<>();
    for (int ms = 0; ms < 5_000 && c.node(0).lockRequests() < 51; ms++) {
      c.time.advance(MS);
      sinceLast++;
      if (c.node(0).lockRequests() != previous) {
        previous = c.node(0).lockRequests();
        assertThat(sinceLast).isBetween(50, 151);
        gaps.add(sinceLast);
        sinceLast = 0;
      }
    }
    assertThat(gaps.size()).as("delays vary").isGreaterThan(10);
  }

  @Test
  void severalResourcesAreTakenAllOrNothingOnEachNode() {
    SimCluster c = new SimCluster(3, b -> b.retryCount(0));
    c.node(0).put("b", "other", TTL);
    c.node(1).put("b", "other", TTL);
    assertThat(c.redlock.acquireAsync(List.of("a", "b"), TTL)).isCompletedExceptionally();
    assertThat(c.holding("a")).isZero();

    Lease lease = c.redlock.acquireAsync(List.of("c", "d"), TTL).join();
    assertThat(lease.resources()).containsExactly("c", "d");
    assertThat(c.holding("c", lease.token())).isEqualTo(3);
    assertThat(c.holding("d", lease.token())).isEqualTo(3);
    lease.releaseAsync();
    assertThat(c.holding("c") + c.holding("d")).isZero();
  }

  @Test
  void theKeyIsTheResourceNameOrItsPrefixedForm() {
    SimCluster plain = new SimCluster(1);
    Lease a = plain.redlock.acquireAsync("orders:42", TTL).join();
    assertThat(plain.node(0).valueOf("orders:42")).isEqualTo(a.token());

    SimCluster prefixed = new SimCluster(1, b -> b.keyPrefix("app:"));
    Lease b = prefixed.redlock.acquireAsync("orders:42", TTL).join();
    assertThat(prefixed.node(0).valueOf("app:orders:42")).isEqualTo(b.token());
    assertThat(b.resources()).containsExactly("orders:42");
  }

  @Test
  void eachAttemptUsesAFreshToken() {
    SimCluster c = new SimCluster(1);
    Lease a = c.redlock.acquireAsync("a", TTL).join();
    Lease b = c.redlock.acquireAsync("b", TTL).join();
    assertThat(a.token()).matches("[0-9a-f]{40}").isNotEqualTo(b.token());
  }

  @Test
  void tryAcquireMakesOneAttemptAndReturnsEmptyWhenHeld() throws Exception {
    SimCluster c = new SimCluster(3);
    for (int i = 0; i < 3; i++) {
      c.node(i).put("r", "other", TTL);
    }
    assertThat(c.redlock.tryAcquire("r", TTL)).isEmpty();
    assertThat(c.totalLockRequests()).isEqualTo(3);
    assertThat(c.redlock.tryAcquire("free", TTL)).isPresent();
  }

  @Test
  void anInterruptedAcquireThrowsAndLeavesNothingLocked() throws Exception {
    SimCluster c = new SimCluster(3, b -> b.nodeTimeout(Duration.ofMillis(50)));
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(10));
    }
    // The caller sends every request at once, on its own thread: it is interrupted as the last
    // one leaves, with the attempt in flight and no answer yet (they take 10 ms of fake time).
    Thread caller = Thread.currentThread();
    for (int i = 0; i < 3; i++) {
      c.node(i)
          .onLockRequest(
              () -> {
                if (c.totalLockRequests() == 3 && Thread.currentThread() == caller) {
                  caller.interrupt();
                }
              });
    }
    int idle = c.time.pendingTasks(); // the restart guard's probe tick
    assertThatThrownBy(() -> c.redlock.acquire("r", TTL)).isInstanceOf(InterruptedException.class);
    Thread.interrupted(); // whatever the call left of the flag is not this test's subject
    assertThat(c.totalLockRequests()).isEqualTo(3);
    c.time.advance(Duration.ofMillis(20)); // the SETs land and are granted after the interrupt
    assertThat(c.holding("r")).isZero();
    c.time.advance(Duration.ofMillis(50)); // one node timeout: the rounds' deadline check ends
    assertThat(c.time.pendingTasks()).isEqualTo(idle); // and no retry is scheduled
  }

  @Test
  void aCancelledAsyncAcquireLeavesNothingLocked() {
    SimCluster c = new SimCluster(3);
    for (int i = 0; i < 3; i++) {
      c.node(i).latency(Duration.ofMillis(10));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    lease.cancel(false);
    c.time.advance(Duration.ofMillis(30));
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void badArgumentsAreRefusedWithTheirName() {
    SimCluster c = new SimCluster(1);
    assertThatThrownBy(() -> c.redlock.acquireAsync("", TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resource name");
    assertThatThrownBy(() -> c.redlock.acquireAsync("x".repeat(1025), TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1024");
    assertThatThrownBy(() -> c.redlock.acquireAsync(List.of("a", "a"), TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> c.redlock.acquireAsync(List.of(), TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resources");
    assertThatThrownBy(() -> c.redlock.acquireAsync("r", Duration.ZERO))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> c.redlock.acquireAsync("r", Duration.ofMillis(50)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("nodeTimeout");
    assertThatThrownBy(() -> c.redlock.acquireAsync("r", Duration.ofDays(400)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("maxTtl (60 s)");
    assertThatThrownBy(() -> c.redlock.acquireAsync("r", Duration.ofSeconds(61)))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("ttl 61 s")
        .hasMessageContaining("maxTtl (60 s)");
    assertThatThrownBy(() -> c.redlock.acquireAsync((String) null, TTL))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("resource name");
    assertThatThrownBy(() -> c.redlock.tryAcquire((String) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("resource name");
    assertThatThrownBy(() -> c.redlock.acquireAsync(Arrays.asList("a", null), TTL))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("resource name");
    assertThatThrownBy(() -> c.redlock.acquireAsync("__redlock__:fresh", TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reserved");
    // Anywhere in the name: without a prefix, this is another application's fencing counter.
    assertThatThrownBy(() -> c.redlock.acquireAsync("app:__redlock_fence__:x", TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "resource name 'app:__redlock_fence__:x' is not accepted: names containing"
                + " '__redlock' are reserved for the library's own keys");
    assertThatThrownBy(() -> c.redlock.acquireAsync("x\r\n__redlock", TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("resource name 'x\\r\\n__redlock' is not accepted");
    assertThat(c.totalLockRequests()).isZero();
  }

  @Test
  void closeReleasesLiveLeasesAndRefusesNewAcquisitions() {
    SimCluster c = new SimCluster(3);
    c.redlock.acquireAsync("r", TTL).join();
    c.redlock.close();
    assertThat(c.holding("r")).isZero();
    assertThatThrownBy(() -> c.redlock.acquireAsync("r", TTL))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }
}
