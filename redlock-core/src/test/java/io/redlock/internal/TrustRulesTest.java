package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.FreshMarker;
import io.redlock.internal.NodeRecord.Why;
import io.redlock.internal.TrustRules.Judgement;
import io.redlock.internal.TrustRules.Watch;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeInfo.Memory;
import io.redlock.spi.NodeInfo.Persistence;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Trust from history, case by case and then over every combination of what a probe can read:
 * the record a node holds, what the node says now, and what this client watched.
 */
class TrustRulesTest {
  private static final Persistence ALWAYS = new Persistence(true, "always", false, true);
  private static final Persistence EVERYSEC = new Persistence(true, "everysec", false, true);
  private static final Persistence OFF = new Persistence(false, "always", false, true);
  private static final Memory NOEVICTION = new Memory(0, "noeviction");
  private static final long NOW_MS = 1_000_000;

  private static NodeInfo node(String run, Persistence persistence, long evicted) {
    return new NodeInfo(
        run, "master", 5, NOW_MS * 1_000, null, persistence, NOEVICTION, null, evicted);
  }

  private static NodeRecord admitted(String run, long seq) {
    return new NodeRecord(run, 10, seq, 0, run, "-", -1, Why.INIT, false);
  }

  @Test
  void theMarkerOfInitAdmitsTheProcessItNamesAndNoOther() {
    NodeRecord marker = NodeRecord.parse(FreshMarker.value("r1"));
    assertThat(marker.admits("r1")).isTrue();
    assertThat(marker.admits("r2")).isFalse();
    Judgement same = TrustRules.judge(node("r1", null, 0), marker, null, false);
    assertThat(TrustRules.countsAtOnce(node("r1", null, 0), same.record())).isTrue();
    assertThat(TrustRules.trustsCounters(node("r1", null, 0), same.record())).isTrue();
  }

  @Test
  void aNewClientNeverTrustsAProcessTheRecordDoesNotName() {
    // Restored copy, RDB to AOF, AOF switched off, another node's data: the data names an
    // admitted process that is not the current one, and this client watched nothing.
    NodeInfo restarted = node("r2", ALWAYS, 0);
    Judgement j = TrustRules.judge(restarted, admitted("r1", 7), null, false);
    assertThat(j.event()).isEqualTo(Why.RESTARTED);
    assertThat(j.record().admitted()).isEqualTo("-");
    assertThat(j.record().prev()).isEqualTo("r1");
    assertThat(j.record().loaded()).isEqualTo(7);
    assertThat(j.record().sinceMillis()).as("the window runs from now").isEqualTo(NOW_MS);
    assertThat(TrustRules.countsAtOnce(restarted, j.record())).isFalse();
    assertThat(TrustRules.trustsCounters(restarted, j.record())).isFalse();
  }

  @Test
  void aWatchingClientAdmitsANewProcessThatLoadedAllItSaw() {
    Watch watched = new Watch("r1", 7, true, true, true);
    NodeInfo restarted = node("r2", ALWAYS, 0);
    Judgement j = TrustRules.judge(restarted, admitted("r1", 7), watched, false);
    assertThat(j.event()).isEqualTo(Why.CONTINUED);
    assertThat(j.sawRestart()).isTrue();
    assertThat(j.record().admits("r2")).isTrue();
    assertThat(j.record().seq()).isEqualTo(8);
    assertThat(TrustRules.trustsCounters(restarted, j.record())).isTrue();
  }

  @Test
  void aRestoredCopyOlderThanWhatTheClientSawIsNotAdmitted() {
    Watch watched = new Watch("r1", 9, true, true, true);
    Judgement j = TrustRules.judge(node("r2", ALWAYS, 0), admitted("r1", 7), watched, false);
    assertThat(j.event()).isEqualTo(Why.LOADED_OLDER);
    assertThat(j.record().admits("r2")).isFalse();
    assertThat(j.record().seq()).as("never goes back").isEqualTo(10);
    assertThat(j.record().loaded()).isEqualTo(7);
  }

  @Test
  void aProcessKnownToHaveLoadedOlderDataIsNotAdmittedByAWatcherThatSawLess() {
    // The watcher that saw seq 9 judged first; one whose last probe came before the copy (7)
    // would otherwise vouch for the data.
    NodeRecord bySeenMore = new NodeRecord("r2", 500, 10, 0, "-", "r1", 7, Why.LOADED_OLDER, false);
    Judgement j =
        TrustRules.judge(
            node("r2", ALWAYS, 0), bySeenMore, new Watch("r1", 7, true, true, true), false);
    assertThat(j.record().admits("r2")).isFalse();
    assertThat(j.record().why()).isEqualTo(Why.LOADED_OLDER);
  }

