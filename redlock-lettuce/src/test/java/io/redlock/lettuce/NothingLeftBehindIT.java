package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.resource.ClientResources;
import io.netty.channel.EventLoop;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a closing instance leaves on real nodes: nothing of its own, even on nodes that are
 * paused while it closes; and what the transport writes, once per request.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NothingLeftBehindIT {
  private RedisServers servers;

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(5);
  }

  @AfterEach
  void stop() {
    if (servers != null) {
      for (int i = 0; i < servers.size(); i++) {
        if (servers.isPaused(i)) {
          servers.resume(i);
        }
      }
      servers.close();
    }
  }

  private RedlockConfig.Builder config() {
    // The servers were declared fresh after start: the restart guard (on) counts them at once.
    return RedlockConfig.builder().nodes(servers.uris());
  }

  @Test
  void closeLeavesNoKeyOfAttemptsInFlightOnPausedNodes() throws Exception {
    Redlock redlock = Redlock.create(config().nodeTimeout(Duration.ofMillis(500)).build());
    for (int i = 2; i < 5; i++) {
      servers.pause(i);
    }
    List<CompletableFuture<Lease>> leases = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      leases.add(redlock.acquireAsync("close:" + i, Duration.ofSeconds(60)));
    }

    redlock.close(); // the attempts are in flight: their SETs wait on the paused nodes

    for (CompletableFuture<Lease> lease : leases) {
      assertThat(lease).isCompletedExceptionally();
    }
    for (int i = 2; i < 5; i++) {
      servers.resume(i); // each runs the SETs it holds, then the undos written behind them
    }
    // With the undo lost, the keys would stand for their whole ttl of 60 s.
    for (int i = 0; i < 5; i++) {
      awaitNoLockKeys(i, Duration.ofSeconds(10));
    }
  }

  @Test
  void aLeaseUsedAfterCloseAnswersInsteadOfHanging() throws Exception {
    Redlock redlock = Redlock.create(config().build());
    Lease lease = redlock.acquire("after-close", Duration.ofSeconds(10));
    redlock.close();

    // The library's callback threads are gone; these futures must still complete.
    assertThat(lease.releaseAsync().get(10, TimeUnit.SECONDS)).isNull();
    CompletableFuture<Boolean> extension = lease.extendAsync(Duration.ofSeconds(10));
    try {
      extension.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException expected) {
      assertThat(expected.getCause())
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("released");
    }
    assertThat(extension).isCompletedExceptionally();
    // close() waits for each release until its node answers or times out; one that timed
    // out on a busy machine still runs on its node, later
    Timing.await("every node free of after-close", () -> servers.holding("after-close") == 0);
  }

  @Test
  void anExtensionIsWrittenOnceEvenWhereTheScriptCacheIsEmpty() throws Exception {
    LettuceTransport transport = new LettuceTransport();
    RedlockConfig config = config().nodeTimeout(Duration.ofSeconds(2)).build();
    try (NodeClient node = transport.open(NodeSettings.of(servers.uri(0), config))) {
      node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertThat(node.lock(List.of("k"), "t", 10_000).toCompletableFuture().get()).isTrue();
      servers.command(0, "SCRIPT", "FLUSH");
      servers.command(0, "CONFIG", "RESETSTAT");

      assertThat(node.extend(List.of("k"), "t", 20_000).toCompletableFuture().get()).isTrue();

      // One EVAL, no EVALSHA answered NOSCRIPT and re-sent later, where it could land after
      // a newer extension and shorten the key's expiry.
      String stats = (String) servers.command(0, "INFO", "commandstats");
      assertThat(stats).contains("cmdstat_eval:calls=1").doesNotContain("cmdstat_evalsha");
      assertThat((Long) servers.command(0, "PTTL", "k")).isGreaterThan(10_000L);
    } finally {
      transport.close();
    }
  }

  @Test
  void aReleaseWrittenBeforeCloseRunsOnANodeThatRefusesScriptLoad() throws Exception {
    // A least-privilege user without SCRIPT (LOAD): the node never has the release script.
    servers.command(0, "ACL", "SETUSER", "noload", "on", ">secret", "~*", "&*", "+@all", "-script");
    String uri = "redis://noload:secret@" + servers.host() + ":" + servers.port(0);
    LettuceTransport transport = new LettuceTransport();
    RedlockConfig config = config().nodeTimeout(Duration.ofSeconds(2)).build();
    try {
      NodeClient node = transport.open(NodeSettings.of(uri, config));
      node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertThat(node.lock(List.of("close:noload"), "t", 60_000).toCompletableFuture().get())
          .isTrue();
      servers.pause(0);
      node.unlock(List.of("close:noload"), "t"); // waits in the paused node's socket
      node.close();
      servers.resume(0);
      // By EVALSHA, the node would answer NOSCRIPT to a closed connection, and the key would
      // stand for its whole ttl of 60 s. By EVAL, written once, it runs on its own.
      awaitNoLockKeys(0, Duration.ofSeconds(10));
    } finally {
      transport.close();
    }
  }

  @Test
  void aReleaseMeetingAnEmptiedScriptCacheRunsOnceThenTheScriptIsLoadedAgain() throws Exception {
    LettuceTransport transport = new LettuceTransport();
    RedlockConfig config = config().nodeTimeout(Duration.ofSeconds(2)).build();
    try (NodeClient node = transport.open(NodeSettings.of(servers.uri(0), config))) {
      node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
      // Answered after the SCRIPT LOAD written first on the connection: the script is loaded.
      assertThat(node.lock(List.of("close:a"), "a", 60_000).toCompletableFuture().get()).isTrue();
      servers.command(0, "SCRIPT", "FLUSH");
      servers.command(0, "CONFIG", "RESETSTAT");

      assertThat(node.unlock(List.of("close:a"), "a").toCompletableFuture().get()).isTrue();

      // Answered NOSCRIPT (nothing ran), then sent once by EVAL, which deleted the key.
      String stats = (String) servers.command(0, "INFO", "commandstats");
      assertThat(stats).contains("cmdstat_evalsha:").contains("cmdstat_eval:calls=1,");
      assertThat(servers.command(0, "EXISTS", "close:a")).isEqualTo(0L);

      // The script was loaded again on the way: the next release goes by EVALSHA alone.
      assertThat(node.lock(List.of("close:b"), "b", 60_000).toCompletableFuture().get()).isTrue();
      servers.command(0, "CONFIG", "RESETSTAT");
      assertThat(node.unlock(List.of("close:b"), "b").toCompletableFuture().get()).isTrue();
      stats = (String) servers.command(0, "INFO", "commandstats");
      assertThat(stats).contains("cmdstat_evalsha:calls=1,").doesNotContain("cmdstat_eval:");
      assertThat(servers.command(0, "EXISTS", "close:b")).isEqualTo(0L);
    } finally {
      transport.close();
    }
  }

  @Test
  void aLockRequestCutOffByTheNodeTimeoutBeforeItWasWrittenIsNeverWritten() throws Exception {
    Set<EventLoop> loops = ConcurrentHashMap.newKeySet();
    ClientResources resources = ObservedResources.seeing(channel -> loops.add(channel.eventLoop()));
    CountDownLatch resume = new CountDownLatch(1);
    List<Monitor> monitors = new ArrayList<>();
    try (Redlock redlock = Redlock.create(config().build(), new LettuceTransport(resources))) {
      for (int i = 0; i < 5; i++) {
        monitors.add(new Monitor(servers.host(), servers.port(i), servers.password()));
      }
      // Every event loop of the connections is held up: a request made now waits in its
      // loop's queue, not yet written, past the node timeout of its round.
      CountDownLatch held = new CountDownLatch(loops.size());
      for (EventLoop loop : loops) {
        loop.execute(
            () -> {
              held.countDown();
              try {
                resume.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
      }
      assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();

      assertThat(redlock.tryAcquire("close:cut-off", Duration.ofSeconds(60))).isEmpty();
      // The timer times rounds out in the order they started: once this second attempt has
      // timed out, so has the undo of the first, and its round cancelled its requests too.
      assertThat(redlock.tryAcquire("close:later", Duration.ofSeconds(60))).isEmpty();
      resume.countDown();

      // What each node ran, in order, up to the undo of the second attempt: the undo of the
      // first (an unlock, written although its round cancelled it), but neither lock request.
      for (int i = 0; i < 5; i++) {
        List<String> ran = monitors.get(i).until(command("EVALSHA", "close:later"));
        assertThat(ran)
            .as("node %d ran %s", i, ran)
            .anyMatch(command("EVALSHA", "close:cut-off"))
            .noneMatch(command("SET", "close:cut-off"))
            .noneMatch(command("SET", "close:later"));
      }
    } finally {
      resume.countDown();
      for (Monitor monitor : monitors) {
        monitor.close();
      }
      resources.shutdown(0, 2, TimeUnit.SECONDS).await(3, TimeUnit.SECONDS);
    }
  }

  /** Whether a line of {@code MONITOR} output is the command {@code name} on {@code key}. */
  private static Predicate<String> command(String name, String key) {
    return line -> line.contains("] \"" + name + "\" ") && line.contains(" \"" + key + "\"");
  }

  /** A {@code MONITOR} connection: every command its node runs, in the order it runs them. */
  private static final class Monitor implements AutoCloseable {
    private final Socket socket;
    private final BufferedReader lines;

    Monitor(String host, int port, String password) throws IOException {
      socket = new Socket(host, port);
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(("AUTH " + password + "\r\nMONITOR\r\n").getBytes(StandardCharsets.US_ASCII));
      lines =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      assertThat(lines.readLine()).isEqualTo("+OK"); // AUTH
      assertThat(lines.readLine()).isEqualTo("+OK"); // MONITOR
    }

    /** The lines read up to the first that {@code last} matches, that one included. */
    List<String> until(Predicate<String> last) throws IOException {
      List<String> read = new ArrayList<>();
      String line;
      do {
        line = lines.readLine();
        assertThat(line).as("MONITOR output after %s", read).isNotNull();
        read.add(line);
      } while (!last.test(line));
      return read;
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  /** Waits, within {@code within}, until node {@code node} holds no key of this test. */
  private void awaitNoLockKeys(int node, Duration within) throws InterruptedException {
    Timing.await("no lock keys left on node " + node, within, () -> lockKeys(node) == 0);
  }

  /** The keys this test's acquisitions may have set (not the library's own, such as init's). */
  private int lockKeys(int node) {
    return ((List<?>) servers.command(node, "KEYS", "close:*")).size();
  }
}
