package io.redlock.internal;

import io.redlock.internal.NodeRecord.Why;
import io.redlock.spi.NodeInfo;
import java.util.Locale;

/**
 * The pure rules of trust in a node's data (docs/safety.md, "Trust from history"): from what a
 * probe read (the node's {@link NodeInfo} and its {@link NodeRecord}) and what this client
 * remembers of the node ({@link Watch}), the record to write back and what it allows.
 *
 * <p>The invariant they keep: a node whose data is trusted complete in a process ({@link
 * NodeRecord#admits}) holds every key it acknowledged since the data was last declared
 * complete, so a node that confirmed a fencing token and is trusted later still holds a counter
 * at least as large, and a node that granted a lock still holds it until its ttl. Trust is
 * therefore given only by an act that establishes it (an {@code init} that found no lock key, a
 * re-admission that raised every counter, or a watching client that saw a new process load the
 * complete data of an admitted one) and is carried only by the data itself. Every event that may
 * have lost data takes it away until such an act: a process nobody saw load the admitted data,
 * a process whose loaded data is older than what a watching client saw of the process before
 * (also after another client, which saw less, admitted it), a record that vanished or went
 * back, keys evicted. What the node says now (its persistence settings, a marker in its data)
 * never gives trust by itself.
 *
 * <p>Stateless and thread-safe.
 */
public final class TrustRules {
  private TrustRules() {}

  /**
   * What this client remembers of a node from its last answered probe.
   *
   * @param runId the process it answered from
   * @param seq the largest {@code seq} of its record this client read or wrote in that process
   * @param trusted whether that process's data was trusted complete then
   * @param durable whether it persisted every write then ({@link #durable})
   * @param recent whether that answer came at most {@link #MAX_WATCH_GAP_NANOS} before this
   *     client lost the process: a client that had not heard from it for longer (paused, cut
   *     off) knows too little of its last data to vouch for a copy of it
   */
  public record Watch(String runId, long seq, boolean trusted, boolean durable, boolean recent) {}

  /**
   * The longest gap between a watching client's last answer from a process and the moment it
   * lost it for the client to vouch that a new process loaded all of its data: one and a half
   * probe intervals.
   */
  public static final long MAX_WATCH_GAP_NANOS = 1_500_000_000L;

  /**
   * A probe's judgement.
   *
   * @param record the record to write back in place of the one read (compare-and-set)
   * @param event what changed, {@link Why#PROBED} for nothing
   * @param sawRestart whether this client saw the node's process change since its last probe
   */
  public record Judgement(NodeRecord record, Why event, boolean sawRestart) {}

  /**
   * Judges one probe.
   *
   * @param info what the node said of itself
   * @param read the record read with it ({@code null}: none, or none in a known form)
   * @param watch what this client remembers of the node, {@code null} if it never had an answer
   * @param clockFlagged whether this client just flagged the node's clock (it ran fast or
   *     jumped): its window restarts now, for every client
   */
  public static Judgement judge(NodeInfo info, NodeRecord read, Watch watch, boolean clockFlagged) {
    return judge(info, read, watch, null, clockFlagged);
  }