  @Test
  void continuityNeedsDurabilityOnBothSidesAndTrustBefore() {
    NodeRecord loaded = admitted("r1", 7);
    assertThat(
            TrustRules.judge(
                    node("r2", EVERYSEC, 0), loaded, new Watch("r1", 7, true, true, true), false)
                .event())
        .isEqualTo(Why.RESTARTED);
    assertThat(
            TrustRules.judge(
                    node("r2", ALWAYS, 0), loaded, new Watch("r1", 7, true, false, true), false)
                .event())
        .as("AOF was off at the last answer of the old process")
        .isEqualTo(Why.RESTARTED);
    assertThat(
            TrustRules.judge(
                    node("r2", ALWAYS, 0), loaded, new Watch("r1", 7, false, true, true), false)
                .event())
        .isEqualTo(Why.RESTARTED);
    assertThat(
            TrustRules.judge(
                    node("r2", null, 0), loaded, new Watch("r1", 7, true, true, true), false)
                .event())
        .as("persistence unknown (no CONFIG GET)")
        .isEqualTo(Why.RESTARTED);
    NodeRecord notAdmitted = new NodeRecord("r1", 10, 7, 0, "-", "-", -1, Why.FIRST_SEEN, false);
    assertThat(
            TrustRules.judge(
                    node("r2", ALWAYS, 0), notAdmitted, new Watch("r1", 7, true, true, true), false)
                .event())
        .isEqualTo(Why.RESTARTED);
    assertThat(
            TrustRules.judge(
                    node("r3", ALWAYS, 0),
                    admitted("rX", 7),
                    new Watch("r1", 7, true, true, true),
                    false)
                .event())
        .as("data of another process than the one watched: another node's, say")
        .isEqualTo(Why.RESTARTED);
  }

  @Test
  void aWatcherThatHadNotHeardFromTheOldProcessForLongCannotVouchForItsData() {
    Judgement j =
        TrustRules.judge(
            node("r2", ALWAYS, 0), admitted("r1", 7), new Watch("r1", 7, true, true, false), false);
    assertThat(j.event()).isEqualTo(Why.RESTARTED);
  }

  @Test
  void aWatcherAdmitsARestartAnotherClientRecordedFirst() {
    NodeRecord byNewClient = new NodeRecord("r2", 500, 8, 0, "-", "r1", 7, Why.RESTARTED, false);
    Judgement j =
        TrustRules.judge(
            node("r2", ALWAYS, 0), byNewClient, new Watch("r1", 7, true, true, true), false);
    assertThat(j.event()).isEqualTo(Why.CONTINUED);
    assertThat(j.record().admits("r2")).isTrue();
    Judgement stale =
        TrustRules.judge(
            node("r2", ALWAYS, 0), byNewClient, new Watch("r1", 9, true, true, true), false);
    assertThat(stale.record().admits("r2")).isFalse();
  }

  @Test
  void aWatcherThatSawNewerDataTakesBackTheTrustAnotherWatcherGave() {
    // A watcher whose last probe came before a copy admitted the process that loaded it; a
    // watcher that probed after the copy saw seq 9 of r1, and the loaded data holds 7.
    NodeRecord byStaleWatcher =
        new NodeRecord("r2", 500, 8, 0, "r2", "r1", 7, Why.CONTINUED, false);
    NodeInfo restarted = node("r2", ALWAYS, 0);
    Judgement j =
        TrustRules.judge(restarted, byStaleWatcher, new Watch("r1", 9, true, true, true), false);
    assertThat(j.event()).isEqualTo(Why.LOADED_OLDER);
    assertThat(j.record().admits("r2")).isFalse();
    assertThat(j.record().sinceMillis())
        .as("the window still runs from first sight")
        .isEqualTo(500);
    assertThat(j.record().seq()).isEqualTo(10);
    assertThat(TrustRules.countsAtOnce(restarted, j.record())).isFalse();
    assertThat(TrustRules.trustsCounters(restarted, j.record())).isFalse();
    assertThat(
            TrustRules.judge(
                    restarted, byStaleWatcher, new Watch("r1", 9, false, false, false), false)
                .event())
        .as("proof of loss needs no trust or durability of its own")
        .isEqualTo(Why.LOADED_OLDER);
    Judgement agrees =
        TrustRules.judge(restarted, byStaleWatcher, new Watch("r1", 7, true, true, true), false);
    assertThat(agrees.record().admits("r2")).as("it saw no more than was loaded").isTrue();
    Judgement sameProcess =
        TrustRules.judge(restarted, byStaleWatcher, new Watch("r2", 8, true, true, true), false);
    assertThat(sameProcess.record().admits("r2")).as("it watched only the new process").isTrue();
    NodeRecord readmitted = new NodeRecord("r2", 500, 8, 0, "r2", "r1", 7, Why.READMITTED, false);
    assertThat(
            TrustRules.judge(restarted, readmitted, new Watch("r1", 9, true, true, true), false)
                .record()
                .admits("r2"))
        .as("re-admission raised every counter: no watch takes it back")
        .isTrue();
  }

