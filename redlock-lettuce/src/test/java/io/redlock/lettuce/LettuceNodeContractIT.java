package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.contract.NodeClientContract;
import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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

  /** Beyond the key contract: what {@code info} reads, which redlock doctor shows too. */
  @Test
  void infoReadsTheServersIdentityRoleAndVersion() throws Exception {
    NodeInfo info = node.info("contract:no-marker").toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(info.runId()).hasSize(40);
    assertThat(info.role()).isEqualTo("master");
    assertThat(info.marker()).isNull();
    assertThat(info.version()).isEqualTo(RedisBinary.version().orElseThrow());
    assertThat(node.info().toCompletableFuture().get(10, TimeUnit.SECONDS).version())
        .isEqualTo(info.version());
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