  /**
   * Judges one probe, knowing what this client saw of the process before the current one.
   *
   * @param before what this client last saw of the process it watched go before the current
   *     one ({@code null}: none); used while the node runs the current process, so that its
   *     proof that the current process loaded older data is written again until it lands
   * @see #judge(NodeInfo, NodeRecord, Watch, boolean)
   */
  public static Judgement judge(
      NodeInfo info, NodeRecord read, Watch watch, Watch before, boolean clockFlagged) {
    String run = info.runId();
    long now = info.serverTimeMicros() / 1_000L;
    long evicted = info.evictedKeys();
    boolean sawRestart = watch != null && !watch.runId().equals(run);
    // What this client saw of the process before the current one: the one it watched until
    // now, or the one it watched go earlier.
    Watch prior = sawRestart ? watch : before;
    long seqFloor = watch != null ? watch.seq() : 0;
    NodeRecord next;
    Why event;
    if (read == null) {
      // Nothing (readable) there. Under the process this client watched, data was lost in
      // place (FLUSHALL, a full resync, a SWAPDB); otherwise no client saw this data before.
      event =
          sawRestart
              ? Why.RESTARTED
              : watch != null && watch.seq() > 0 ? Why.LOST_IN_PLACE : Why.FIRST_SEEN;
      next = fresh(run, now, seqFloor + 1, evicted, NodeRecord.NONE, -1, event);
    } else if (!read.run().equals(run)) {
      // A process no client recorded yet, on data that names another (an earlier process of
      // this node, a restored copy, another node's data). Complete only if this client watched
      // the process the data names, trusted and durable to its last answer, and the data holds
      // all it saw of it.
      boolean continued =
          watch != null
              && watch.runId().equals(read.run())
              && continuous(watch, read.admits(read.run()), read.seq(), info);
      boolean older = prior != null && prior.runId().equals(read.run()) && read.seq() < prior.seq();
      event = continued ? Why.CONTINUED : older ? Why.LOADED_OLDER : Why.RESTARTED;
      next =
          new NodeRecord(
              run,
              now,
              Math.max(read.seq(), seqFloor) + 1,
              evicted,
              continued ? run : NodeRecord.NONE,
              read.run(),
              read.seq(),
              event,
              false);
    } else if (watch != null && !sawRestart && read.seq() < watch.seq()) {
      // The same process, with older data than this client saw: replaced in place.
      event = Why.LOST_IN_PLACE;
      next = fresh(run, now, seqFloor + 1, evicted, read.prev(), read.loaded(), event);
    } else if (evicted >= 0 && read.evicted() >= 0 && evicted > read.evicted()) {
      event = Why.EVICTED;
      next =
          fresh(
              run,
              now,
              Math.max(read.seq(), seqFloor) + 1,
              evicted,
              read.prev(),
              read.loaded(),
              event);
    } else if (prior != null
        && read.prev().equals(prior.runId())
        && read.loaded() < prior.seq()
        && (read.why() != Why.LOADED_OLDER || read.admits(run))
        && read.why() != Why.INIT
        && read.why() != Why.READMITTED) {
      // The current process loaded data of the one before older than this client saw of it:
      // writes were lost. Recorded whoever recorded the process first, and over a continuity
      // another client, which saw less, judged (trust taken back). Trust given by an act, init
      // or re-admission, is not judged from a watch.
      event = Why.LOADED_OLDER;
      next = carried(read, seqFloor, evicted, NodeRecord.NONE, event);
    } else if (!read.admits(run)
        && read.why() == Why.RESTARTED
        && watch != null
        && sawRestart
        && watch.runId().equals(read.prev())
        && continuous(watch, true, read.loaded(), info)) {
      // Another client recorded the new process first, and could not judge it; this one
      // watched the process before and can.
      event = Why.CONTINUED;
      next = carried(read, seqFloor, evicted, run, event);
    } else {
      event = Why.PROBED;
      next = carried(read, seqFloor, evicted, read.admits(run) ? run : NodeRecord.NONE, read.why());
    }
    if (clockFlagged) {
      next =
          new NodeRecord(
              next.run(),
              now,
              next.seq(),
              next.evicted(),
              next.admitted(),
              next.prev(),
              next.loaded(),
              next.why(),
              true);
    }
    // The cluster identity belongs to the data: every record of it keeps the one it had.
    next = next.withCluster(read == null ? NodeRecord.NONE : read.cluster());
    return new Judgement(next, event, sawRestart);
  }

