package io.redlock;

import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Redlock#init}: looks at every node for keys that may be locks, then writes the
 * {@link FreshMarker fresh marker} to each, or nothing anywhere.
 */
final class ClusterInit {
  private static final Logger log = LoggerFactory.getLogger(Redlock.class);

  private ClusterInit() {}

  /** {@link Redlock#init} over node clients the caller owns. */
  static InitReport over(List<NodeClient> nodes, RedlockConfig config, boolean force) {
    String key = FreshMarker.key(config.keyPrefix());
    String prefix = config.keyPrefix();
    long waitNanos = config.connectTimeout().toNanos();
    List<CompletableFuture<NodeInfo>> infos = new ArrayList<>();
    List<CompletableFuture<String>> found = new ArrayList<>();
    for (NodeClient node : nodes) {
      infos.add(safely(() -> node.info()));
      found.add(
          force
              ? CompletableFuture.completedFuture("")
              : safely(() -> node.findLockKeys(key, prefix)));
    }
    List<InitReport.NodeResult> looked = new ArrayList<>();
    boolean clean = true;
    for (int i = 0; i < nodes.size(); i++) {
      String name = nodes.get(i).name();
      Outcome<NodeInfo> info = outcome(infos.get(i), waitNanos);
      Outcome<String> keys = outcome(found.get(i), waitNanos);
      String runId = info.value == null ? null : info.value.runId();
      if (info.value == null) {
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                null,
                InitReport.Outcome.UNCHECKED,
                "could not read its run_id: " + info.error));
        clean = false;
      } else if (keys.value == null) {
        looked.add(
            new InitReport.NodeResult(
                i,
                name,
                runId,
                InitReport.Outcome.UNCHECKED,
                "could not rule out lock keys: " + keys.error));
        clean = false;
      } else if (!keys.value.isEmpty()) {
        looked.add(
            new InitReport.NodeResult(i, name, runId, InitReport.Outcome.HOLDS_KEYS, keys.value));
        clean = false;
      } else {
        looked.add(new InitReport.NodeResult(i, name, runId, InitReport.Outcome.NOT_WRITTEN, ""));
      }
    }
    if (!clean && !force) {
      log.warn("init: nothing written; {}", looked);
      return new InitReport(looked);
    }
    List<CompletableFuture<String>> writes = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      InitReport.NodeResult result = looked.get(i);
      NodeClient node = nodes.get(i);
      writes.add(
          result.runId() == null
              ? null
              : safely(
                  () -> node.writeMarker(key, FreshMarker.value(result.runId()), prefix, force)));
    }
    List<InitReport.NodeResult> done = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      InitReport.NodeResult result = looked.get(i);
      if (writes.get(i) == null) {
        done.add(result);
        continue;
      }
      Outcome<String> written = outcome(writes.get(i), waitNanos);
      InitReport.Outcome what =
          written.value == null
              ? InitReport.Outcome.UNCHECKED
              : written.value.isEmpty() ? InitReport.Outcome.MARKED : InitReport.Outcome.HOLDS_KEYS;
      String detail =
          written.value == null ? "could not write the marker: " + written.error : written.value;
      done.add(new InitReport.NodeResult(i, result.node(), result.runId(), what, detail));
    }
    log.info("init{}: {}", force ? " (forced)" : "", done);
    return new InitReport(done);
  }

  private record Outcome<T>(T value, String error) {}

  private static <T> CompletableFuture<T> safely(Supplier<CompletionStage<T>> call) {
    try {
      return call.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static <T> Outcome<T> outcome(CompletableFuture<T> future, long waitNanos) {
    try {
      return new Outcome<>(future.get(waitNanos, TimeUnit.NANOSECONDS), null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome<>(null, "interrupted");
    } catch (TimeoutException e) {
      return new Outcome<>(null, "no answer within the connect timeout");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      String message =
          cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
      return new Outcome<>(null, message.replaceAll("\\s+", " "));
    }
  }
}
