package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.NodeClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.UnaryOperator;

/** A {@link Redlock} over simulated nodes on a fake clock, for the algorithm's unit tests. */
final class SimCluster {
  final FakeTime time;
  final List<SimulatedNode> nodes = new ArrayList<>();
  final Redlock redlock;

  /** A new cluster declared fresh, as users do with {@code redlock init}. */
  SimCluster(int n, UnaryOperator<RedlockConfig.Builder> settings) {
    this(n, true, settings);
  }

  /**
   * @param fresh whether every node carries the fresh marker of its process before the
   *     instance first looks at it, as after {@code redlock init}
   */
  SimCluster(int n, boolean fresh, UnaryOperator<RedlockConfig.Builder> settings) {
    this.time = new FakeTime();
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      uris.add("sim://node" + i);
      nodes.add(new SimulatedNode("sim://node" + i, time));
    }
    RedlockConfig config = settings.apply(RedlockConfig.builder().nodes(uris)).build();
    if (fresh) {
      for (SimulatedNode node : nodes) {
        node.putPersistent(FreshMarker.key(config.keyPrefix()), FreshMarker.value(node.runId()));
      }
    }
    redlock =
        Redlock.over(config, List.<NodeClient>copyOf(nodes), time, new Random(42), Runnable::run);
  }

  SimCluster(int n) {
    this(n, b -> b);
  }

  private SimCluster(List<SimulatedNode> nodes, FakeTime time, Redlock redlock) {
    this.nodes.addAll(nodes);
    this.redlock = redlock;
    this.time = time;
  }

  /** Nodes no instance uses, not declared fresh: {@code redlock} is {@code null}. */
  static SimCluster bare(int n) {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(new SimulatedNode("sim://node" + i, time));
    }
    return new SimCluster(nodes, time, null);
  }

  /** An instance over nodes the test prepared, on their clock. */
  static SimCluster over(
      List<SimulatedNode> nodes, FakeTime time, UnaryOperator<RedlockConfig.Builder> settings) {
    List<String> uris = new ArrayList<>();
    for (SimulatedNode node : nodes) {
      uris.add(node.name());
    }
    RedlockConfig config = settings.apply(RedlockConfig.builder().nodes(uris)).build();
    return new SimCluster(
        nodes,
        time,
        Redlock.over(config, List.<NodeClient>copyOf(nodes), time, new Random(42), Runnable::run));
  }

  SimulatedNode node(int i) {
    return nodes.get(i);
  }

  /** Nodes on which {@code key} holds a value. */
  int holding(String key) {
    int count = 0;
    for (SimulatedNode node : nodes) {
      if (node.valueOf(key) != null) {
        count++;
      }
    }
    return count;
  }

  /** Nodes on which {@code key} holds {@code token}. */
  int holding(String key, String token) {
    int count = 0;
    for (SimulatedNode node : nodes) {
      if (token.equals(node.valueOf(key))) {
        count++;
      }
    }
    return count;
  }

  /** The exception a future completed with; fails the test if it did not fail. */
  static Throwable failure(CompletableFuture<?> future) {
    assertThat(future).isCompletedExceptionally();
    try {
      future.get();
      throw new AssertionError("not failed");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  int totalLockRequests() {
    int total = 0;
    for (SimulatedNode node : nodes) {
      total += node.lockRequests();
    }
    return total;
  }
}
