package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome.Vote;
import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class RoundTimeoutsTest {
  private static final long TIMEOUT = Duration.ofMillis(50).toNanos();
  private static final CompletableFuture<Boolean> GRANTED = CompletableFuture.completedFuture(true);

  private final FakeTime time = new FakeTime();
  private final List<NodeClient> nodes =
      List.of(
          new SimulatedNode("a", time), new SimulatedNode("b", time), new SimulatedNode("c", time));
  private final RoundTimeouts timeouts = new RoundTimeouts(time, TIMEOUT);

  @Test
  void roundsShareOnePendingTimerTask() {
    for (int i = 0; i < 1_000; i++) {
      assertThat(Round.start(nodes, 2, timeouts, (index, node) -> GRANTED).settled()).isDone();
    }
    assertThat(time.pendingTasks()).isEqualTo(1);
    time.advance(Duration.ofNanos(TIMEOUT));
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void aSettledRoundIsLetGoWhenTheNextStartsBeforeItsTimerFires() {
    Round settled = Round.start(nodes, 2, timeouts, (index, node) -> GRANTED);
    assertThat(settled.settled()).isDone();
    assertThat(queued()).containsExactly(settled); // its timer has not fired: the clock stands

    Round next = Round.start(nodes, 2, timeouts, (index, node) -> GRANTED);

    // Without pruning on start, the settled round would stay queued (and reachable) until its
    // timer fired.
    assertThat(queued()).containsExactly(next);
    assertThat(time.pendingTasks()).isEqualTo(1);
  }

  private List<Round> queued() {
    synchronized (timeouts) {
      return List.copyOf(timeouts.inFlight);
    }
  }

  @Test
  void eachRoundTimesOutAtItsOwnDeadlineNotBefore() {
    Round first =
        Round.start(
            nodes, 2, timeouts, (index, node) -> index == 0 ? GRANTED : new CompletableFuture<>());
    time.advance(Duration.ofMillis(20));
    Round settledBetween = Round.start(nodes, 2, timeouts, (index, node) -> GRANTED);
    Round second = Round.start(nodes, 2, timeouts, (index, node) -> new CompletableFuture<>());

    time.advance(Duration.ofMillis(30).minusNanos(1));
    assertThat(first.settled()).isNotDone();
    time.advance(Duration.ofNanos(1)); // 50 ms after the first round started
    assertThat(first.settled().join().count(Vote.TIMEOUT)).isEqualTo(2);
    assertThat(settledBetween.settled().join().count(Vote.TIMEOUT)).isZero();

    time.advance(Duration.ofMillis(20).minusNanos(1));
    assertThat(second.settled()).isNotDone();
    time.advance(Duration.ofNanos(1)); // 50 ms after the second round started
    assertThat(second.settled().join().count(Vote.TIMEOUT)).isEqualTo(3);
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void theRequestsTheNodeTimeoutCutsOffAreCancelledAndNoOthers() {
    List<CompletableFuture<Boolean>> requests =
        List.of(new CompletableFuture<>(), new CompletableFuture<>(), new CompletableFuture<>());
    Round round = Round.start(nodes, 2, timeouts, (index, node) -> requests.get(index));
    requests.get(0).complete(true);
    List<Boolean> cancelledWhenDecided = new java.util.ArrayList<>();
    round
        .decision()
        .thenRun(() -> requests.forEach(r -> cancelledWhenDecided.add(r.isCancelled())));

    time.advance(Duration.ofNanos(TIMEOUT - 1));
    assertThat(requests).noneMatch(CompletableFuture::isCancelled);
    time.advance(Duration.ofNanos(1));

    // A transport may leave a cancelled lock request unsent: it can no longer count.
    assertThat(requests.get(0)).isCompletedWithValue(true);
    assertThat(requests.get(1)).isCancelled();
    assertThat(requests.get(2)).isCancelled();
    assertThat(round.settled().join().count(Vote.TIMEOUT)).isEqualTo(2);
    // Cancelled before the outcome is known: nothing done on hearing it (an undo, a retry)
    // comes before the cancellation.
    assertThat(cancelledWhenDecided).containsExactly(false, true, true);
  }

  @Test
  void aRoundWhoseNodeTimeoutPassesWhileItIsSentCancelsOnceItWasSent() {
    List<CompletableFuture<Boolean>> requests = new java.util.ArrayList<>();
    Round round =
        Round.start(
            nodes,
            2,
            timeouts,
            (index, node) -> {
              if (index == 1) {
                time.advance(Duration.ofNanos(TIMEOUT)); // the sending thread is held up
              }
              CompletableFuture<Boolean> request = new CompletableFuture<>();
              requests.add(request);
              return request;
            });

    // The timer expired the round while node 1's request was being made; the request to node
    // 2 was made after the deadline. Both, and node 0's, were cut off: all three cancelled.
    assertThat(round.settled().join().count(Vote.TIMEOUT)).isEqualTo(3);
    assertThat(requests).hasSize(3).allMatch(CompletableFuture::isCancelled);
  }
}
