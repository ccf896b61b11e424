package io.redlock.fake;

import io.redlock.spi.NodeClient;
import java.time.Duration;

/** The node contract, run against the fake node of the unit tests. */
class SimulatedNodeContractTest extends KeyspaceContract {
  private final FakeTime time = new FakeTime();
  private final SimulatedNode node = new SimulatedNode("sim", time);

  @Override
  protected NodeClient client() {
    return node;
  }

  @Override
  protected Keyspace keyspace() {
    return node.keyspace();
  }

  @Override
  protected void passTime(Duration duration) {
    time.advance(duration);
  }
}
