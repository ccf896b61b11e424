package io.redlock.torture;

import java.time.Instant;
import java.util.List;

/**
 * One fault as the nemesis injected it.
 *
 * @param nanos when, on the monotonic clock (comparable with the history's instants)
 * @param at when, on the wall clock, for people
 * @param fault which fault
 * @param phase {@code start} or {@code end} (a kill's restart, a pause's resume), or
 *     {@code at} for an instant fault
 * @param nodes the nodes it hit (empty for a client pause)
 * @param client the client it hit, or an empty string when it hit nodes for every client
 * @param detail extra words, such as the latency added
 */
public record FaultRecord(
    long nanos,
    Instant at,
    Fault fault,
    String phase,
    List<Integer> nodes,
    String client,
    String detail) {

  public FaultRecord {
    nodes = List.copyOf(nodes);
  }

  /** Whom the fault hit, in words. */
  public String target() {
    String who = client.isEmpty() ? "" : client + (nodes.isEmpty() ? "" : " from ");
    String where =
        nodes.isEmpty() ? "" : (nodes.size() == 1 ? "node " + nodes.get(0) : "nodes " + nodes);
    return who + where + (detail.isEmpty() ? "" : " (" + detail + ")");
  }

  @Override
  public String toString() {
    return at + " " + fault + " " + phase + " " + target();
  }
}
