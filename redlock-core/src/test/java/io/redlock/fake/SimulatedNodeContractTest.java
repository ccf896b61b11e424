package io.redlock.fake;

import io.redlock.spi.NodeClient;
import java.time.Duration;

/** The node contract, run against the simulation. */
class SimulatedNodeContractTest extends NodeClientContract {
  private final FakeTime time = new FakeTime();
  private final SimulatedNode node = new SimulatedNode("sim", time);

  @Override
  protected NodeClient client() {
    return node;
  }

  @Override
  protected String valueOf(String key) {
    return node.valueOf(key);
  }

  @Override
  protected long pttl(String key) {
    return node.pttl(key);
  }

  @Override
  protected void put(String key, String value, Duration ttl) {
    node.put(key, value, ttl);
  }

  @Override
  protected void passTime(Duration duration) {
    time.advance(duration);
  }
}
