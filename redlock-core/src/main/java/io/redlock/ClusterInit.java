package io.redlock;

import io.redlock.internal.ClusterIdentity;
import io.redlock.internal.Durations;
import io.redlock.internal.NodeRecord;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Redlock#init}: looks at every node for keys that may be locks and for live entries of
 * the max-ttl register (running clients), then writes the {@link FreshMarker fresh marker} to
 * each, or nothing anywhere, and reads back which process each marker names.
 */
final class ClusterInit {
  private static final Logger log = LoggerFactory.getLogger(Redlock.class);

  private ClusterInit() {}

  /** {@link Redlock#init} over node clients the caller owns. */
  static InitReport over(List<NodeClient> nodes, RedlockConfig config, boolean force) {
    String key = FreshMarker.key(config.keyPrefix());
    String prefix = config.keyPrefix();
    long waitNanos = config.connectTimeout().toNanos();
    String registerKey = FreshMarker.maxTtlKey(prefix);
    List<CompletableFuture<NodeInfo>> infos = new ArrayList<>();
    List<CompletableFuture<String>> found = new ArrayList<>();
    List<CompletableFuture<MaxTtlRegister>> registers = new ArrayList<>();
    for (NodeClient node : nodes) {
      infos.add(NodeAnswer.call(() -> node.info()));
      found.add(
          force
              ? CompletableFuture.completedFuture("")
              : NodeAnswer.call(() -> node.findLockKeys(key, prefix)));
      registers.add(
          force
              ? CompletableFuture.completedFuture(null)
              : NodeAnswer.call(() -> node.readMaxTtl(registerKey)));
    }
    List<InitReport.NodeResult> looked = new ArrayList<>();
    boolean clean = true;
    for (int i = 0; i < nodes.size(); i++) {
      String name = nodes.get(i).name();
      NodeAnswer<NodeInfo> info = NodeAnswer.within(infos.get(i), waitNanos);
      NodeAnswer<String> keys = NodeAnswer.within(found.get(i), waitNanos);
      NodeAnswer<MaxTtlRegister> register = NodeAnswer.within(registers.get(i), waitNanos);
      String runId = info.value() == null ? null : info.value().runId();
      if (info.value() == null) {
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                null,
                InitReport.Outcome.UNCHECKED,
                "could not read its run_id: " + info.error()));
        clean = false;
      } else if (keys.value() == null) {
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                runId,
                InitReport.Outcome.UNCHECKED,
                "could not rule out lock keys: " + keys.error()));
        clean = false;
      } else if (!keys.value().isEmpty()) {
        looked.add(
            new InitReport.NodeResult(i, name, runId, InitReport.Outcome.HOLDS_KEYS, keys.value()));
        clean = false;
      } else if (register.error() != null) {
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                runId,
                InitReport.Outcome.UNCHECKED,
                "could not read the max-ttl register: " + register.error()));
        clean = false;
      } else if (register.value() != null) {
        // Live entries: clients raised them within their hold, so they are running, or stopped
        // too recently for their leases to have ended. After a majority restart their lock
        // keys may be gone from every node, which no look for keys can see.
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                runId,
                InitReport.Outcome.CLIENTS_RUNNING,
                "its max-ttl register holds a live entry (maxTtl "
                    + register.value().maxTtlMillis()
                    + " ms, lapses in "
                    + (register.value().remainingMillis() < 0
                        ? "never"
                        : Durations.formatNanos(register.value().remainingMillis() * 1_000_000L))
                    + "): clients are running, or stopped too recently"));
        clean = false;
      } else {
        looked.add(new InitReport.NodeResult(i, name, runId, InitReport.Outcome.NOT_WRITTEN, ""));
      }
    }
    if (!clean && !force) {
      log.warn("init: nothing written; {}", looked);
      return new InitReport(looked);
    }
    ClusterIdentity identity = ClusterIdentity.create(nodes.size());
    List<CompletableFuture<String>> writes = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      InitReport.NodeResult result = looked.get(i);
      NodeClient node = nodes.get(i);
      writes.add(
          result.runId() == null
              ? null
              : NodeAnswer.call(
                  () -> node.writeMarker(key, FreshMarker.VALUE_PREFIX, prefix, force)));
    }
    List<InitReport.NodeResult> done = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      InitReport.NodeResult result = looked.get(i);
      if (writes.get(i) == null) {
        done.add(result);
        continue;
      }
      NodeAnswer<String> written = NodeAnswer.within(writes.get(i), waitNanos);
      NodeClient target = nodes.get(i);
      InitReport.Outcome what;
      String detail;
      String bound = result.runId();
      if (written.value() == null) {
        what = InitReport.Outcome.UNCHECKED;
        detail = "could not write the marker: " + written.error();
      } else if (!written.value().isEmpty()) {
        what = InitReport.Outcome.HOLDS_KEYS;
        detail = written.value();
      } else {
        // The script bound the marker to the process it ran in: read back which one, and
        // whether that process still answers.
        NodeAnswer<NodeInfo> after =
            NodeAnswer.within(NodeAnswer.call(() -> target.info(key)), waitNanos);
        NodeRecord record = after.value() == null ? null : NodeRecord.parse(after.value().marker());
        if (record != null && record.admits(after.value().runId())) {
          what = InitReport.Outcome.MARKED;
          bound = after.value().runId();
          detail = identify(target, key, after.value(), record, identity, waitNanos);
        } else {
          what = InitReport.Outcome.UNCHECKED;
          detail =
              after.value() == null
                  ? "written, but could not be read back: " + after.error()
                  : "written, but the node restarted since (run_id " + after.value().runId() + ")";
        }
      }
      done.add(new InitReport.NodeResult(i, result.node(), bound, what, detail));
    }
    log.info("init{}: {} (cluster {})", force ? " (forced)" : "", done, identity.format());
    return new InitReport(done);
  }

  /**
   * Writes the cluster's identity into the record of a node just marked (compare-and-set on
   * the marker as read back, bound to its process); answers an empty detail when written,
   * else what went wrong: the node is marked, but clients cannot check their node list on it.
   */
  private static String identify(
      NodeClient node,
      String key,
      NodeInfo info,
      NodeRecord record,
      ClusterIdentity identity,
      long waitNanos) {
    String text = record.withCluster(identity.format()).format();
    NodeAnswer<String> written =
        NodeAnswer.within(
            NodeAnswer.call(() -> node.updateRecord(key, info.marker(), text, info.runId())),
            waitNanos);
    if (written.error() != null) {
      return "marked, but its cluster identity was not written: " + written.error();
    }
    return written.value() == null
        ? ""
        : "marked, but its record changed before its cluster identity was written";
  }
}