  @Test
  void aWatcherThatSawMoreSaysSoOverARestartANewClientRecorded() {
    NodeRecord byNewClient = new NodeRecord("r2", 500, 8, 0, "-", "r1", 7, Why.RESTARTED, false);
    Judgement j =
        TrustRules.judge(
            node("r2", ALWAYS, 0), byNewClient, new Watch("r1", 9, true, true, true), false);
    assertThat(j.event()).isEqualTo(Why.LOADED_OLDER);
    assertThat(j.record().admits("r2")).isFalse();
    assertThat(j.record().sinceMillis()).isEqualTo(500);
  }

  @Test
  void theProofIsWrittenAgainAtLaterProbesUntilItLands() {
    // This client's write of loaded-older lost its compare-and-set to a continuity another
    // client, which saw less, recorded; this client now watches r2, and remembers r1.
    NodeRecord continued = new NodeRecord("r2", 500, 9, 0, "r2", "r1", 7, Why.CONTINUED, false);
    Watch now = new Watch("r2", 8, false, true, true);
    Watch before = new Watch("r1", 9, true, true, true);
    Judgement j = TrustRules.judge(node("r2", ALWAYS, 0), continued, now, before, false);
    assertThat(j.event()).isEqualTo(Why.LOADED_OLDER);
    assertThat(j.record().admits("r2")).isFalse();
    NodeRecord landed = j.record();
    Judgement next = TrustRules.judge(node("r2", ALWAYS, 0), landed, now, before, false);
    assertThat(next.event()).as("once it landed, nothing new").isEqualTo(Why.PROBED);
    assertThat(next.record().why()).isEqualTo(Why.LOADED_OLDER);
    NodeRecord readmitted = new NodeRecord("r2", 500, 12, 0, "r2", "r1", 7, Why.READMITTED, false);
    assertThat(
            TrustRules.judge(node("r2", ALWAYS, 0), readmitted, now, before, false)
                .record()
                .admits("r2"))
        .isTrue();
  }

  @Test
  void evictionAndOlderDataAtOneProbeRestartTheWindowAndThenSayBoth() {
    NodeRecord continued = new NodeRecord("r2", 500, 9, 0, "r2", "r1", 7, Why.CONTINUED, false);
    Watch now = new Watch("r2", 9, true, true, true);
    Watch before = new Watch("r1", 9, true, true, true);
    Judgement evicted = TrustRules.judge(node("r2", ALWAYS, 3), continued, now, before, false);
    assertThat(evicted.event()).isEqualTo(Why.EVICTED);
    assertThat(evicted.record().sinceMillis()).as("the window restarts").isEqualTo(NOW_MS);
    assertThat(evicted.record().admits("r2")).isFalse();
    Judgement older = TrustRules.judge(node("r2", ALWAYS, 3), evicted.record(), now, before, false);
    assertThat(older.event()).isEqualTo(Why.LOADED_OLDER);
    assertThat(older.record().sinceMillis()).isEqualTo(NOW_MS);
  }

  @Test
  void lossInPlaceAndEvictionTakeTrustAwayAndRestartTheWindow() {
    NodeInfo same = node("r1", ALWAYS, 0);
    Judgement vanished = TrustRules.judge(same, null, new Watch("r1", 7, true, true, true), false);
    assertThat(vanished.event()).isEqualTo(Why.LOST_IN_PLACE);
    assertThat(vanished.record().admits("r1")).isFalse();
    assertThat(vanished.record().seq()).isEqualTo(8);
    Judgement wentBack =
        TrustRules.judge(same, admitted("r1", 3), new Watch("r1", 7, true, true, true), false);
    assertThat(wentBack.event()).isEqualTo(Why.LOST_IN_PLACE);
    assertThat(wentBack.record().sinceMillis()).isEqualTo(NOW_MS);
    Judgement evicted = TrustRules.judge(node("r1", ALWAYS, 1), admitted("r1", 7), null, false);
    assertThat(evicted.event()).as("seen by any client, from the record").isEqualTo(Why.EVICTED);
    assertThat(evicted.record().admits("r1")).isFalse();
    assertThat(evicted.record().sinceMillis()).isEqualTo(NOW_MS);
    // and it stays out: the next probe reads the record without admission
    Judgement after = TrustRules.judge(node("r1", ALWAYS, 1), evicted.record(), null, false);
    assertThat(after.event()).isEqualTo(Why.PROBED);
    assertThat(after.record().admits("r1")).isFalse();
  }

