package io.redlock.internal;

import io.redlock.FreshMarker;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the clients of a cluster know of one node's data, kept on the node itself at the
 * marker key ({@link FreshMarker#key}): in its data, so that it survives restarts, copies,
 * restores and replication with the data it speaks of, and every later client reads it.
 *
 * <p>Text form: {@code redlock-node/2 run=R since=MS seq=N evicted=E admitted=A prev=P
 * loaded=L why=W clock=C cluster=K}, where
 * <ul>
 *   <li>{@code run}: the {@code run_id} of the process a client of the cluster first saw with
 *       this data, at node time {@code since} (ms): the restart guard's window runs from then,
 *       never from the uptime the node reports;
 *   <li>{@code seq}: raised by every probe of every client; a copy of older data holds a
 *       smaller one;
 *   <li>{@code evicted}: the node's {@code evicted_keys} at the last probe of process {@code
 *       run} (-1 before the first);
 *   <li>{@code admitted}: the process whose data is known complete ({@code -} for none):
 *       declared fresh by {@code init}, re-admitted, or seen by a watching client to have
 *       loaded the complete data of an admitted process; nothing else sets it, and any event
 *       that may have lost data clears it;
 *   <li>{@code prev} and {@code loaded}: for a process first seen with data that named
 *       another process, that process and the {@code seq} the data held then;
 *   <li>{@code why}: the event that wrote the record last ({@link Why});
 *   <li>{@code clock}: {@code ok}, or {@code flagged} once a client saw the node's clock run
 *       fast or jump in process {@code run} (its window then restarted);
 *   <li>{@code cluster}: the cluster identity {@code init} (or a re-admission) gave the node,
 *       {@code id/size} ({@link ClusterIdentity}), or {@code -}; kept by every later record of
 *       the same data. Absent in records of earlier versions (read as {@code -}).
 * </ul>
 *
 * <p>The marker {@code init} wrote before this format ({@code redlock-fresh/1 run_id=R}) reads
 * as a record of process {@code R}, admitted, with no history.
 *
 * <p>An immutable value; thread-safe.
 */
public record NodeRecord(
    String run,
    long sinceMillis,
    long seq,
    long evicted,
    String admitted,
    String prev,
    long loaded,
    Why why,
    boolean clockFlagged,
    String cluster) {

  /** A record with no cluster identity ({@code cluster=-}). */
  public NodeRecord(
      String run,
      long sinceMillis,
      long seq,
      long evicted,
      String admitted,
      String prev,
      long loaded,
      Why why,
      boolean clockFlagged) {
    this(run, sinceMillis, seq, evicted, admitted, prev, loaded, why, clockFlagged, NONE);
  }

  /** How every record's text begins: {@value}. */
  public static final String PREFIX = "redlock-node/2 ";

  /** Stands for "none" in a field that names a process. */
  static final String NONE = "-";

  /** The event that wrote a record. */
  public enum Why {
    /** {@code init} declared the process fresh (or the marker of an earlier version). */
    INIT,
    /** An operator re-admitted the node ({@code redlock init --readmit}). */
    READMITTED,
    /** Nothing new: a probe raised {@code seq}. */
    PROBED,
    /** No client had seen this data before (no record, and none watched it go). */
    FIRST_SEEN,
    /** A new process, which did not show it loaded the complete data of an admitted one. */
    RESTARTED,
    /** A new process that a watching client saw load the complete data of an admitted one. */
    CONTINUED,
    /**
     * A new process whose data is older than what a client that watched the one before saw of
     * it: writes were lost. Written by that client at each of its probes until the record says
     * so; no watch admits the process again, only {@code init} or a re-admission does.
     */
    LOADED_OLDER,
    /** Data lost under the same process: the record vanished or went back. */
    LOST_IN_PLACE,
    /** The node evicted keys ({@code evicted_keys} grew). */
    EVICTED;

    String word() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static Why of(String word) {
      return valueOf(word.toUpperCase(Locale.ROOT).replace('-', '_'));
    }
  }

  /** Whether the data of the process {@code runId} is known complete. */
  public boolean admits(String runId) {
    return run.equals(runId) && admitted.equals(runId);
  }

  /** The same record with {@code seq} raised by one. */
  NodeRecord probed(long evictedNow) {
    return new NodeRecord(
        run, sinceMillis, seq + 1, evictedNow, admitted, prev, loaded, why, clockFlagged, cluster);
  }

  /** The same record with the cluster identity {@code cluster} ({@code -} for none). */
  public NodeRecord withCluster(String cluster) {
    return new NodeRecord(
        run, sinceMillis, seq, evicted, admitted, prev, loaded, why, clockFlagged, cluster);
  }

  /** The cluster identity this record carries, or {@code null} for none. */
  public ClusterIdentity identity() {
    return ClusterIdentity.parse(cluster);
  }

  public String format() {
    return PREFIX
        + "run="
        + run
        + " since="
        + sinceMillis
        + " seq="
        + seq
        + " evicted="
        + evicted
        + " admitted="
        + admitted
        + " prev="
        + prev
        + " loaded="
        + loaded
        + " why="
        + why.word()
        + " clock="
        + (clockFlagged ? "flagged" : "ok")
        + " cluster="
        + cluster;
  }

  @Override
  public String toString() {
    return format();
  }

  /**
   * Reads a record from the marker key's value: {@code null} for none ({@code text} null or
   * empty), and also {@code null} for text in no known form, which the guard treats as no
   * record (it trusts nothing it cannot read, and writes a record of its own over it).
   */
  public static NodeRecord parse(String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    if (FreshMarker.isMarker(text)) {
      String runId = text.substring(FreshMarker.VALUE_PREFIX.length());
      return new NodeRecord(runId, 0, 0, -1, runId, NONE, -1, Why.INIT, false, NONE);
    }
    if (!text.startsWith(PREFIX)) {
      return null;
    }
    Map<String, String> fields = new HashMap<>();
    for (String part : text.substring(PREFIX.length()).split(" ")) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        return null;
      }
      fields.put(part.substring(0, eq), part.substring(eq + 1));
    }
    try {
      String run = fields.get("run");
      String admitted = fields.get("admitted");
      String prev = fields.get("prev");
      String clock = fields.get("clock");
      if (run == null || run.isEmpty() || admitted == null || prev == null || clock == null) {
        return null;
      }
      return new NodeRecord(
          run,
          Long.parseLong(fields.get("since")),
          Long.parseLong(fields.get("seq")),
          Long.parseLong(fields.get("evicted")),
          admitted,
          prev,
          Long.parseLong(fields.get("loaded")),
          Why.of(fields.get("why")),
          clock.equals("flagged"),
          ClusterIdentity.parse(fields.get("cluster")) == null ? NONE : fields.get("cluster"));
    } catch (RuntimeException e) { // a number or a word out of form, or a field missing
      return null;
    }
  }
}
