package io.redlock.spring.boot;

import io.redlock.NodeState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The health of a {@code Redlock} judged from its {@link NodeState}s: the decision both Boot
 * lines' indicators report, kept apart from their types.
 *
 * @param state the judgement
 * @param details what the indicator shows: the quorum, how many nodes are reachable and
 *     counted, and each node's state
 */
record RedlockHealth(State state, Map<String, Object> details) {

  /** What the health indicator reports. */
  enum State {
    /** At least a quorum of the nodes answers and counts: locks can be granted. */
    UP,
    /**
     * Fewer than a quorum count, but with the nodes the restart guard holds back after a
     * restart (reachable, {@link NodeState.Status#HELD_BACK}) a quorum answers: no lock can be
     * granted until they have been seen for the guard's window, and then locks come back by
     * themselves. Reported with {@code management.health.redlock.held-back-status}.
     */
    HELD_BACK,
    /** Fewer than a quorum of the nodes answers and counts, even with those held back. */
    DOWN
  }

  /** The health of nodes in {@code states} under {@code quorum}. */
  static RedlockHealth of(List<NodeState> states, int quorum) {
    int reachable = 0;
    int counted = 0;
    int heldBack = 0;
    List<Map<String, Object>> nodes = new ArrayList<>();
    for (NodeState node : states) {
      if (node.reachable()) {
        reachable++;
      }
      if (node.status() == NodeState.Status.COUNTED) {
        counted++;
      } else if (node.status() == NodeState.Status.HELD_BACK) {
        heldBack++;
      }
      Map<String, Object> detail = new LinkedHashMap<>();
      detail.put("node", node.node());
      detail.put("reachable", node.reachable());
      detail.put("counted", node.counted());
      detail.put("status", node.status().name());
      if (!node.reason().isEmpty()) {
        detail.put("reason", node.reason());
      }
      nodes.add(detail);
    }
    State state =
        counted >= quorum ? State.UP : counted + heldBack >= quorum ? State.HELD_BACK : State.DOWN;
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("quorum", quorum);
    details.put("reachable", reachable);
    details.put("counted", counted);
    details.put("locks", locks(state));
    details.put("nodes", nodes);
    return new RedlockHealth(state, details);
  }

  private static String locks(State state) {
    return switch (state) {
      case UP -> "available";
      case HELD_BACK ->
          "held back: the restart guard holds back nodes that restarted or lost data, and no"
              + " quorum counts until they have been seen for its window (each node's reason"
              + " says when)";
      case DOWN -> "unavailable: fewer than a quorum of the nodes answer and count";
    };
  }
}