  @Test
  void aClockFlagRestartsTheWindowForEveryClientButKeepsCounterTrust() {
    NodeInfo info = node("r1", null, 0);
    Judgement j =
        TrustRules.judge(info, admitted("r1", 7), new Watch("r1", 7, true, false, true), true);
    assertThat(j.record().clockFlagged()).isTrue();
    assertThat(j.record().sinceMillis()).isEqualTo(NOW_MS);
    assertThat(TrustRules.countsAtOnce(info, j.record())).isFalse();
    assertThat(TrustRules.trustsCounters(info, j.record())).isTrue();
    // a new client reads the flag
    Judgement later = TrustRules.judge(info, j.record(), null, false);
    assertThat(TrustRules.countsAtOnce(info, later.record())).isFalse();
  }

  @Test
  void countersNeedAKnownEvictionCountAndNoAllkeysPolicy() {
    NodeRecord record = admitted("r1", 7);
    NodeInfo allkeys =
        new NodeInfo(
            "r1", "master", 5, NOW_MS * 1_000, null, null, new Memory(100, "allkeys-lru"), null, 0);
    assertThat(TrustRules.trustsCounters(allkeys, record)).isFalse();
    NodeInfo volatileLru =
        new NodeInfo(
            "r1",
            "master",
            5,
            NOW_MS * 1_000,
            null,
            null,
            new Memory(100, "volatile-lru"),
            null,
            0);
    assertThat(TrustRules.trustsCounters(volatileLru, record)).isTrue();
    NodeInfo memoryUnknown =
        new NodeInfo("r1", "master", 5, NOW_MS * 1_000, null, null, null, null, 0);
    assertThat(TrustRules.trustsCounters(memoryUnknown, record)).isFalse();
    NodeRecord evictionUnknown = new NodeRecord("r1", 10, 7, -1, "r1", "-", -1, Why.INIT, false);
    assertThat(TrustRules.trustsCounters(node("r1", null, 0), evictionUnknown)).isFalse();
  }

  @Test
  void recordsSurviveTheirTextForm() {
    NodeRecord record = new NodeRecord("abc", 12, 34, 5, "abc", "def", 33, Why.CONTINUED, true);
    assertThat(NodeRecord.parse(record.format())).isEqualTo(record);
    assertThat(NodeRecord.parse(null)).isNull();
    assertThat(NodeRecord.parse("")).isNull();
    assertThat(NodeRecord.parse("something else")).isNull();
    assertThat(NodeRecord.parse(NodeRecord.PREFIX + "run=abc since=x")).isNull();
    NodeRecord identified = record.withCluster("0123456789ab/3");
    assertThat(NodeRecord.parse(identified.format())).isEqualTo(identified);
    assertThat(identified.identity()).isEqualTo(new ClusterIdentity("0123456789ab", 3));
    // a record of the version before identities reads as one without
    String older = record.format().replace(" cluster=-", "");
    assertThat(NodeRecord.parse(older)).isEqualTo(record);
  }

  @Test
  void everyRecordOfTheSameDataKeepsItsClusterIdentity() {
    NodeRecord read =
        new NodeRecord("abc", 12, 34, 0, "abc", "-", -1, Why.INIT, false)
            .withCluster("0123456789ab/3");
    NodeInfo same = node("abc", ALWAYS, 0);
    NodeInfo restarted = node("xyz", ALWAYS, 0);
    assertThat(TrustRules.judge(same, read, null, false).record().cluster())
        .isEqualTo("0123456789ab/3");
    assertThat(TrustRules.judge(restarted, read, null, false).record().cluster())
        .isEqualTo("0123456789ab/3");
    assertThat(TrustRules.judge(same, read, null, true).record().cluster())
        .isEqualTo("0123456789ab/3");
    assertThat(TrustRules.judge(same, null, null, false).record().cluster()).isEqualTo("-");
  }