  /**
   * Whether a new process holds the complete data of the watched one: this client heard from
   * the old process shortly before it lost it, which was trusted and persisted every write at
   * that last answer, its data was admitted when the new
   * process loaded it, the loaded data is no older than what this client saw last, and the new
   * process persists every write too.
   */
  private static boolean continuous(
      Watch watch, boolean loadedAdmitted, long loadedSeq, NodeInfo info) {
    return watch.recent()
        && watch.trusted()
        && watch.durable()
        && loadedAdmitted
        && loadedSeq >= watch.seq()
        && durable(info);
  }

  /**
   * The record {@code read} of the current process carried on: its window ({@code since}), its
   * origin ({@code prev}, {@code loaded}) and its clock flag kept, {@code seq} raised above what
   * it and this client saw, with {@code admitted} and {@code why} as judged.
   */
  private static NodeRecord carried(
      NodeRecord read, long seqFloor, long evicted, String admitted, Why why) {
    return new NodeRecord(
        read.run(),
        read.sinceMillis(),
        Math.max(read.seq(), seqFloor) + 1,
        evicted,
        admitted,
        read.prev(),
        read.loaded(),
        why,
        read.clockFlagged());
  }

  private static NodeRecord fresh(
      String run, long now, long seq, long evicted, String prev, long loaded, Why why) {
    return new NodeRecord(run, now, seq, evicted, NodeRecord.NONE, prev, loaded, why, false);
  }

  /**
   * Whether the node persists every write before it answers: AOF on, {@code appendfsync
   * always}, its last write succeeded. Unknown (an ACL without {@code CONFIG GET}) is no.
   */
  static boolean durable(NodeInfo info) {
    NodeInfo.Persistence p = info.persistence();
    return p != null
        && p.aofEnabled()
        && p.lastWriteOk()
        && p.appendfsync().toLowerCase(Locale.ROOT).equals("always");
  }

  /**
   * Whether the node counts for locks as soon as it is probed: its data is trusted complete in
   * this process and no client flagged its clock since.
   */
  public static boolean countsAtOnce(NodeInfo info, NodeRecord record) {
    return record.admits(info.runId()) && !record.clockFlagged();
  }

  /**
   * Whether the node's fencing counters can be trusted: its data is trusted complete in this
   * process, its eviction count is known, and it evicts no key without a ttl (no {@code
   * allkeys-*} policy with a memory limit). A clock flag does not matter: counters have no
   * ttl.
   */
  public static boolean trustsCounters(NodeInfo info, NodeRecord record) {
    return record.admits(info.runId())
        && record.evicted() >= 0
        && info.memory() != null
        && !info.memory().mayEvictKeysWithoutTtl();
  }

  /** Why the node's counters are not trusted, for a vote's detail; {@code null} if they are. */
  static String whyCountersUntrusted(NodeInfo info, NodeRecord record) {
    if (!record.admits(info.runId())) {
      return "fencing: its data is not known complete in its current process ("
          + reason(record)
          + "); see docs/fencing.md for re-admission";
    }
    if (record.evicted() < 0) {
      return "fencing: its evicted_keys could not be read (INFO stats)";
    }
    if (info.memory() == null) {
      return "fencing: its memory settings could not be read (INFO memory)";
    }
    if (info.memory().mayEvictKeysWithoutTtl()) {
      return "fencing: it may evict keys without a ttl (maxmemory-policy "
          + info.memory().policy()
          + ")";
    }
    return null;
  }

  /** The record's last event, for people. */
  public static String reason(NodeRecord record) {
    return switch (record.why()) {
      case INIT -> "declared fresh by init";
      case READMITTED -> "re-admitted";
      case PROBED, CONTINUED -> "loaded the complete data of an admitted process";
      case FIRST_SEEN -> "no client of this cluster saw its data before";
      case RESTARTED -> "it restarted, and no watching client saw it load complete data";
      case LOADED_OLDER ->
          "it restarted on data older than a client saw of the process before it (writes were"
              + " lost)";
      case LOST_IN_PLACE -> "its data was replaced or lost in place (record vanished or went back)";
      case EVICTED -> "it evicted keys";
    };
  }
}
