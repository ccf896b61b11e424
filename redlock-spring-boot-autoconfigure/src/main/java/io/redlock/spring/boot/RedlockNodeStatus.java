package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which nodes of a {@link Redlock} count toward its quorum now, as its restart guard tells by
 * {@link RedlockEvent.NodeHeldBack} and {@link RedlockEvent.NodeCounted} events. The health
 * indicators read it; register it as a listener of the {@code Redlock} it watches (the
 * auto-configuration does).
 *
 * <p>A node is counted until an event holds it back. Node names are as the events give them,
 * without passwords.
 *
 * @since 0.1.0
 */
public final class RedlockNodeStatus implements RedlockListener {

  private final Map<Integer, HeldBack> heldBack = new ConcurrentHashMap<>();

  /** A node held back from the quorum, and why. */
  record HeldBack(String node, String reason) {}

  @Override
  public void nodeHeldBack(RedlockEvent.NodeHeldBack event) {
    heldBack.put(event.index(), new HeldBack(event.node(), event.reason()));
  }

  @Override
  public void nodeCounted(RedlockEvent.NodeCounted event) {
    heldBack.remove(event.index());
  }

  /** How many of {@code redlock}'s nodes count toward its quorum now. */
  public int counted(Redlock redlock) {
    return redlock.nodes().size() - heldBack.size();
  }

  /** The nodes held back now, by index: each one's name and the reason. */
  public Map<Integer, String> heldBack() {
    Map<Integer, String> out = new TreeMap<>();
    heldBack.forEach((i, h) -> out.put(i, h.node() + ": " + h.reason()));
    return out;
  }

  /**
   * The health details of {@code redlock}: node count, quorum, counted nodes and held-back
   * nodes, and whether the counted nodes still reach the quorum.
   */
  Details details(Redlock redlock) {
    int counted = counted(redlock);
    return new Details(
        counted >= redlock.quorum(),
        Map.of(
            "nodes", redlock.nodes().size(),
            "quorum", redlock.quorum(),
            "counted", counted,
            "heldBack", heldBack()));
  }

  record Details(boolean up, Map<String, Object> map) {}
}