  /**
   * Every combination: whatever was read, trust in the written record is only ever for the
   * current process, and only (a) if the read record already admitted it and nothing was lost,
   * or (b) by continuity, which needs a watch of the process the data names, trusted and
   * durable, data no older than the watch, and durability now. {@code seq} never goes back
   * below the read record's or the watch's.
   */
  @Test
  void trustIsNeverGivenWithoutEvidence() {
    List<NodeRecord> reads = new ArrayList<>();
    reads.add(null);
    for (String run : new String[] {"r1", "r2", "rX"}) {
      for (String admittedRun : new String[] {"-", "r1", "r2", "rX"}) {
        for (Why why : Why.values()) {
          for (long seq : new long[] {3, 7}) {
            for (long evicted : new long[] {-1, 0}) {
              reads.add(new NodeRecord(run, 10, seq, evicted, admittedRun, "r1", 7, why, false));
            }
          }
        }
      }
    }
    List<Watch> watches = new ArrayList<>();
    watches.add(null);
    for (String run : new String[] {"r1", "r2"}) {
      for (long seq : new long[] {0, 7, 9}) {
        for (boolean trusted : new boolean[] {false, true}) {
          for (boolean durable : new boolean[] {false, true}) {
            watches.add(new Watch(run, seq, trusted, durable, true));
            watches.add(new Watch(run, seq, trusted, durable, false));
          }
        }
      }
    }
    List<Watch> befores = new ArrayList<>();
    befores.add(null);
    befores.add(new Watch("r1", 7, true, true, true));
    befores.add(new Watch("r1", 9, true, true, true));
    int cases = 0;
    for (NodeRecord read : reads) {
      for (Watch watch : watches) {
        for (Watch before : befores) {
          for (Persistence persistence : new Persistence[] {null, ALWAYS, EVERYSEC, OFF}) {
            for (long evicted : new long[] {-1, 0, 2}) {
              for (boolean flag : new boolean[] {false, true}) {
                NodeInfo info = node("r2", persistence, evicted);
                Judgement j = TrustRules.judge(info, read, watch, before, flag);
                cases++;
                NodeRecord w = j.record();
                assertThat(w.run()).isEqualTo("r2");
                if (read != null) {
                  assertThat(w.seq()).isGreaterThan(read.seq());
                }
                if (watch != null) {
                  assertThat(w.seq()).isGreaterThan(watch.seq());
                }
                if (!w.admitted().equals("-")) {
                  assertThat(w.admitted()).isEqualTo("r2");
                }
                if (w.admits("r2")) {
                  boolean kept =
                      read != null
                          && read.admits("r2")
                          && !(evicted >= 0 && read.evicted() >= 0 && evicted > read.evicted())
                          && !(watch != null
                              && watch.runId().equals("r2")
                              && read.seq() < watch.seq())
                          // a watcher of the process before that saw more than was loaded
                          && !(read.why() == Why.CONTINUED
                              && watch != null
                              && !watch.runId().equals("r2")
                              && read.prev().equals(watch.runId())
                              && read.loaded() < watch.seq());
                  boolean continued =
                      watch != null
                          && !watch.runId().equals("r2")
                          && watch.recent()
                          && watch.trusted()
                          && watch.durable()
                          && persistence == ALWAYS
                          && read != null
                          && (read.run().equals(watch.runId())
                              ? read.admits(watch.runId()) && read.seq() >= watch.seq()
                              : read.run().equals("r2")
                                  && read.why() == Why.RESTARTED
                                  && read.prev().equals(watch.runId())
                                  && read.loaded() >= watch.seq());
                  assertThat(kept || continued)
                      .as("admitted without evidence: read=%s watch=%s info=%s", read, watch, info)
                      .isTrue();
                }
                if (flag) {
                  assertThat(TrustRules.countsAtOnce(info, w)).isFalse();
                }
                // What this client saw of the process before the current one, if data older than
                // that was loaded: never admitted by a watch, and said.
                Watch prior = watch != null && !watch.runId().equals("r2") ? watch : before;
                boolean olderThanSeen =
                    prior != null
                        && read != null
                        && (read.run().equals("r2")
                            ? read.prev().equals(prior.runId())
                                && read.loaded() < prior.seq()
                                && read.why() != Why.INIT
                                && read.why() != Why.READMITTED
                            : read.run().equals(prior.runId()) && read.seq() < prior.seq());
                if (olderThanSeen) {
                  assertThat(w.admits("r2"))
                      .as(
                          "admitted over older data: read=%s watch=%s before=%s",
                          read, watch, before)
                      .isFalse();
                  assertThat(w.why())
                      .as("read=%s watch=%s before=%s", read, watch, before)
                      .isIn(Why.LOADED_OLDER, Why.EVICTED, Why.LOST_IN_PLACE);
                }
              }
            }
          }
        }
      }
    }
    assertThat(cases).isGreaterThan(10_000);
  }
}
