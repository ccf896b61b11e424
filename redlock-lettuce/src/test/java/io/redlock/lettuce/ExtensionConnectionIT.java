package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.testkit.FaultProxy;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each node's extensions travel on a connection of their own, beside the connection of votes:
 * the node's {@code CLIENT LIST} shows which command each connection sent last. Losing one
 * connection leaves the other as it is; a node that stops answering is set aside for the
 * restart guard's requests as soon as either connection sees it; extensions go only to the
 * process the connection of votes reaches.
 */
class ExtensionConnectionIT {
  private RedisServers servers;
  private LettuceTransport transport;

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(3);
    transport = new LettuceTransport();
  }

  @AfterEach
  void stop() {
    if (servers != null && servers.isPaused(0)) {
      servers.resume(0);
    }
    if (transport != null) {
      transport.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private NodeClient open() throws Exception {
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).nodeTimeout(Duration.ofSeconds(2)).build();
    NodeClient node = transport.open(NodeSettings.of(servers.uri(0), config));
    node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return node;
  }

  /**
   * The last command of each client connection of server 0 (or {@code server}) by its id,
   * without the connection that asks ({@code CLIENT LIST} itself).
   */
  private Map<Long, String> lastCommands() {
    return lastCommands(0);
  }

  private Map<Long, String> lastCommands(int server) {
    Map<Long, String> commands = new HashMap<>();
    for (String line : ((String) servers.command(server, "CLIENT", "LIST")).split("\n")) {
      long id = -1;
      String cmd = null;
      for (String field : line.trim().split(" ")) {
        if (field.startsWith("id=")) {
          id = Long.parseLong(field.substring(3));
        } else if (field.startsWith("cmd=")) {
          cmd = field.substring(4);
        }
      }
      if (id >= 0 && cmd != null && !cmd.startsWith("client")) {
        commands.put(id, cmd);
      }
    }
    return commands;
  }

  /** The id of the one connection whose last command is one of {@code commands}. */
  private static long connectionThatSent(Map<Long, String> last, String... commands) {
    List<Long> ids = new ArrayList<>();
    last.forEach(
        (id, cmd) -> {
          if (List.of(commands).contains(cmd)) {
            ids.add(id);
          }
        });
    assertThat(ids).as("connections whose last command is one of %s", List.of(commands)).hasSize(1);
    return ids.get(0);
  }

  private static ExtendRequest extension(String key, long ttlMillis) {
    return new ExtendRequest(List.of(key), "t", ttlMillis);
  }

  @Test
  void locksGoOnOneConnectionAndEveryExtensionOnAnother() throws Exception {
    Set<Long> before = lastCommands().keySet();
    try (NodeClient node = open()) {
      Map<Long, String> opened = lastCommands();
      opened.keySet().removeAll(before);
      assertThat(opened).as("connections of one node client").hasSize(2);

      assertThat(node.lock(List.of("ext:a"), "t", 60_000).toCompletableFuture().get()).isTrue();
      // A batch goes by EVALSHA once the node answered the script's load on its connection.
      Timing.await(
          "a batch by EVALSHA",
          Duration.ofSeconds(10),
          () ->
              List.of(true).equals(extendOrNull(node, extension("ext:a", 60_000)))
                  && lastCommands().containsValue("evalsha"));
      Map<Long, String> afterBatch = lastCommands();
      long votes = connectionThatSent(afterBatch, "set");
      long extensions = connectionThatSent(afterBatch, "evalsha");
      assertThat(Set.of(votes, extensions)).isEqualTo(opened.keySet());

      // One lease's extension (as a shorter expiry is sent) goes by EVAL where the batches go,
      // so it runs after every extension sent before it; a lock goes on the other connection.
      assertThat(node.lock(List.of("ext:b"), "t", 60_000).toCompletableFuture().get()).isTrue();
      assertThat(node.extend(List.of("ext:a"), "t", 5_000).toCompletableFuture().get()).isTrue();
      Map<Long, String> afterSingle = lastCommands();
      assertThat(afterSingle.get(extensions)).isEqualTo("eval");
      assertThat(afterSingle.get(votes)).isEqualTo("set");
      assertThat((Long) servers.command(0, "PTTL", "ext:a")).isBetween(1L, 5_000L);
    }
  }

  /**
   * The connection of extensions, lost, is made again on its own: the connection of votes stays
   * as it was, and the restart guard is not told (the extensions count only where their
   * connection reaches the process of the votes); the connection of votes, lost, tells it.
   */
  @Test
  void losingTheConnectionOfExtensionsLeavesTheVotesAndTheGuardAsTheyWere() throws Exception {
    try (NodeClient node = open()) {
      AtomicInteger lost = new AtomicInteger();
      node.onDisconnect(lost::incrementAndGet);
      assertThat(node.lock(List.of("ext:c"), "t", 60_000).toCompletableFuture().get()).isTrue();
      assertThat(node.extendBatch(List.of(extension("ext:c", 60_000))).toCompletableFuture().get())
          .containsExactly(true);
      Map<Long, String> last = lastCommands();
      long votes = connectionThatSent(last, "set");
      long extensions = connectionThatSent(last, "evalsha", "eval");

      servers.command(0, "CLIENT", "KILL", "ID", Long.toString(extensions));
      assertThat(node.lock(List.of("ext:d"), "t", 60_000).toCompletableFuture().get()).isTrue();
      assertThat(lastCommands()).containsEntry(votes, "set").doesNotContainKey(extensions);

      // Lettuce reconnects the connection of extensions; its script is loaded on it again.
      Timing.await(
          "extensions answered again",
          Duration.ofSeconds(10),
          () -> List.of(true).equals(extendOrNull(node, extension("ext:c", 60_000))));
      Timing.await(
          "extensions by EVALSHA on the new connection",
          Duration.ofSeconds(10),
          () -> {
            extendOrNull(node, extension("ext:c", 60_000));
            return lastCommands().containsValue("evalsha");
          });
      long again = connectionThatSent(lastCommands(), "evalsha");
      assertThat(again).isNotIn(votes, extensions);
      assertThat(lastCommands()).containsKey(votes);
      assertThat(lost.get()).as("listeners told").isZero();
      assertThat(((LettuceNodeClient) node).backlog().requests()).isZero();

      servers.command(0, "CLIENT", "KILL", "ID", Long.toString(votes));
      Timing.await(
          "the lost connection of votes told", Duration.ofSeconds(10), () -> lost.get() == 1);
    }
  }

  /**
   * The answers to one batch, or {@code null} while its connection is not back. Bounded: a
   * batch written as its connection was killed was never completed by Lettuce 6.8 in one run
   * (the library's round deadline ends such a vote; this test waits for nothing longer).
   */
  private static List<Boolean> extendOrNull(NodeClient node, ExtendRequest request) {
    try {
      return node.extendBatch(List.of(request)).toCompletableFuture().get(2, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException notYet) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Leases held with auto-extension while one of three nodes is stopped: its connection of
   * extensions, the only one this client writes on, is set aside, the restart guard's requests
   * to it are not sent, the leases live on the two other nodes, and once the node resumes its
   * batches are sent to it again.
   */
  @Test
  void aNodeStoppedUnderHeldLeasesIsSetAsideAndTheLeasesLiveOn() throws Exception {
    CapturingTransport capturing = new CapturingTransport(transport);
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).ttl(Duration.ofSeconds(2)).build();
    try (Redlock redlock = Redlock.create(config, capturing)) {
      List<Lease> leases = new ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        leases.add(redlock.tryAcquire("stalled:" + i).orElseThrow().autoExtend());
      }
      LettuceNodeClient stopped = capturing.clientOf(servers.uri(0), config);
      servers.pause(0);
      Timing.await(
          "the stopped node's connection of extensions set aside",
          Duration.ofSeconds(30),
          stopped.extensionBacklog()::isSilent);
      // Two more periods of extensions on another node, past the ttl the leases were granted
      // with: each lease lives on the two nodes that answer.
      long extendedBefore = calls(1, "pexpire");
      Timing.await(
          "every lease extended twice more on node 1",
          Duration.ofSeconds(30),
          () -> calls(1, "pexpire") - extendedBefore >= 2 * 2_000);
      assertThat(leases).allMatch(Lease::isValid);
      // The restart guard's probes of the node, which this client sends on its connection of
      // votes once a second, are not sent while it is set aside: unanswered, they would pile
      // up in Lettuce's queue.
      long notSent = stopped.backlog().otherRequestsNotSent();
      Timing.await(
          "two of the restart guard's requests to the stopped node not sent",
          Duration.ofSeconds(30),
          () -> stopped.backlog().otherRequestsNotSent() >= notSent + 2);
      assertThat(stopped.extensionBacklog().isSilent()).isTrue();

      servers.resume(0);
      Timing.await(
          "the resumed node's connection of extensions answers again",
          Duration.ofSeconds(30),
          () -> !stopped.extensionBacklog().isSilent());
      // Its keys ran out while it was stopped (an extension never creates one): what comes
      // back is the batches, which find them missing.
      long scriptsAtResume = calls(0, "evalsha");
      Timing.await(
          "batches of extensions reach the resumed node again",
          Duration.ofSeconds(30),
          () -> calls(0, "evalsha") - scriptsAtResume >= 2);
      assertThat(servers.command(0, "EXISTS", "stalled:0")).isEqualTo(0L);
      assertThat(leases).allMatch(Lease::isValid);
      for (Lease lease : leases) {
        lease.release();
      }
    }
  }

  /**
   * An address moved to another server while the first runs on (a virtual IP, a DNS name): the
   * connection of extensions, made again, reaches the second process while the connection of
   * votes still reaches the first, whose history the restart guard judged. No extension is sent
   * there, not even to a key it holds with the lease's token (as a replica of the first would),
   * and the votes go on to the first.
   */
  @Test
  void noExtensionGoesToAnotherProcessThanTheVotes() throws Exception {
    try (FaultProxy address = FaultProxy.start("moved", "127.0.0.1", servers.port(0))) {
      RedlockConfig config =
          RedlockConfig.builder()
              .nodes(address.uri())
              .password(servers.password())
              .nodeTimeout(Duration.ofSeconds(2))
              .build();
      try (NodeClient node = transport.open(NodeSettings.of(address.uri(), config))) {
        node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(node.lock(List.of("ext:e"), "t", 60_000).toCompletableFuture().get()).isTrue();
        servers.command(1, "SET", "ext:e", "t", "PX", "60000");
        Timing.await(
            "a batch answered by the first server",
            Duration.ofSeconds(10),
            () -> List.of(true).equals(extendOrNull(node, extension("ext:e", 60_000))));
        long extensions = connectionThatSent(lastCommands(0), "evalsha", "eval");

        address.retarget(servers.port(1));
        servers.command(0, "CLIENT", "KILL", "ID", Long.toString(extensions));
        LettuceNodeClient client = (LettuceNodeClient) node;
        String second = runId(1);
        Timing.await(
            "the connection of extensions made again, to the second server, its process read",
            Duration.ofSeconds(10),
            () -> second.equals(client.processes().get(1)));
        assertThat(client.processes().get(0)).isEqualTo(runId(0));
        assertThatThrownBy(
                () ->
                    node.extendBatch(List.of(extension("ext:e", 60_000)))
                        .toCompletableFuture()
                        .get())
            .hasCauseInstanceOf(ConnectException.class)
            .hasMessageContaining("does not reach the process of the connection of votes");
        assertThatThrownBy(
                () -> node.extend(List.of("ext:e"), "t", 60_000).toCompletableFuture().get())
            .hasCauseInstanceOf(ConnectException.class)
            .hasMessageContaining("does not reach the process of the connection of votes");
        assertThat(calls(1, "eval") + calls(1, "evalsha"))
            .as("scripts run by the second server")
            .isZero();
        assertThat(node.lock(List.of("ext:f"), "t", 60_000).toCompletableFuture().get()).isTrue();
        assertThat(servers.command(0, "GET", "ext:f")).isEqualTo("t");
        assertThat(servers.command(1, "EXISTS", "ext:f")).isEqualTo(0L);
      }
    }
  }

  private String runId(int server) {
    return InfoReplies.field(String.valueOf(servers.command(server, "INFO", "server")), "run_id");
  }

  private long calls(int i, String command) {
    return CommandStats.calls(servers, i, command);
  }
}
