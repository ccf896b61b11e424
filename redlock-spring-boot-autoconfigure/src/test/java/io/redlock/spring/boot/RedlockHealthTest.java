package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeState;
import io.redlock.NodeState.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The health decision over node states, for every mix of states on three and five nodes. */
class RedlockHealthTest {

  private static NodeState node(int i, Status status) {
    boolean reachable = status != Status.UNREACHABLE;
    boolean counted = status == Status.COUNTED;
    return new NodeState(
        i, "10.0.0." + i + ":6379", reachable, counted, status, counted ? "" : "why");
  }

  @Test
  void upWithAQuorumCountedHeldBackWithAQuorumCountedOrHeldBackElseDown() {
    Status[] all = Status.values();
    for (int n : new int[] {3, 5}) {
      int quorum = n / 2 + 1;
      int combinations = (int) Math.pow(all.length, n);
      for (int c = 0; c < combinations; c++) {
        List<NodeState> states = new ArrayList<>();
        int counted = 0;
        int heldBack = 0;
        for (int i = 0, rest = c; i < n; i++, rest /= all.length) {
          Status status = all[rest % all.length];
          states.add(node(i, status));
          counted += status == Status.COUNTED ? 1 : 0;
          heldBack += status == Status.HELD_BACK ? 1 : 0;
        }
        RedlockHealth.State expected =
            counted >= quorum
                ? RedlockHealth.State.UP
                : counted + heldBack >= quorum
                    ? RedlockHealth.State.HELD_BACK
                    : RedlockHealth.State.DOWN;
        assertThat(RedlockHealth.of(states, quorum).state())
            .as(states.toString())
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void theDetailsNameEveryNodeWithItsReason() {
    RedlockHealth health =
        RedlockHealth.of(
            List.of(
                node(0, Status.COUNTED), node(1, Status.UNREACHABLE), node(2, Status.HELD_BACK)),
            2);
    assertThat(health.state()).isEqualTo(RedlockHealth.State.HELD_BACK);
    assertThat(health.details())
        .containsEntry("quorum", 2)
        .containsEntry("reachable", 2)
        .containsEntry("counted", 1);
    assertThat(health.details().get("nodes"))
        .isEqualTo(
            List.of(
                Map.of(
                    "node",
                    "10.0.0.0:6379",
                    "reachable",
                    true,
                    "counted",
                    true,
                    "status",
                    "COUNTED"),
                Map.of(
                    "node", "10.0.0.1:6379",
                    "reachable", false,
                    "counted", false,
                    "status", "UNREACHABLE",
                    "reason", "why"),
                Map.of(
                    "node", "10.0.0.2:6379",
                    "reachable", true,
                    "counted", false,
                    "status", "HELD_BACK",
                    "reason", "why")));
  }
}
