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
  final FakeTime time = new FakeTime();
  final List<SimulatedNode> nodes = new ArrayList<>();
  final Redlock redlock;

  SimCluster(int n, UnaryOperator<RedlockConfig.Builder> settings) {
    this(n, false, settings);
  }

  /**
   * @param fresh whether every node carries the fresh marker of its process before the
   *     instance first looks at it, as after {@code redlock init}
   */
  SimCluster(int n, boolean fresh, UnaryOperator<RedlockConfig.Builder> settings) {
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
