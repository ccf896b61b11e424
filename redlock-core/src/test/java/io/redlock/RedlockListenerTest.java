package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.NodeOutcome.Vote;
import io.redlock.RedlockEvent.AcquireFinished;
import io.redlock.RedlockEvent.AcquireOutcome;
import io.redlock.RedlockEvent.AcquireStarted;
import io.redlock.RedlockEvent.ExtendOutcome;
import io.redlock.RedlockEvent.Extension;
import io.redlock.RedlockEvent.LeaseLost;
import io.redlock.RedlockEvent.NodeCounted;
import io.redlock.RedlockEvent.NodeHeldBack;
import io.redlock.RedlockEvent.NodeVote;
import io.redlock.RedlockEvent.Operation;
import io.redlock.RedlockEvent.Release;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The listener SPI: what is reported, when, and that a failing listener changes nothing. */
class RedlockListenerTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /** Records every event, in order. */
  static final class Recorder implements RedlockListener {
    final List<RedlockEvent> events = new ArrayList<>();

    synchronized <T extends RedlockEvent> List<T> of(Class<T> type) {
      List<T> found = new ArrayList<>();
      for (RedlockEvent event : events) {
        if (type.isInstance(event)) {
          found.add(type.cast(event));
        }
      }
      return found;
    }

    @Override
    public synchronized void acquireStarted(AcquireStarted event) {
      events.add(event);
    }

    @Override
    public synchronized void acquireFinished(AcquireFinished event) {
      events.add(event);
    }

    @Override
    public synchronized void nodeVoted(NodeVote event) {
      events.add(event);
    }

    @Override
    public synchronized void extended(Extension event) {
      events.add(event);
    }

    @Override
    public synchronized void leaseLost(LeaseLost event) {
      events.add(event);
    }

    @Override
    public synchronized void released(Release event) {
      events.add(event);
    }

    @Override
    public synchronized void nodeHeldBack(NodeHeldBack event) {
      events.add(event);
    }

    @Override
    public synchronized void nodeCounted(NodeCounted event) {
      events.add(event);
    }
  }

  /** Throws from every method. */
  static final class Throwing implements RedlockListener {
    int calls;

    private void fail() {
      calls++;
      throw new IllegalStateException("listener failure " + calls);
    }

    @Override
    public void acquireStarted(AcquireStarted event) {
      fail();
    }

    @Override
    public void acquireFinished(AcquireFinished event) {
      fail();
    }

    @Override
    public void nodeVoted(NodeVote event) {
      fail();
    }

    @Override
    public void extended(Extension event) {
      fail();
    }

    @Override
    public void leaseLost(LeaseLost event) {
      fail();
    }

    @Override
    public void released(Release event) {
      fail();
    }
  }

  private static List<Vote> votes(Recorder r, Operation operation) {
    List<Vote> votes = new ArrayList<>();
    for (NodeVote vote : r.of(NodeVote.class)) {
      if (vote.operation() == operation) {
        votes.add(vote.outcome().vote());
      }
    }
    return votes;
  }

  @Test
  void anAcquisitionReportsItsStartItsVotesAndItsEnd() {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(r));
    c.node(2).put("r", "other", TTL);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();

    AcquireStarted started = r.of(AcquireStarted.class).get(0);
    assertThat(started.resources()).containsExactly("r");
    assertThat(started.ttl()).isEqualTo(TTL);
    AcquireFinished finished = r.of(AcquireFinished.class).get(0);
    assertThat(finished.acquisition()).isEqualTo(started.acquisition());
    assertThat(finished.outcome()).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(finished.attempts()).isEqualTo(1);
    assertThat(finished.lease()).isSameAs(lease);
    assertThat(votes(r, Operation.ACQUIRE)).containsExactly(Vote.GRANTED, Vote.GRANTED, Vote.TAKEN);
    assertThat(r.of(NodeVote.class)).extracting(v -> v.outcome().index()).containsExactly(0, 1, 2);
  }

  @Test
  void aFencedAcquisitionReportsTheVotesOfItsConfirmationRound() throws Exception {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, true, b -> b.listener(r).fencing(true));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(lease.fencingToken()).isEqualTo(1);
    assertThat(votes(r, Operation.ACQUIRE)).containsOnly(Vote.GRANTED).hasSize(3);
    assertThat(votes(r, Operation.FENCE)).containsOnly(Vote.GRANTED).hasSize(3);
  }

  @Test
  void anUnavailableAcquisitionReportsEveryAttemptAndTheTimeItTook() {
    Recorder r = new Recorder();
    SimCluster c =
        new SimCluster(
            3,
            b ->
                b.listener(r)
                    .retryCount(2)
                    .retryDelay(Duration.ofMillis(200))
                    .retryJitter(Duration.ZERO));
    c.node(0).put("r", "other", TTL);
    c.node(1).put("r", "other", TTL);
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(400));

    assertThat(lease).isCompletedExceptionally();
    AcquireFinished finished = r.of(AcquireFinished.class).get(0);
    assertThat(finished.outcome()).isEqualTo(AcquireOutcome.UNAVAILABLE);
    assertThat(finished.attempts()).isEqualTo(3);
    assertThat(finished.elapsed()).isEqualTo(Duration.ofMillis(400));
    assertThat(finished.lease()).isNull();
    assertThat(votes(r, Operation.ACQUIRE))
        .hasSize(9)
        .containsOnly(Vote.TAKEN, Vote.GRANTED)
        .filteredOn(v -> v == Vote.TAKEN)
        .hasSize(6);
  }

  @Test
  void aCancelledAcquisitionIsReportedAsCancelled() {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(r));
    c.nodes.forEach(n -> n.latency(Duration.ofMillis(10)));
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    lease.cancel(false);
    c.time.advance(Duration.ofMillis(20));
    assertThat(r.of(AcquireFinished.class))
        .extracting(AcquireFinished::outcome)
        .containsExactly(AcquireOutcome.CANCELLED);
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void extensionsReportTheirOutcomeAndALossItsCause() throws Exception {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(r));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(lease.extendAsync(TTL).join()).isTrue();
    c.node(1).pause(); // no answers: two votes time out
    c.node(2).pause();
    CompletableFuture<Boolean> unconfirmed = lease.extendAsync(TTL);
    c.time.advance(Duration.ofMillis(50)); // the node timeout
    assertThat(unconfirmed.join()).isFalse();
    c.node(1).resume();
    c.node(2).resume();
    c.node(0).put("r", "other", TTL);
    c.node(1).put("r", "other", TTL);
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);

    assertThat(r.of(Extension.class))
        .extracting(Extension::outcome)
        .containsExactly(ExtendOutcome.EXTENDED, ExtendOutcome.UNCONFIRMED, ExtendOutcome.LOST);
    assertThat(votes(r, Operation.EXTEND))
        .containsExactly(
            Vote.GRANTED,
            Vote.GRANTED,
            Vote.GRANTED,
            Vote.GRANTED,
            Vote.TIMEOUT,
            Vote.TIMEOUT,
            Vote.TAKEN,
            Vote.TAKEN,
            Vote.GRANTED);
    LeaseLost lost = r.of(LeaseLost.class).get(0);
    assertThat(lost.lease()).isSameAs(lease);
    assertThat(lost.cause()).isEqualTo(LossCause.NOT_HELD);
  }

  @Test
  void aLeaseNobodyLooksAtIsReportedLostWhenItsValidityRunsOut() {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(r));
    c.redlock.acquireAsync("r", Duration.ofSeconds(1)); // valid for 988 ms; never looked at
    c.time.advance(Duration.ofMillis(987));
    assertThat(r.of(LeaseLost.class)).isEmpty();
    c.time.advance(Duration.ofMillis(1));
    assertThat(r.of(LeaseLost.class))
        .extracting(LeaseLost::cause)
        .containsExactly(LossCause.EXPIRED);
  }

  @Test
  void aReleaseIsReportedWhenEveryNodeAnswered() {
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(r));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    c.nodes.forEach(n -> n.latency(Duration.ofMillis(7)));
    lease.releaseAsync();
    assertThat(r.of(Release.class)).isEmpty();
    c.time.advance(Duration.ofMillis(7));
    assertThat(r.of(Release.class))
        .extracting(Release::elapsed)
        .containsExactly(Duration.ofMillis(7));
    assertThat(r.of(Release.class).get(0).lease()).isSameAs(lease);
  }

  @Test
  void theRestartGuardReportsANodeHeldBackAndCountedAgain() {
    Recorder r = new Recorder();
    // The guard's window is maxTtl (plus drift): 10 s here.
    SimCluster c = new SimCluster(3, b -> b.listener(r).ttl(TTL).maxTtl(TTL));
    c.node(1).restartEmpty();
    c.time.advance(Duration.ofSeconds(1)); // the probe sees the new run_id
    assertThat(r.of(NodeHeldBack.class)).extracting(NodeHeldBack::index).containsExactly(1);
    assertThat(r.of(NodeHeldBack.class).get(0).reason()).contains("seen for");
    assertThat(r.of(NodeCounted.class)).isEmpty();

    c.time.advanceInSteps(Duration.ofSeconds(11), Duration.ofSeconds(1));
    assertThat(r.of(NodeCounted.class)).extracting(NodeCounted::index).containsExactly(1);
    assertThat(r.of(NodeHeldBack.class)).hasSize(1);
  }

  @Test
  void aListenerThatThrowsChangesNothingAndTheNextListenerStillHears() throws Exception {
    Throwing throwing = new Throwing();
    Recorder r = new Recorder();
    SimCluster c = new SimCluster(3, b -> b.listener(throwing).listener(r));
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    assertThat(lease.extend(TTL)).isTrue();
    lease.release();
    assertThat(c.holding("r")).isZero();
    assertThat(c.redlock.acquireAsync("r", TTL).join().isValid()).isTrue();

    assertThat(throwing.calls).isGreaterThan(5);
    assertThat(r.of(AcquireFinished.class)).hasSize(2);
    assertThat(r.of(Extension.class)).hasSize(1);
    assertThat(r.of(Release.class)).hasSize(1);
  }

  @Test
  void theConfigurationShowsHowManyListenersAndNoSecret() {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes("redis://u:s3cret@h:1")
            .password("pw-secret")
            .listener(new Recorder())
            .build();
    assertThat(config.toString()).contains("listeners=1").doesNotContain("s3cret", "pw-secret");
    assertThat(config.toBuilder().build()).isEqualTo(config);
    assertThat(RedlockConfig.builder().nodes("redis://h:1").build().toString())
        .doesNotContain("listeners");
    assertThatThrownBy(() -> RedlockConfig.builder().listener(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("listener");
  }
}
