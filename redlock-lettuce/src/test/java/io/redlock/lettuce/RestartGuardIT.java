package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.FreshMarker;
import io.redlock.InitReport;
import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The restart guard, the fresh marker, persistence and the start-up checks against real
 * redis-server processes. These tests start their fleets without declaring them fresh, unless
 * the test is about the marker.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RestartGuardIT {
  private static final Duration TTL = Duration.ofSeconds(1);

  /** The guard's window: longer than a reconnect and a probe take, short enough to wait out. */
  private static final Duration MAX_TTL = Duration.ofSeconds(3);

  private RedisServers servers;

  @AfterEach
  void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private RedlockConfig.Builder config() {
    return RedlockConfig.builder().nodes(servers.uris()).ttl(TTL).maxTtl(MAX_TTL).retryCount(0);
  }

  /** Tries again and again, for at most 20 s (scaled), until a lease is granted. */
  private static Lease acquireEventually(Redlock redlock, String resource)
      throws InterruptedException {
    return acquireEventually(redlock, resource, TTL);
  }

  private static Lease acquireEventually(Redlock redlock, String resource, Duration ttl)
      throws InterruptedException {
    return Timing.awaitValue(
        "a lease on " + resource, Duration.ofSeconds(20), () -> redlock.tryAcquire(resource, ttl));
  }

  /** A lease that node 0 holds (see {@link LeaseOnNodes}). */
  private Lease acquireHeldByNode0(Redlock redlock, String resource, Duration ttl)
      throws InterruptedException {
    return LeaseOnNodes.take(
        "a lease on " + resource + " that node 0 holds",
        Duration.ofSeconds(20),
        () -> redlock.tryAcquire(resource, ttl),
        LeaseOnNodes.node(servers, 0, resource));
  }

  @Test
  void aFreshServerCountsOnlyOnceItHasBeenUpForMaxTtl() throws Exception {
    servers = RedisServers.start(3);
    try (Redlock redlock = Redlock.create(config().build())) {
      // the servers started within the last second: every node is held back at first
      assertThatThrownBy(() -> redlock.acquire("fresh", TTL))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.lastOutcomes())
                    .allSatisfy(outcome -> assertThat(outcome.vote()).isEqualTo(Vote.HELD_BACK));
                assertThat(e.getMessage())
                    .contains("redlock init")
                    .contains("count for a majority");
              });
      acquireEventually(redlock, "fresh").release();
    }
  }

  @Test
  void serversTheTestKitDeclaredFreshCountAtOnce() throws Exception {
    // the contract between the test kit's marker and the core's: one format
    assertThat(RedisServers.FRESH_MARKER_KEY_SUFFIX).isEqualTo(FreshMarker.KEY_SUFFIX);
    assertThat(RedisServers.FRESH_MARKER_VALUE_PREFIX).isEqualTo(FreshMarker.VALUE_PREFIX);
    servers = RedisServers.startFresh(3);
    // a window of 60 s: if the marker did not count, no lock could be had within the 20 s
    // acquireEventually allows (it retries only because a loaded machine may time a vote out)
    try (Redlock redlock = Redlock.create(config().maxTtl(Duration.ofSeconds(60)).build())) {
      try (Lease lease = acquireHeldByNode0(redlock, "declared", TTL)) {
        // granted by a majority, node 0 among them
        assertThat(servers.holding("declared", lease.token())).isGreaterThanOrEqualTo(2);
      }
    }
  }

  @Test
  void initDeclaresACleanClusterFreshAndRefusesOneWithLockKeys() throws Exception {
    servers = RedisServers.start(3);
    servers.command(1, "SET", "orders:42", "someone-else", "PX", "60000");
    InitReport refused = Redlock.init(config().build(), false);
    assertThat(refused.complete()).isFalse();
    assertThat(refused.nodes().get(1).outcome()).isEqualTo(InitReport.Outcome.HOLDS_KEYS);
    assertThat(refused.nodes().get(1).detail()).contains("orders:42");
    assertThat(servers.command(0, "GET", FreshMarker.key(""))).isNull();

    servers.command(1, "DEL", "orders:42");
    // the library's own keys are not locks, and a register with no live entry (its clients
    // stopped long enough ago) does not stop init
    servers.command(0, "SET", FreshMarker.maxTtlKey(""), "60000:1");
    InitReport done = Redlock.init(config().build(), false);
    assertThat(done.complete()).isTrue();
    String runId = done.nodes().get(2).runId();
    // init's marker, then its record: this process admitted, the cluster's identity written
    assertThat(servers.command(2, "GET", FreshMarker.key("")))
        .asString()
        .startsWith("redlock-node/2 run=" + runId + " ")
        .contains(" admitted=" + runId + " ")
        .contains(" why=init ")
        .containsPattern(" cluster=[0-9a-f]{12}/3$");
    try (Redlock redlock = Redlock.create(config().maxTtl(Duration.ofSeconds(60)).build())) {
      acquireEventually(redlock, "after-init").release();
    }
  }

  @Test
  void aClientWithAShorterMaxTtlWaitsOutTheClustersLongestThroughTheRegister() throws Exception {
    servers = RedisServers.startFresh(3);
    try (Redlock longer = Redlock.create(config().maxTtl(Duration.ofSeconds(20)).build());
        Redlock shorter = Redlock.create(config().build())) {
      assertThat(servers.command(0, "GET", FreshMarker.maxTtlKey("")))
          .asString()
          .contains("20000:")
          .contains("3000:");
      acquireEventually(shorter, "warm-up").release();
      servers.restart(0);
      servers.kill(1);
      // past the shorter client's own window (3 s plus drift) and a reconnect, node 0 is
      // still held back: the longer client's leases may live 20 s
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (System.nanoTime() - until < 0) {
        assertThat(shorter.tryAcquire("register", TTL)).isEmpty();
        Thread.sleep(200);
      }
      assertThatThrownBy(() -> shorter.acquire("register", TTL))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
                assertThat(e.lastOutcomes().get(0).detail()).contains("of 20.2");
              });
    }
  }

  /** The detail of node 0's vote once it is held back by its uptime. */
  private static String node0HeldBackBy(Redlock redlock, String needle)
      throws InterruptedException {
    return Timing.awaitValue(
        "node 0 held back, the detail naming " + needle,
        Duration.ofSeconds(20),
        () -> {
          try {
            redlock.acquire("held-back", TTL).release();
            return Optional.empty();
          } catch (LockUnavailableException e) {
            String detail = e.lastOutcomes().get(0).detail();
            return e.lastOutcomes().get(0).vote() == Vote.HELD_BACK && detail.contains(needle)
                ? Optional.of(detail)
                : Optional.empty();
          }
        });
  }

  @Test
  void aLongerMaxTtlLapsesFromTheRegisterOnceItsClientStopsRaisingIt() throws Exception {
    servers = RedisServers.startFresh(3);
    String key = FreshMarker.maxTtlKey("");
    // The longer client first: the shorter one reads its value with its first probes.
    Redlock longer = Redlock.create(config().maxTtl(Duration.ofSeconds(4)).build());
    try (Redlock shorter = Redlock.create(config().build())) {
      try (longer) {
        Object register = servers.command(2, "GET", key);
        assertThat(register).asString().contains("4000:").contains("3000:");
        assertThat((Long) servers.command(2, "PTTL", key))
            .as("the register lapses with its last entry, never lasts for ever")
            .isPositive();
        acquireEventually(shorter, "warm-up").release();
      }
      // The longer client is gone: its value lasts one hold more (its window, 5 s, 1 %),
      // and holds restarted nodes back for 4 s meanwhile.
      servers.restart(0);
      servers.kill(1);
      assertThat(node0HeldBackBy(shorter, "seen for")).contains("of 4042 ms");
      Timing.await(
          "the longer client's value to lapse",
          Duration.ofSeconds(20),
          () -> !String.valueOf(servers.command(2, "GET", key)).contains("4000:"));
      // Then a restart is held back for this client's own window only.
      servers.restart(0);
      assertThat(node0HeldBackBy(shorter, "of 3032 ms")).contains("seen for");
      acquireEventually(shorter, "after-lapse").release();
    }
  }

  @Test
  void aMarkerIsLostOnAnEmptyRestartAndTheGuardAppliesAgain() throws Exception {
    servers = RedisServers.startFresh(3);
    // the reasons the guard gave for holding node 0 back: it counts at once until the restart
    List<String> node0HeldBack = new CopyOnWriteArrayList<>();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void nodeHeldBack(RedlockEvent.NodeHeldBack event) {
            if (event.index() == 0) {
              node0HeldBack.add(event.reason());
            }
          }
        };
    // A window longer than the default test's 3 s: the acquisition below must come while the
    // new process is still held back by its uptime, however late the client reconnected and
    // probed it (the uptime it reads is rounded down to whole seconds).
    try (Redlock redlock =
        Redlock.create(config().maxTtl(Duration.ofSeconds(6)).listener(listener).build())) {
      acquireEventually(redlock, "warm-up").release();
      servers.restart(0); // a new process, without the keys (and the marker) of the old one
      servers.kill(1);
      assertThat(servers.command(0, "GET", FreshMarker.key(""))).isNull();
      // Until the client notices that node 0's connection was lost, it still counts node 0 and
      // sends it requests that time out on the dead connection. Once it has reconnected and
      // probed the new process, the guard holds node 0 back by its uptime, and says so.
      Timing.await("the guard to hold the restarted node 0 back", () -> !node0HeldBack.isEmpty());
      assertThat(node0HeldBack.get(0)).contains("seen for");
      // node 0 and node 2 would make a majority, but node 0 may have forgotten a lock
      assertThatThrownBy(() -> redlock.acquire("after-restart", TTL))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK);
                assertThat(e.lastOutcomes().get(0).detail()).contains("seen for");
                assertThat(e.lastOutcomes().get(1).vote())
                    .isIn(Vote.ERROR, Vote.TIMEOUT, Vote.HELD_BACK);
              });
      assertThat(servers.command(0, "GET", "after-restart")).isNull();
      // Once its window has passed, it counts again.
      try (Lease held =
          Timing.awaitValue(
              "node 0 to count again",
              Duration.ofSeconds(20),
              () -> {
                try {
                  return Optional.of(redlock.acquire("after-restart", TTL));
                } catch (LockUnavailableException e) {
                  return Optional.empty();
                }
              })) {
        assertThat(servers.command(0, "GET", "after-restart")).isEqualTo(held.token());
      }
    }
  }

  @Test
  void aNodeWithAofAlwaysCountsAtOnceAfterAKillAndRestart() throws Exception {
    servers = RedisServers.builder().count(3).appendOnly(true).fresh(true).start();
    // a long window: if node 0 counted only by its uptime, this test could not pass in time
    RedlockConfig config = config().maxTtl(Duration.ofSeconds(60)).build();
    try (Redlock redlock = Redlock.create(config)) {
      // node 0 holds it: a write it has not run cannot be in its AOF (with appendfsync always,
      // one it has run is)
      Lease held = acquireHeldByNode0(redlock, "persisted", TTL.multipliedBy(20));
      servers.kill(0); // SIGKILL: only what reached the AOF survives
      servers.restart(0);
      servers.kill(1);
      assertThat(servers.command(0, "GET", "persisted"))
          .as("loaded from the AOF")
          .isEqualTo(held.token());
      // node 0 is a new process that loaded every write: once reconnected and probed, it
      // counts, well before the 60 s window
      Lease other = acquireEventually(redlock, "other");
      assertThat(servers.command(0, "GET", "other")).isEqualTo(other.token());
      other.release();
      assertThat(redlock.tryAcquire("persisted", TTL))
          .as("the lease it kept still excludes")
          .isEmpty();
    }
  }

  @Test
  void aofSwitchedOnAtRunTimeAfterAnEmptyRestartDoesNotCount() throws Exception {
    servers = RedisServers.startFresh(3);
    try (Redlock redlock = Redlock.create(config().maxTtl(Duration.ofSeconds(60)).build())) {
      acquireEventually(redlock, "warm-up").release();
      servers.restart(0); // empty
      servers.command(0, "SET", FreshMarker.key(""), FreshMarker.value("an-earlier-process"));
      servers.command(0, "CONFIG", "SET", "appendonly", "yes");
      servers.command(0, "CONFIG", "SET", "appendfsync", "always");
      servers.kill(1);
      // give the guard time to reconnect and probe node 0 a few times: it stays held back
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
      while (System.nanoTime() - until < 0) {
        assertThat(redlock.tryAcquire("runtime-aof", TTL)).isEmpty();
        Thread.sleep(200);
      }
      assertThatThrownBy(() -> redlock.acquire("runtime-aof", TTL))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.HELD_BACK));
    }
  }

  @Test
  void withTheGuardOffARestartedNodeCountsAsSoonAsItIsReconnected() throws Exception {
    servers = RedisServers.start(3);
    try (Redlock redlock = Redlock.create(config().restartGuard(false).build())) {
      acquireEventually(redlock, "warm-up").release();
      servers.restart(0);
      servers.kill(1);
      try (Lease lease = acquireEventually(redlock, "unguarded")) {
        assertThat(servers.command(0, "GET", "unguarded")).isEqualTo(lease.token());
      }
    }
  }

  @Test
  void twoUrisThatReachOneServerAreRefused() {
    servers = RedisServers.start(3);
    List<String> nodes =
        List.of(
            servers.uri(0),
            servers.uri(1),
            "redis://:" + servers.password() + "@localhost:" + servers.port(0));
    assertThatThrownBy(() -> Redlock.create(RedlockConfig.builder().nodes(nodes).build()))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("same server")
        .hasMessageContaining(servers.address(0))
        .hasMessageContaining("redis://localhost:" + servers.port(0));
  }

  @Test
  void aReplicaIsRefused() {
    servers = RedisServers.start(3);
    servers.command(2, "REPLICAOF", servers.host(), Integer.toString(servers.port(0)));
    assertThatThrownBy(() -> Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build()))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining(servers.address(2))
        .hasMessageContaining("replica");
  }
}
