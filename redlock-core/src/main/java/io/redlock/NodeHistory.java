package io.redlock;

import io.redlock.internal.ClusterIdentity;
import io.redlock.internal.NodeRecord;
import io.redlock.internal.TrustRules;
import io.redlock.spi.NodeInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the clients of a cluster recorded on one node about its data, and what the restart
 * guard decides from it: the library's own judgement, for tools that show a node's state
 * ({@code redlock status}, {@code redlock doctor}) without a judgement of their own. See
 * {@code docs/safety.md}, "Trust from history".
 *
 * <p>Read from a probe's answer ({@link NodeInfo} with its {@link NodeInfo#marker()}); an
 * immutable value; thread-safe.
 *
 * @since 0.1.0
 */
public final class NodeHistory {
  private final NodeInfo info;
  private final NodeRecord record;
  private final NodeRecord judged;

  private NodeHistory(NodeInfo info, NodeRecord record) {
    this.info = info;
    this.record = record;
    // What a client's next probe makes of it, as one that watched nothing before.
    this.judged = record == null ? null : TrustRules.judge(info, record, null, false).record();
  }

  /**
   * The history a probe's answer carries ({@link io.redlock.spi.NodeClient#info(String)} of the
   * marker key).
   */
  public static NodeHistory of(NodeInfo info) {
    return new NodeHistory(info, NodeRecord.parse(info.marker()));
  }

  /** Whether a client of the cluster has recorded the node's current process. */
  public boolean recorded() {
    return record != null && record.run().equals(info.runId());
  }

  /**
   * Whether the node counts for locks as soon as it is probed: its data is known complete in
   * its current process and no client flagged its clock since.
   */
  public boolean countsAtOnce() {
    return judged != null && TrustRules.countsAtOnce(info, judged);
  }

  /** Whether the node's fencing counters are trusted. */
  public boolean countersTrusted() {
    return judged != null && TrustRules.trustsCounters(info, judged);
  }

  /**
   * How long, by the node's clock, since a client of the cluster first saw its current process
   * with its data; empty if no client has recorded it yet (the next probe of a running client
   * will).
   */
  public Optional<Duration> seenFor() {
    if (!recorded()) {
      return Optional.empty();
    }
    long millis = info.serverTimeMicros() / 1_000 - record.sinceMillis();
    return Optional.of(Duration.ofMillis(Math.max(0, millis)));
  }

  /** Whether the node counts for locks, given the guard's window ({@link RedlockConfig#restartGuardWindow()}). */
  public boolean counts(Duration window) {
    return countsAtOnce() || seenFor().map(seen -> seen.compareTo(window) >= 0).orElse(false);
  }

  /**
   * The cluster identity {@code init} wrote into the node's record, as {@code id/size} (a
   * random id, and how many nodes that {@code init} was given); empty when there is none (a
   * cluster declared before identities existed, or data that lost its record). Every client
   * refuses to use a node whose size differs from its own node count, or whose id differs
   * from the one most of its nodes carry.
   */
  public Optional<String> cluster() {
    return record == null || record.identity() == null
        ? Optional.empty()
        : Optional.of(record.identity().format());
  }

  /**
   * Why each node must not be used by a client that lists {@code names} (one per node, in its
   * order), by the rule every client applies on its probes (see {@link #cluster()}): empty for
   * a node that agrees, has no identity, or was not read ({@code null} in {@code histories}).
   *
   * @param histories one per node, in the client's order, {@code null} for a node not read
   * @param names the node names to put in the reasons, in the same order
   * @return one entry per node, in the same order
   */
  public static List<Optional<String>> clusterConflicts(
      List<NodeHistory> histories, List<String> names) {
    if (histories.size() != names.size()) {
      throw new IllegalArgumentException(
          "histories and names: one of each per node, got "
              + histories.size()
              + " and "
              + names.size());
    }
    List<ClusterIdentity> identities = new ArrayList<>();
    for (NodeHistory history : histories) {
      identities.add(history == null || history.record == null ? null : history.record.identity());
    }
    List<Optional<String>> conflicts = new ArrayList<>();
    for (int i = 0; i < identities.size(); i++) {
      conflicts.add(Optional.ofNullable(ClusterIdentity.conflict(i, identities, names)));
    }
    return List.copyOf(conflicts);
  }

  /** The event that shaped the record last, for people. */
  public String reason() {
    if (record == null) {
      return "no client of this cluster has recorded it";
    }
    if (!record.run().equals(info.runId())) {
      return "no client of this cluster has seen its current process yet";
    }
    return TrustRules.reason(judged) + (judged.clockFlagged() ? ", its clock was flagged" : "");
  }

  @Override
  public String toString() {
    return "NodeHistory{run_id="
        + info.runId()
        + ", countsAtOnce="
        + countsAtOnce()
        + ", countersTrusted="
        + countersTrusted()
        + ", seenFor="
        + seenFor().map(io.redlock.internal.Durations::format).orElse("-")
        + ", "
        + reason()
        + "}";
  }
}
