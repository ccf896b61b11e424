package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeStalledException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** How a round sorts each node's failure: by its type, never by its message. */
class RoundOutcomesTest {
  private final FakeTime time = new FakeTime();
  private final List<NodeClient> nodes =
      List.of(
          new SimulatedNode("a", time),
          new SimulatedNode("b", time),
          new SimulatedNode("c", time),
          new SimulatedNode("d", time));
  private final RoundTimeouts timeouts = new RoundTimeouts(time, Duration.ofMillis(50).toNanos());

  @Test
  void aRequestTheTransportDidNotSendForAStalledNodeIsStalledWhateverItsMessage() {
    List<CompletionStage<Boolean>> replies =
        List.of(
            CompletableFuture.failedFuture(new NodeStalledException("timeout: not answering")),
            CompletableFuture.failedFuture(new TimeoutException("no answer")),
            CompletableFuture.failedFuture(new ConnectException("stalled, not connected")),
            CompletableFuture.completedFuture(true));

    Round round = Round.start(nodes, 3, timeouts, (index, node) -> replies.get(index));

    List<NodeOutcome> outcomes = round.settled().join().outcomes();
    assertThat(outcomes)
        .extracting(NodeOutcome::vote)
        .containsExactly(Vote.STALLED, Vote.TIMEOUT, Vote.ERROR, Vote.GRANTED);
    assertThat(outcomes.get(0).detail()).isEqualTo("timeout: not answering");
    assertThat(round.settled().join().reached()).isFalse();
  }
}
