package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The restart guard and the start-up checks against real redis-server processes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestartGuardIT {
  private static final Duration TTL = Duration.ofSeconds(1);

  private RedisServers servers;

  @BeforeEach
  void start() {
    servers = RedisServers.start(3);
  }

  @AfterEach
  void stop() {
    servers.close();
  }

  private RedlockConfig.Builder config() {
    return RedlockConfig.builder().nodes(servers.uris()).ttl(TTL).retryCount(0);
  }

  /** Tries once every 100 ms until a lease is granted; the time it takes is not asserted. */
  private static Lease acquireEventually(Redlock redlock, String resource) throws Exception {
    for (int i = 0; i < 100; i++) {
      Optional<Lease> lease = redlock.tryAcquire(resource, TTL);
      if (lease.isPresent()) {
        return lease.get();
      }
      Thread.sleep(100);
    }
    throw new AssertionError("never acquired " + resource);
  }

  @Test
  void aFreshServerCountsOnlyOnceItHasBeenUpForATtl() throws Exception {
    // a hold-back of 3 s, well beyond the time it takes to start the servers and connect
    try (Redlock redlock = Redlock.create(config().ttl(Duration.ofSeconds(3)).build())) {
      // the servers started within the last second: every node is held back at first
      assertThatThrownBy(() -> redlock.acquire("fresh", TTL))
          .isInstanceOfSatisfying(LockUnavailableException.class, e ->
              assertThat(e.lastOutcomes()).allSatisfy(outcome -> {
                assertThat(outcome.vote()).isEqualTo(Vote.ERROR);
                assertThat(outcome.detail()).contains("restart guard");
              }));
      acquireEventually(redlock, "fresh").release();
    }
  }

  @Test
  void aNodeRestartedEmptyDoesNotCountUntilItHasBeenUpForATtl() throws Exception {
    // A hold-back of 3 s: longer than a reconnect and a probe take, so that there is a time
    // when node 0 answers but does not count yet.
    try (Redlock redlock = Redlock.create(config().ttl(Duration.ofSeconds(3)).build())) {
      acquireEventually(redlock, "warm-up").release();
      servers.restart(0); // a new process, without the keys of the old one
      servers.kill(1);
      // node 0 and node 2 would make a majority, but node 0 may have forgotten a lock
      assertThatThrownBy(() -> redlock.acquire("after-restart", TTL))
          .isInstanceOfSatisfying(LockUnavailableException.class, e -> {
            // node 0 is held back (or not reconnected yet); node 1 is dead; so the attempt is
            // lost as soon as both say so, whether or not node 2 has answered by then
            assertThat(e.lastOutcomes().get(0).vote()).isEqualTo(Vote.ERROR);
            assertThat(e.lastOutcomes().get(1).vote()).isIn(Vote.ERROR, Vote.TIMEOUT);
          });
      assertThat(servers.command(0, "GET", "after-restart")).isNull();
      // Node 0 is reconnected and probed within a second or so; from then on its vote says
      // the guard holds it back for its short uptime, until it has been up long enough.
      boolean sawItHeldBackWhileUp = false;
      Lease lease = null;
      for (int i = 0; i < 200 && lease == null; i++) {
        try {
          lease = redlock.acquire("after-restart", TTL);
        } catch (LockUnavailableException e) {
          sawItHeldBackWhileUp |= e.lastOutcomes().get(0).detail().contains("up for");
          Thread.sleep(50);
        }
      }
      assertThat(sawItHeldBackWhileUp).isTrue();
      assertThat(lease).isNotNull();
      try (Lease held = lease) {
        assertThat(servers.command(0, "GET", "after-restart")).isEqualTo(held.token());
      }
    }
  }

  @Test
  void withTheGuardOffARestartedNodeCountsAsSoonAsItIsReconnected() throws Exception {
    try (Redlock redlock = Redlock.create(config().restartGuard(false).build())) {
      redlock.acquire("warm-up", TTL).release();
      servers.restart(0);
      servers.kill(1);
      try (Lease lease = acquireEventually(redlock, "unguarded")) {
        assertThat(servers.command(0, "GET", "unguarded")).isEqualTo(lease.token());
      }
    }
  }

  @Test
  void twoUrisThatReachOneServerAreRefused() {
    List<String> nodes = List.of(servers.uri(0), servers.uri(1),
        "redis://localhost:" + servers.port(0));
    assertThatThrownBy(() -> Redlock.create(RedlockConfig.builder().nodes(nodes).build()))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("same server")
        .hasMessageContaining(servers.uri(0))
        .hasMessageContaining("redis://localhost:" + servers.port(0));
  }

  @Test
  void aReplicaIsRefused() {
    servers.command(2, "REPLICAOF", servers.host(), Integer.toString(servers.port(0)));
    assertThatThrownBy(() -> Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build()))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining(servers.uri(2))
        .hasMessageContaining("replica");
  }
}
