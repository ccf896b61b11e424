package io.redlock;

import io.redlock.internal.Durations;
import io.redlock.internal.Fencing;
import io.redlock.internal.NodeRecord;
import io.redlock.internal.TrustRules;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Redlock#readmit}: brings a node that lost its fencing counters, while a majority did
 * not, back into fencing (docs/fencing.md, "A node that lost its counters").
 *
 * <p>The argument: a token was confirmed on a majority of trusted nodes. With at most {@code
 * quorum - 1} nodes untrusted (the returning one included), every such majority keeps a trusted
 * node, which still holds a counter at least as large. So once every counter of the returning
 * node is raised to the largest value on the trusted nodes, it holds at least every confirmed
 * token, and may be admitted. Its window must have passed first (since a client first saw its
 * process), as for locks. The raise and the admission are one script, bound to the node's
 * process and to the record that was judged.
 */
final class NodeReadmission {
  private static final Logger log = LoggerFactory.getLogger(NodeReadmission.class);

  private NodeReadmission() {}

  /**
   * Whether re-admission is safe with {@code untrusted} nodes out of fencing (the returning one
   * included) among {@code n}: every majority of {@code quorum} keeps a trusted node.
   */
  static boolean enoughTrusted(int n, int quorum, int untrusted) {
    return untrusted <= quorum - 1 && untrusted < n;
  }

  static ReadmitReport over(List<NodeClient> nodes, RedlockConfig config, int target) {
    String key = FreshMarker.key(config.keyPrefix());
    String counters = config.keyPrefix() + Fencing.COUNTER_KEYS;
    long wait = config.connectTimeout().toNanos();
    NodeClient returning = nodes.get(target);
    String name = returning.name();
    List<CompletableFuture<NodeInfo>> infos = new ArrayList<>();
    for (NodeClient node : nodes) {
      infos.add(NodeAnswer.call(() -> node.info(key)));
    }
    NodeAnswer<NodeInfo> own = NodeAnswer.within(infos.get(target), wait);
    if (own.value() == null) {
      return report(name, ReadmitReport.Outcome.UNCHECKED, 0, "could not read it: " + own.error());
    }
    NodeInfo info = own.value();
    NodeRecord record = NodeRecord.parse(info.marker());
    if (record != null && TrustRules.trustsCounters(info, record)) {
      return report(name, ReadmitReport.Outcome.ALREADY_TRUSTED, 0, "its counters are trusted");
    }
    if (info.memory() != null && info.memory().mayEvictKeysWithoutTtl()) {
      return report(
          name,
          ReadmitReport.Outcome.EVICTS_COUNTERS,
          0,
          "maxmemory-policy "
              + info.memory().policy()
              + " may evict counters: set noeviction first");
    }
    if (record == null || !record.run().equals(info.runId())) {
      return report(
          name,
          ReadmitReport.Outcome.TOO_SOON,
          0,
          "no client of this cluster has seen its current process yet: start a client and wait"
              + " one restart guard window");
    }
    NodeAnswer<MaxTtlRegister> register =
        NodeAnswer.within(
            NodeAnswer.call(() -> returning.readMaxTtl(FreshMarker.maxTtlKey(config.keyPrefix()))),
            wait);
    long maxTtlMillis =
        Math.max(
            config.maxTtl().toMillis(),
            register.value() == null ? 0 : register.value().maxTtlMillis());
    long windowMillis =
        maxTtlMillis + config.driftFor(java.time.Duration.ofMillis(maxTtlMillis)).toMillis();
    long seenMillis = info.serverTimeMicros() / 1_000 - record.sinceMillis();
    if (seenMillis < windowMillis) {
      return report(
          name,
          ReadmitReport.Outcome.TOO_SOON,
          0,
          "seen for "
              + Durations.formatNanos(Math.max(0, seenMillis) * 1_000_000L)
              + " of its window "
              + Durations.formatNanos(windowMillis * 1_000_000L)
              + ": try again in "
              + Durations.formatNanos((windowMillis - seenMillis) * 1_000_000L));
    }
    // The trusted nodes, and the largest of their counters.
    int untrusted = 1;
    Map<String, Integer> clusters = new TreeMap<>(); // the others' identities, and how many
    List<CompletableFuture<Map<String, Long>>> reads = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      if (i == target) {
        continue;
      }
      NodeAnswer<NodeInfo> other = NodeAnswer.within(infos.get(i), wait);
      NodeRecord otherRecord =
          other.value() == null ? null : NodeRecord.parse(other.value().marker());
      if (otherRecord != null && otherRecord.identity() != null) {
        clusters.merge(otherRecord.cluster(), 1, Integer::sum);
      }
      if (otherRecord == null || !TrustRules.trustsCounters(other.value(), otherRecord)) {
        untrusted++;
        continue;
      }
      NodeClient node = nodes.get(i);
      reads.add(NodeAnswer.call(() -> node.readCounters(counters)));
    }
    Map<String, Long> highest = new TreeMap<>();
    for (CompletableFuture<Map<String, Long>> read : reads) {
      NodeAnswer<Map<String, Long>> found = NodeAnswer.within(read, wait);
      if (found.value() == null) {
        untrusted++; // a trusted node not read counts as one that might hold the only copy
        continue;
      }
      found.value().forEach((counter, value) -> highest.merge(counter, value, Math::max));
    }
    int quorum = config.quorum();
    if (!enoughTrusted(nodes.size(), quorum, untrusted)) {
      return report(
          name,
          ReadmitReport.Outcome.TOO_FEW_TRUSTED,
          0,
          untrusted
              + " of "
              + nodes.size()
              + " node(s) untrusted or unread (this one included); re-admission needs at most "
              + (quorum - 1));
    }
    NodeRecord admitted =
        new NodeRecord(
            info.runId(),
            record.sinceMillis(),
            record.seq() + 1,
            info.evictedKeys(),
            info.runId(),
            record.prev(),
            record.loaded(),
            NodeRecord.Why.READMITTED,
            record.clockFlagged(),
            // its own identity, or (lost with its data) the one most of the others carry
            record.identity() != null
                ? record.cluster()
                : clusters.entrySet().stream()
                    .max(Map.Entry.comparingByValue())
                    .map(Map.Entry::getKey)
                    .orElse(record.cluster()));
    NodeAnswer<Boolean> done =
        NodeAnswer.within(
            NodeAnswer.call(
                () ->
                    returning.readmit(
                        key, info.marker(), admitted.format(), info.runId(), highest)),
            wait);
    if (!Boolean.TRUE.equals(done.value())) {
      return report(
          name,
          ReadmitReport.Outcome.UNCHECKED,
          0,
          done.value() == null
              ? "could not write: " + done.error()
              : "its process or its record changed meanwhile: try again");
    }
    ReadmitReport report =
        report(
            name,
            ReadmitReport.Outcome.READMITTED,
            highest.size(),
            highest.size() + " counter(s) raised to the trusted nodes' largest");
    log.info("readmit: {}", report);
    return report;
  }

  private static ReadmitReport report(
      String node, ReadmitReport.Outcome outcome, int raised, String detail) {
    return new ReadmitReport(node, outcome, raised, detail);
  }
}
