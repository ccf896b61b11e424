package io.redlock.lettuce;

import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.contract.NodeClientContract;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The node contract against the Lettuce client on a real Redis server. */
class LettuceNodeContractIT extends NodeClientContract {
  private static RedisServers servers;
  private static LettuceTransport transport;
  private static NodeClient node;

  @BeforeAll
  static void start() throws Exception {
    servers = RedisServers.start(1);
    transport = new LettuceTransport();
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).nodeTimeout(Duration.ofSeconds(2)).build();
    node = transport.open(NodeSettings.of(servers.uri(0), config));
    node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
    if (transport != null) {
      transport.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  @Override
  protected NodeClient client() {
    return node;
  }

  @Override
  protected String valueOf(String key) {
    return (String) servers.command(0, "GET", key);
  }

  @Override
  protected long pttl(String key) {
    return (Long) servers.command(0, "PTTL", key);
  }

  @Override
  protected void put(String key, String value, Duration ttl) {
    servers.command(0, "SET", key, value, "PX", Long.toString(ttl.toMillis()));
  }

  @Override
  protected void passTime(Duration duration) {
    // Real Redis expires keys by its own clock: the only way to let time pass is to wait.
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
