package io.redlock.randomized;

import io.redlock.fake.FakeTime;
import io.redlock.fake.Keyspace;
import io.redlock.fake.KeyspaceContract;
import io.redlock.spi.NodeClient;
import java.time.Duration;

/** The node contract, run against the simulation's node over a connection (clock 0.5% fast). */
class RandomizedNodeContractTest extends KeyspaceContract {
  private final FakeTime truth = new FakeTime();
  private final SimNodeStore node =
      new SimNodeStore("sim", truth, 1.005, 1_700_000_000_000_000_000L);
  private final SimConnection connection =
      new SimConnection(node, truth, new ClientProcess(), Network.inline());

  @Override
  protected NodeClient client() {
    return connection;
  }

  @Override
  protected Keyspace keyspace() {
    return node.keys;
  }

  @Override
  protected void passTime(Duration duration) {
    // the contract speaks of the node's clock: convert to true time
    truth.advance(Duration.ofNanos((long) Math.ceil(duration.toNanos() / 1.005)));
  }
}
