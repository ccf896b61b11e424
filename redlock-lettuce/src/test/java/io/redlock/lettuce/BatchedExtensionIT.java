package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LossCause;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Auto-extension in batches over five real redis-server processes: many leases extended by
 * few scripts, each key checked against its own lease's token, a lease whose keys another
 * holder took reported lost, and a node whose script cache was emptied extended again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BatchedExtensionIT {
  /**
   * Extended when half is left: about every 2 s, so that a busy test machine that stops the
   * client for a second does not make a lease run out.
   */
  private static final Duration TTL = Duration.ofSeconds(4);

  private static RedisServers servers;
  private final List<RedlockEvent.LeaseLost> lostEvents = new CopyOnWriteArrayList<>();
  private Redlock redlock;
  private String prefix;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5);
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @BeforeEach
  void create() {
    prefix = "batch:" + UUID.randomUUID() + ":";
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void leaseLost(RedlockEvent.LeaseLost event) {
            lostEvents.add(event);
          }
        };
    redlock =
        Redlock.create(
            RedlockConfig.builder().nodes(servers.uris()).ttl(TTL).listener(listener).build());
  }

  @AfterEach
  void close() {
    if (redlock != null) {
      redlock.close();
    }
  }

  /**
   * {@code count} auto-extended leases, each held by all five nodes (a lease granted by a
   * majority that lacks a node is taken again: see {@link LeaseOnNodes}).
   */
  private List<Lease> hold(int count) throws InterruptedException {
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String resource = prefix + i;
      Lease lease =
          LeaseOnNodes.take(
              "a lease on " + resource + " that every node holds",
              Timing.DEFAULT_WAIT,
              () -> Optional.of(redlock.acquire(resource, TTL)),
              LeaseOnNodes.everyNode(servers, resource));
      leases.add(lease.autoExtend());
    }
    return leases;
  }

  private static long calls(int i, String command) {
    return CommandStats.calls(servers, i, command);
  }

  private static long scripts(int i) {
    return calls(i, "eval") + calls(i, "evalsha");
  }

  @Test
  void manyLeasesAreExtendedByFewScriptsPerNode() throws Exception {
    List<Lease> leases = hold(300);
    long[] pexpires = new long[5];
    long[] scripts = new long[5];
    for (int i = 0; i < 5; i++) {
      pexpires[i] = calls(i, "pexpire");
      scripts[i] = scripts(i);
    }

    Timing.await(
        "every lease extended three times on every node",
        Duration.ofSeconds(40),
        () -> {
          for (int i = 0; i < 5; i++) {
            if (calls(i, "pexpire") - pexpires[i] < 3 * 300) {
              return false;
            }
          }
          return true;
        });

    for (int i = 0; i < 5; i++) {
      long extended = calls(i, "pexpire") - pexpires[i];
      long sent = scripts(i) - scripts[i]; // the restart guard's probe scripts included
      assertThat(sent)
          .as("scripts on node %d for %d key extensions", i, extended)
          .isLessThan(extended / 10);
    }
    for (Lease lease : leases) {
      assertThat(lease.isValid()).isTrue();
      assertThat(servers.holding(lease.resources().get(0), lease.token())).isEqualTo(5);
    }
    assertThat(lostEvents).isEmpty();
  }

  /**
   * A batch goes to every node of a transport encoded once: the nodes share where batches are
   * encoded, and five nodes sent one batch after encoding it once (encoded per node, as
   * before, it would be five times).
   */
  @Test
  void aBatchIsEncodedOnceForAllTheNodesOfATransport() throws Exception {
    RedlockConfig config = RedlockConfig.builder().nodes(servers.uris()).build();
    List<ExtendRequest> requests = new ArrayList<>();
    for (int k = 0; k < 200; k++) {
      requests.add(new ExtendRequest(List.of(prefix + "shared:" + k), "token-" + k, 60_000));
    }
    LettuceTransport transport = new LettuceTransport();
    List<NodeClient> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        NodeClient node = transport.open(NodeSettings.of(servers.uri(i), config));
        nodes.add(node);
        node.connected().toCompletableFuture().get(10, TimeUnit.SECONDS);
        for (ExtendRequest request : requests) {
          servers.command(i, "SET", request.keys().get(0), request.token(), "PX", "30000");
        }
      }
      Set<BatchBody.Last> places = Collections.newSetFromMap(new IdentityHashMap<>());
      for (NodeClient node : nodes) {
        places.add(((LettuceNodeClient) node).encodedBatches());
      }
      for (NodeClient node : nodes) {
        assertThat(node.extendBatch(requests).toCompletableFuture().get(10, TimeUnit.SECONDS))
            .hasSize(200)
            .containsOnly(true);
      }
      assertThat(places.stream().mapToLong(BatchBody.Last::encodings).sum())
          .as("encodings of one batch sent to five nodes")
          .isEqualTo(1);
      for (int i = 0; i < 5; i++) {
        assertThat((Long) servers.command(i, "PTTL", prefix + "shared:199"))
            .as("the last key's ttl on node %d", i)
            .isGreaterThan(30_000L);
      }
    } finally {
      nodes.forEach(NodeClient::close);
      transport.close();
    }
  }

  @Test
  void aKeyHeldByAnotherTokenIsNotExtendedAndOnlyItsLeaseIsReportedLost() throws Exception {
    List<Lease> leases = hold(20);
    Lease victim = leases.get(7);
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    victim.onLost(lost::set);
    String key = victim.resources().get(0);
    // Another holder's value on a majority, with a ttl no extension of ours would give.
    for (int i = 0; i < 3; i++) {
      servers.command(i, "SET", key, "someone-else", "PX", "60000");
    }
    long[] pexpires = new long[5];
    for (int i = 0; i < 5; i++) {
      pexpires[i] = calls(i, "pexpire");
    }

    Timing.await("the lease to be reported lost", Duration.ofSeconds(15), () -> lost.get() != null);
    Timing.await(
        "the other leases extended again on every node",
        Duration.ofSeconds(15),
        () -> {
          for (int i = 0; i < 5; i++) {
            if (calls(i, "pexpire") - pexpires[i] < 2 * 19) {
              return false;
            }
          }
          return true;
        });

    assertThat(lost.get().lossCause()).isEqualTo(LossCause.NOT_HELD);
    assertThat(victim.state()).isEqualTo(Lease.State.LOST);
    assertThat(lostEvents).hasSize(1);
    assertThat(lostEvents.get(0).lease()).isSameAs(victim);
    assertThat(lostEvents.get(0).cause()).isEqualTo(LossCause.NOT_HELD);
    for (int i = 0; i < 3; i++) {
      assertThat(servers.command(i, "GET", key)).isEqualTo("someone-else");
      assertThat((Long) servers.command(i, "PTTL", key))
          .as("never given our ttl")
          .isGreaterThan(TTL.toMillis());
    }
    for (Lease lease : leases) {
      if (lease != victim) {
        assertThat(lease.isValid()).isTrue();
        assertThat(servers.holding(lease.resources().get(0), lease.token())).isEqualTo(5);
      }
    }
  }

  @Test
  void aKeyThatBecameAHashFailsOnlyItsOwnLeasesVoteOnThatNode() throws Exception {
    List<Lease> leases = hold(20);
    Lease changed = leases.get(3);
    String key = changed.resources().get(0);
    servers.command(0, "DEL", key);
    servers.command(0, "HSET", key, "field", "value"); // WRONGTYPE for GET there
    long pexpires = calls(0, "pexpire");

    // The batch script must not fail on node 0 for every lease: the others are still
    // extended there, batch after batch.
    Timing.await(
        "node 0 to extend the other 19 leases twice",
        Duration.ofSeconds(15),
        () -> calls(0, "pexpire") - pexpires >= 2 * 19);

    assertThat(servers.command(0, "HGET", key, "field")).isEqualTo("value");
    assertThat((Long) servers.command(0, "PTTL", key)).as("the hash left as it is").isEqualTo(-1L);
    assertThat(changed.isValid()).as("held on the four other nodes").isTrue();
    for (Lease lease : leases) {
      if (lease != changed) {
        assertThat(servers.holding(lease.resources().get(0), lease.token())).isEqualTo(5);
      }
    }
    assertThat(lostEvents).isEmpty();
    servers.command(0, "DEL", key);
  }

  @Test
  void aNodeWhoseScriptCacheWasEmptiedIsExtendedAgain() throws Exception {
    List<Lease> leases = hold(50);
    Timing.await(
        "the batch script to be loaded on node 0",
        Duration.ofSeconds(10),
        () -> calls(0, "evalsha") > 0);
    servers.command(0, "SCRIPT", "FLUSH");
    long pexpires = calls(0, "pexpire");

    // The next batch by EVALSHA is answered NOSCRIPT (not re-sent: each lease counts on the
    // other nodes that time); the script is loaded again and the following batches extend.
    Timing.await(
        "node 0 to extend every lease twice again",
        Duration.ofSeconds(20),
        () -> calls(0, "pexpire") - pexpires >= 2 * 50);

    assertThat(servers.command(0, "SCRIPT", "EXISTS", Script.EXTEND_BATCH.sha1()).toString())
        .isEqualTo("[1]");
    for (Lease lease : leases) {
      assertThat(lease.isValid()).isTrue();
      assertThat((Long) servers.command(0, "PTTL", lease.resources().get(0))).isPositive();
    }
    assertThat(lostEvents).isEmpty();
  }
}
