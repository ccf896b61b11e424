package io.redlock.bench.jmh;

import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.NodeTransport;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Nodes that answer every request at once, on the caller's thread, with "granted": the
 * algorithm's own cost with the network and Redis taken out. Not a lock: nothing is stored.
 */
final class InMemoryNodes implements NodeTransport {
  private static final CompletableFuture<Boolean> GRANTED = CompletableFuture.completedFuture(true);
  private final AtomicInteger opened = new AtomicInteger();

  /** Node URIs {@code mem://node-i:1} for {@code count} nodes. */
  static List<String> uris(int count) {
    String[] uris = new String[count];
    for (int i = 0; i < count; i++) {
      uris[i] = "mem://node-" + i + ":1";
    }
    return List.of(uris);
  }

  @Override
  public boolean supports(URI uri) {
    return "mem".equals(uri.getScheme());
  }

  @Override
  public NodeClient open(NodeSettings node) {
    return new Node(node.name(), "run-" + opened.incrementAndGet());
  }

  @Override
  public void close() {}

  /** One immediate node. */
  static final class Node implements NodeClient {
    private final String name;
    private final String runId;

    Node(String name, String runId) {
      this.name = name;
      this.runId = runId;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CompletionStage<Void> connected() {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
      return GRANTED;
    }

    @Override
    public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
      return GRANTED;
    }

    @Override
    public CompletionStage<Boolean> unlock(List<String> keys, String token) {
      return GRANTED;
    }

    @Override
    public CompletionStage<NodeInfo> info() {
      return CompletableFuture.completedFuture(
          new NodeInfo(runId, "master", 86_400, System.currentTimeMillis() * 1000));
    }

    @Override
    public void close() {}
  }
}
