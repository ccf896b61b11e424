package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome.Vote;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockUnavailableExceptionTest {

  private static LockUnavailableException after(Vote... votes) {
    List<NodeOutcome> outcomes = new ArrayList<>();
    for (int i = 0; i < votes.length; i++) {
      outcomes.add(new NodeOutcome(i, "node" + i, votes[i], ""));
    }
    return new LockUnavailableException(
        List.of("r"), 1, Duration.ofMillis(5), "a majority was not reached", outcomes);
  }

  @Test
  void aMajorityTakenIsHeldElsewhereAlsoWhenTheRoundWasDecidedEarly() {
    assertThat(
            after(Vote.TAKEN, Vote.TAKEN, Vote.TAKEN, Vote.GRANTED, Vote.GRANTED).heldElsewhere())
        .isTrue();
    assertThat(
            after(Vote.TAKEN, Vote.TAKEN, Vote.TAKEN, Vote.PENDING, Vote.PENDING).heldElsewhere())
        .isTrue();
    assertThat(after(Vote.TAKEN, Vote.TAKEN, Vote.TAKEN, Vote.TIMEOUT, Vote.ERROR).heldElsewhere())
        .isTrue();
  }

  @Test
  void failuresThatCouldHaveMadeUpTheMajorityAreNotContention() {
    assertThat(
            after(Vote.TAKEN, Vote.TAKEN, Vote.GRANTED, Vote.TIMEOUT, Vote.GRANTED).heldElsewhere())
        .isFalse();
    assertThat(
            after(Vote.TIMEOUT, Vote.TIMEOUT, Vote.TIMEOUT, Vote.GRANTED, Vote.GRANTED)
                .heldElsewhere())
        .isFalse();
    assertThat(
            after(Vote.TAKEN, Vote.TAKEN, Vote.HELD_BACK, Vote.HELD_BACK, Vote.HELD_BACK)
                .heldElsewhere())
        .as("held back by the restart guard")
        .isFalse();
    assertThat(after(Vote.GRANTED, Vote.GRANTED, Vote.GRANTED).heldElsewhere())
        .as("a majority granted, too late")
        .isFalse();
  }

  @Test
  void onAnEvenNumberOfNodesHalfTakenKeepsTheMajorityOutOfReach() {
    assertThat(after(Vote.TAKEN, Vote.TAKEN, Vote.GRANTED, Vote.TIMEOUT).heldElsewhere()).isTrue();
    assertThat(after(Vote.TAKEN, Vote.GRANTED, Vote.GRANTED, Vote.TIMEOUT).heldElsewhere())
        .isFalse();
  }
}
