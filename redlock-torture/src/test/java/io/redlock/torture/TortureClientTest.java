package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the runner names the cause of a failed acquisition from its last attempt's votes. */
class TortureClientTest {

  private static List<NodeOutcome> votes(Vote... votes) {
    List<NodeOutcome> outcomes = new ArrayList<>();
    for (int i = 0; i < votes.length; i++) {
      outcomes.add(new NodeOutcome(i, "node" + i, votes[i], ""));
    }
    return outcomes;
  }

  @Test
  void untrustedNodesAreTheCauseWhenTheyWouldHaveMadeTheMajority() {
    assertThat(
            TortureClient.causeOf(
                votes(Vote.GRANTED, Vote.GRANTED, Vote.UNTRUSTED, Vote.UNTRUSTED, Vote.TIMEOUT), 3))
        .isEqualTo("fencing: too few nodes with trusted counters");
  }

  @Test
  void aRoundLostToTimeoutsIsNotBlamedOnUntrustedNodes() {
    assertThat(
            TortureClient.causeOf(
                votes(Vote.GRANTED, Vote.UNTRUSTED, Vote.TIMEOUT, Vote.TIMEOUT, Vote.TIMEOUT), 3))
        .isEqualTo("nodes unreachable or slow");
  }
}
