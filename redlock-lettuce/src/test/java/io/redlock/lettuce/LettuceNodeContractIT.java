package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.RedlockConfig;
import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.contract.NodeClientContract;
import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;
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
    // Valkey reports the Redis version it is compatible with (7.2.4 in Valkey 8.0) beside its
    // own: the version read is Valkey's, named.
    String version = RedisBinary.version().orElseThrow();
    assertThat(info.version())
        .isEqualTo(
            RedisBinary.serverName().orElseThrow().equals("valkey")
                ? "valkey " + version
                : version);
    assertThat(node.info().toCompletableFuture().get(10, TimeUnit.SECONDS).version())
        .isEqualTo(info.version());
  }

  /**
   * A batch of extensions holds its bytes in the node's backlog only while the node has not
   * answered it: once answered, the batches' budget is whole again (a count that leaked would
   * refuse every batch once 16 MiB had passed).
   */
  @Test
  void aBatchOfExtensionsIsCountedInTheBacklogUntilTheNodeAnswersIt() throws Exception {
    NodeBacklog backlog = ((LettuceNodeClient) node).extensionBacklog();
    List<ExtendRequest> requests = new java.util.ArrayList<>();
    for (int i = 0; i < 2_500; i++) { // three scripts of up to MAX_BATCH_KEYS
      String key = "contract:batch:" + i;
      assertThat(node.lock(List.of(key), "b", 60_000).toCompletableFuture().get()).isTrue();
      requests.add(new ExtendRequest(List.of(key), i % 2 == 0 ? "b" : "other", 60_000));
    }
    for (int round = 0; round < 20; round++) {
      List<Boolean> answers = node.extendBatch(requests).toCompletableFuture().get();
      assertThat(answers).hasSize(2_500);
      for (int i = 0; i < answers.size(); i++) {
        assertThat(answers.get(i)).as("answer %d", i).isEqualTo(i % 2 == 0);
      }
    }
    assertThat(backlog.peakRequests()).isPositive(); // the batches went on this connection
    assertThat(backlog.batchBytes()).isZero();
    assertThat(backlog.requests()).isZero();
  }

  /**
   * A node whose password is in its URI (as {@code redis://:password@host} is usually written)
   * takes requests as soon as it reports itself connected. Lettuce resolved such credentials
   * off the event loop, and then reported the connection made before it was active: about one
   * connection in 30 rejected its first requests on this machine. Each new connection is one
   * more chance for that race, so the test makes many.
   */
  @Test
  void aNodeWithThePasswordInItsUriTakesTheFirstRequestOnceConnected() throws Exception {
    assertThat(servers.uri(0)).contains("@");
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).nodeTimeout(Duration.ofSeconds(2)).build();
    for (int i = 0; i < 150; i++) {
      try (NodeClient fresh = transport.open(NodeSettings.of(servers.uri(0), config))) {
        fresh.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
        String key = "contract:first-request:" + i;
        assertThat(fresh.lock(List.of(key), "t", 60_000).toCompletableFuture().get())
            .as("the first request on connection %d", i)
            .isTrue();
        assertThat(fresh.unlock(List.of(key), "t").toCompletableFuture().get()).isTrue();
      }
    }
  }

  /**
   * The fenced lock script checks the node's record itself, so that data lost since the
   * restart guard's last probe (an eviction, a flush, a restart behind a proxy) never yields a
   * counter: the keys are set, and the answer is -2.
   */
  @Test
  void theFencedLockChecksTheRecordOfTheNodesHistoryInTheSameStep() throws Exception {
    String record = "contract:record";
    String counter = "contract:fence:checked";
    servers.command(0, "SET", counter, "7");
    String runId = node.info().toCompletableFuture().get(10, TimeUnit.SECONDS).runId();
    long evicted = InfoReplies.evictedKeys(servers.command(0, "INFO", "stats").toString());
    String admitted =
        "redlock-node/2 run="
            + runId
            + " since=1 seq=3 evicted="
            + evicted
            + " admitted="
            + runId
            + " prev=- loaded=-1 why=init clock=ok";
    List<String> cases =
        List.of(
            admitted,
            admitted.replace(" admitted=" + runId, " admitted=-"),
            admitted.replace(" run=" + runId, " run=another"),
            admitted.replace(" evicted=" + evicted, " evicted=" + (evicted - 1)),
            "");
    List<Long> answers = new java.util.ArrayList<>();
    for (String value : cases) {
      String key = "contract:checked:" + answers.size();
      if (value.isEmpty()) {
        servers.command(0, "DEL", record);
      } else {
        servers.command(0, "SET", record, value);
      }
      answers.add(
          node.lockFenced(List.of(key), List.of(counter), "t", 10_000, record)
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS));
      assertThat(servers.command(0, "GET", key)).as("granted either way").isEqualTo("t");
    }
    // only a record that admits the current process, with no key evicted since, gives the counter
    assertThat(answers).containsExactly(7L, -2L, -2L, -2L, -2L);
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
