package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the scripts of the rounds reach a real node: by {@code EVALSHA} once the node answered
 * their {@code SCRIPT LOAD} on the connection, each written once, and a {@code NOSCRIPT}
 * answer (an operator emptied the script cache) fails that one vote without a re-send.
 */
class RoundScriptsIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(1);
  }

  @AfterAll
  static void stop() {
    servers.close();
  }

  @BeforeEach
  void clean() {
    servers.command(0, "FLUSHALL");
    servers.declareFresh();
  }

  private static final List<String> KEYS = List.of("scripts:a", "scripts:b");
  private static final List<String> COUNTERS = List.of("fence:a", "fence:b");

  private NodeClient open(LettuceTransport transport) throws Exception {
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).nodeTimeout(Duration.ofSeconds(2)).build();
    NodeClient node = transport.open(NodeSettings.of(servers.uri(0), config));
    node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
    // Answered after the SCRIPT LOADs written first on the connection: the scripts are loaded.
    assertThat(node.lock(List.of("scripts:first"), "t", 60_000).toCompletableFuture().get())
        .isTrue();
    return node;
  }

  private static String commandStats() {
    return (String) servers.command(0, "INFO", "commandstats");
  }

  @Test
  void fencedLocksLocksOfSeveralKeysAndConfirmationsGoByEvalshaOnceLoaded() throws Exception {
    LettuceTransport transport = new LettuceTransport();
    try (NodeClient node = open(transport)) {
      servers.command(0, "CONFIG", "RESETSTAT");

      assertThat(node.lockFenced(KEYS, COUNTERS, "f", 60_000).toCompletableFuture().get())
          .isEqualTo(0L);
      assertThat(node.fence(KEYS, COUNTERS, "f", 1).toCompletableFuture().get()).isTrue();
      assertThat(node.unlock(KEYS, "f").toCompletableFuture().get()).isTrue();
      assertThat(node.lock(KEYS, "m", 60_000).toCompletableFuture().get()).isTrue();

      assertThat(commandStats())
          .contains("cmdstat_evalsha:calls=4,")
          .doesNotContain("cmdstat_eval:");
      assertThat(servers.command(0, "GET", "fence:a")).isEqualTo("1");
      assertThat(servers.command(0, "GET", "scripts:a")).isEqualTo("m");
    } finally {
      transport.close();
    }
  }

  @Test
  void aFencedLockMeetingAnEmptiedScriptCacheFailsOnceAndIsNotResent() throws Exception {
    LettuceTransport transport = new LettuceTransport();
    try (NodeClient node = open(transport)) {
      servers.command(0, "SCRIPT", "FLUSH");
      servers.command(0, "CONFIG", "RESETSTAT");

      // NOSCRIPT: the node ran nothing, and the vote fails rather than be sent again later,
      // where it could land after the attempt's undo and leave a key behind.
      assertThatThrownBy(
              () -> node.lockFenced(KEYS, COUNTERS, "f", 60_000).toCompletableFuture().get())
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("NOSCRIPT");
      assertThat(commandStats())
          .contains("cmdstat_evalsha:calls=1,")
          .doesNotContain("cmdstat_eval:");
      assertThat(servers.command(0, "EXISTS", "scripts:a")).isEqualTo(0L);

      // The script is loaded again: the next fenced lock runs, written once (by EVAL until the
      // load is answered, by EVALSHA after).
      servers.command(0, "CONFIG", "RESETSTAT");
      assertThat(node.lockFenced(KEYS, COUNTERS, "g", 60_000).toCompletableFuture().get())
          .isEqualTo(0L);
      String stats = commandStats();
      assertThat(calls(stats, "eval") + calls(stats, "evalsha")).isEqualTo(1);
      assertThat(servers.command(0, "GET", "scripts:a")).isEqualTo("g");
    } finally {
      transport.close();
    }
  }

  private static long calls(String stats, String command) {
    for (String line : stats.split("\r?\n")) {
      if (line.startsWith("cmdstat_" + command + ":calls=")) {
        String rest = line.substring(("cmdstat_" + command + ":calls=").length());
        return Long.parseLong(rest.substring(0, rest.indexOf(',')));
      }
    }
    return 0;
  }
}
