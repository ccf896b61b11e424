package io.redlock.fake;

import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.net.ConnectException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Another client's connection to a {@link SimulatedNode}: the same node and keys, with a close
 * of its own, so that a second {@link io.redlock.Redlock} over the same nodes can be closed
 * while the first keeps running. Thread-safe.
 */
public final class SecondClient implements NodeClient {
  private final SimulatedNode node;
  private volatile boolean closed;
  private volatile boolean loseNextRecordWrite;

  public SecondClient(SimulatedNode node) {
    this.node = node;
  }

  private <T> CompletionStage<T> call(Supplier<CompletionStage<T>> request) {
    return closed
        ? CompletableFuture.failedFuture(new ConnectException(node.name() + ": closed"))
        : request.get();
  }

  @Override
  public String name() {
    return node.name();
  }

  @Override
  public CompletionStage<Void> connected() {
    return call(node::connected);
  }

  @Override
  public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
    return call(() -> node.lock(keys, token, ttlMillis));
  }

  @Override
  public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
    return call(() -> node.extend(keys, token, ttlMillis));
  }

  @Override
  public CompletionStage<Boolean> unlock(List<String> keys, String token) {
    return call(() -> node.unlock(keys, token));
  }

  @Override
  public CompletionStage<NodeInfo> info() {
    return call(node::info);
  }

  @Override
  public CompletionStage<NodeInfo> info(String markerKey) {
    return call(() -> node.info(markerKey));
  }

  @Override
  public CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    if (loseNextRecordWrite) {
      // As if another client's write landed between this client's read and its write.
      loseNextRecordWrite = false;
      String held = node.valueOf(key);
      return call(() -> CompletableFuture.completedFuture(held == null ? "" : held));
    }
    return call(() -> node.updateRecord(key, expected, value, runId));
  }

  /** The next write of the node's record loses its compare-and-set: nothing is written. */
  public void loseNextRecordWrite() {
    loseNextRecordWrite = true;
  }

  @Override
  public CompletionStage<MaxTtlRegister> raiseMaxTtl(
      String key, long maxTtlMillis, long holdMillis) {
    return call(() -> node.raiseMaxTtl(key, maxTtlMillis, holdMillis));
  }

  @Override
  public void onDisconnect(Runnable listener) {
    node.onDisconnect(
        () -> {
          if (!closed) {
            listener.run();
          }
        });
  }

  @Override
  public void close() {
    closed = true;
  }
}
