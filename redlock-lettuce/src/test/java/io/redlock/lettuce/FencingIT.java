package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.InitReport;
import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fenced leases on real nodes: the counters, the token order between holders, and the rule
 * that only nodes whose state is known complete are trusted with the counters.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FencingIT {
  private static final Duration TTL = Duration.ofSeconds(5);

  private RedisServers servers;
  private final List<Redlock> clients = new ArrayList<>();

  @AfterEach
  void stop() {
    clients.forEach(Redlock::close);
    if (servers != null) {
      servers.close();
    }
  }

  private Redlock client(boolean fencing) {
    Redlock redlock =
        Redlock.create(
            RedlockConfig.builder().nodes(servers.uris()).ttl(TTL).fencing(fencing).build());
    clients.add(redlock);
    return redlock;
  }

  private static String resource() {
    return "fenced:" + UUID.randomUUID();
  }

  private long counter(int node, String resource) {
    Object value = servers.command(node, "GET", "__redlock_fence__:" + resource);
    return value == null ? 0 : Long.parseLong((String) value);
  }

  @Test
  void successiveHoldersFromTwoClientsGetStrictlyIncreasingTokens() throws Exception {
    servers = RedisServers.startFresh(5);
    Redlock a = client(true);
    Redlock b = client(true);
    String resource = resource();
    // Tokens are promised to be strictly increasing, not gap-free: a fenced attempt that fails
    // in its confirmation round (under load, a vote may time out) has used up its number.
    long previous = 0;
    for (int i = 0; i < 20; i++) {
      try (Lease lease = (i % 2 == 0 ? a : b).acquire(resource, TTL)) {
        long token = lease.fencingToken();
        // larger than the token of every earlier holder, whichever client it was
        assertThat(token).as("holder %d", i).isGreaterThan(previous);
        // and a majority of the counters had reached it before the lease was handed out
        int confirmed = 0;
        for (int node = 0; node < 5; node++) {
          confirmed += counter(node, resource) >= token ? 1 : 0;
        }
        assertThat(confirmed)
            .as("counters at holder %d's token or above", i)
            .isGreaterThanOrEqualTo(3);
        previous = token;
      }
    }
    assertThat(previous).as("20 strictly increasing tokens from 1 on").isGreaterThanOrEqualTo(20);
  }

  @Test
  void theTokenIsOnAMajorityBeforeTheLeaseIsHandedOutAndAnExtensionKeepsIt() throws Exception {
    servers = RedisServers.startFresh(5);
    String resource = resource();
    try (Lease lease = client(true).acquire(resource, TTL)) {
      long token = lease.fencingToken();
      int confirmed = 0;
      for (int i = 0; i < 5; i++) {
        confirmed += counter(i, resource) == token ? 1 : 0;
      }
      assertThat(confirmed).isGreaterThanOrEqualTo(3);
      assertThat(lease.extend(TTL)).isTrue();
      assertThat(lease.fencingToken()).isEqualTo(token);
    }
  }

  @Test
  void aLeaseOnSeveralResourcesWritesOneTokenToEveryCounter() throws Exception {
    servers = RedisServers.startFresh(3);
    Redlock redlock = client(true);
    String a = resource();
    String b = resource();
    // Tokens are strictly increasing, not gap-free (a failed confirmation round uses one up):
    // the checks are against the tokens actually handed out.
    long aLast = 0;
    for (int i = 0; i < 3; i++) {
      try (Lease lease = redlock.acquire(a, TTL)) { // a's counter runs ahead of b's
        aLast = lease.fencingToken();
      }
    }
    long token;
    try (Lease both = redlock.acquire(List.of(a, b), TTL)) {
      token = both.fencingToken();
      assertThat(token).as("above a's counter, not just b's").isGreaterThan(aLast);
      // The confirmation goes to the nodes that answered the lock round before it was decided
      // (a majority at least; a third answering later is not confirmed): a majority holds the
      // token for both, and no node holds it for one resource only.
      Timing.await(
          "a majority of nodes to hold the token for both",
          () -> {
            int holding = 0;
            for (int i = 0; i < 3; i++) {
              holding += counter(i, a) == token && counter(i, b) == token ? 1 : 0;
            }
            return holding >= 2;
          });
      for (int i = 0; i < 3; i++) {
        assertThat(counter(i, a) == token).as("node " + i).isEqualTo(counter(i, b) == token);
      }
    }
    try (Lease lease = redlock.acquire(b, TTL)) {
      assertThat(lease.fencingToken()).isGreaterThan(token);
    }
  }

  @Test
  void initRefusesToDeclareANodeFreshWhileAnyNodeHoldsACounter() throws Exception {
    servers = RedisServers.startFresh(3);
    String resource = resource();
    client(true).acquire(resource, TTL).release();
    servers.restart(0); // it lost its counters, and its marker no longer names its process

    InitReport report = Redlock.init(RedlockConfig.builder().nodes(servers.uris()).build(), false);

    // A counter is treated like a lock key: declaring node 0 fresh now would trust its empty
    // counters, so init writes nothing anywhere.
    assertThat(report.complete()).isFalse();
    assertThat(report.nodes())
        .extracting(InitReport.NodeResult::outcome)
        .contains(InitReport.Outcome.HOLDS_KEYS)
        .doesNotContain(InitReport.Outcome.MARKED);
  }

  @Test
  void anUnfencedLeaseHasNoTokenAndLeavesTheCountersAlone() throws Exception {
    servers = RedisServers.startFresh(3);
    String resource = resource();
    try (Lease lease = client(false).acquire(resource, TTL)) {
      assertThatThrownBy(lease::fencingToken)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("fencing(true)");
    }
    assertThat(counter(0, resource)).isZero();
    assertThatThrownBy(() -> client(true).acquire("__redlock_fence__:x", TTL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reserved");
  }

  @Test
  void nodesThatRestartedEmptyAreNotTrustedWithCountersAndAMajorityOfThemStopsFencing()
      throws Exception {
    servers = RedisServers.startFresh(5);
    // A short maxTtl, so that the restart guard counts a restarted node again soon: from then
    // on it may grant locks, but its counters are still not trusted. One attempt per call, so
    // that each refusal below shows its votes at once. The node timeout is not under test: it
    // is well above the default 50 ms, which a loaded machine can miss on every node.
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .nodes(servers.uris())
            .ttl(TTL_SHORT)
            .maxTtl(Duration.ofSeconds(2))
            .nodeTimeout(Duration.ofMillis(500))
            .retryCount(0);
    Redlock fenced = Redlock.create(config.fencing(true).build());
    clients.add(fenced);
    String resource = resource();
    // Five holders before the restarts. A failed attempt here is harmless: it is undone (on
    // the same connection, ahead of the next attempt) and at most leaves a gap in the tokens,
    // so each is tried again rather than trusted to win within one node timeout.
    long lastToken = 0;
    for (int i = 0; i < 5; i++) {
      Lease lease =
          Timing.awaitValue(
              "a fenced lease on " + resource,
              Duration.ofSeconds(20),
              () -> fenced.tryAcquire(resource, TTL_SHORT));
      assertThat(lease.fencingToken()).isGreaterThan(lastToken);
      lastToken = lease.fencingToken();
      lease.release();
    }
    servers.restart(0);
    servers.restart(1);
    servers.restart(2);
    // Until the guard has seen each new process up for its window, the restarted nodes are held
    // back; from then on they may grant locks, but three of them lost their counters: their
    // "0" must not make up a majority with nodes that never saw the last token. So a fenced
    // lease is never granted; once all three count again, it is refused for them, by name.
    Timing.await(
        "the restarted nodes to grant locks, and to be refused for fencing",
        () -> {
          try {
            fenced.acquire(resource, TTL_SHORT).release();
            throw new AssertionError("a fenced lease with three nodes that lost their counters");
          } catch (LockUnavailableException e) {
            return e.lastOutcomes().stream()
                    .filter(outcome -> outcome.vote() == NodeOutcome.Vote.UNTRUSTED)
                    .map(NodeOutcome::index)
                    .sorted()
                    .toList()
                    .equals(List.of(0, 1, 2))
                && e.getMessage().contains("trusted fencing counters");
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        });
    // a failed attempt is reported once its undo is sent, not once every node ran it
    Timing.await("the refused attempts to be undone", () -> servers.holding(resource) == 0);
    // Only the two nodes that kept their state still hold the last token.
    int holdingLast = 0;
    for (int i = 0; i < 5; i++) {
      holdingLast += counter(i, resource) == lastToken ? 1 : 0;
    }
    assertThat(holdingLast).isLessThanOrEqualTo(2);
  }

  @Test
  void aFencedLeaseExcludesARawSetNxOfAnotherClientAndAForeignKeyExcludesAFencedLease()
      throws Exception {
    servers = RedisServers.startFresh(3);
    Redlock redlock = client(true);
    String resource = resource();
    try (Lease lease =
        LeaseOnNodes.take(
            "a fenced lease every node holds",
            Timing.DEFAULT_WAIT,
            () -> redlock.tryAcquire(resource, TTL),
            LeaseOnNodes.everyNode(servers, resource))) {
      for (int node = 0; node < 3; node++) {
        // what node-redlock and redsync send, from a connection of their own
        assertThat(servers.command(node, "SET", resource, "x", "NX", "PX", "5000"))
            .as("node %d", node)
            .isNull();
      }
      assertThat(servers.holding(resource, lease.token())).isEqualTo(3);
    }

    String theirs = resource();
    for (int node = 0; node < 3; node++) {
      assertThat(servers.command(node, "SET", theirs, "their-token", "NX", "PX", "30000"))
          .isEqualTo("OK");
    }
    assertThat(redlock.tryAcquire(theirs, TTL)).as("a fenced lease on their lock").isEmpty();
    assertThat(servers.holding(theirs, "their-token")).isEqualTo(3);
    for (int node = 0; node < 3; node++) {
      assertThat(counter(node, theirs)).as("counter on node %d", node).isZero();
    }
  }

  @Test
  void aCounterThatIsNotANumberIsAFailedVoteNamingItNeverAZero() throws Exception {
    servers = RedisServers.startFresh(3);
    Redlock redlock = client(true);
    String resource = resource();
    String counterKey = "__redlock_fence__:" + resource;
    servers.command(0, "SET", counterKey, "garbage");
    servers.command(1, "SET", counterKey, "12x");
    assertThatThrownBy(() -> redlock.acquire(resource, TTL))
        .isInstanceOf(LockUnavailableException.class)
        .satisfies(
            e -> {
              List<NodeOutcome> outcomes = ((LockUnavailableException) e).lastOutcomes();
              for (int node = 0; node < 2; node++) {
                assertThat(outcomes.get(node).vote()).isEqualTo(NodeOutcome.Vote.ERROR);
                assertThat(outcomes.get(node).detail()).contains(counterKey);
              }
            });
    Timing.await("the failed attempts to be undone", () -> servers.holding(resource) == 0);
    assertThat(servers.command(0, "GET", counterKey)).isEqualTo("garbage");
    assertThat(servers.command(2, "GET", counterKey)).as("no token confirmed").isNull();
  }

  private static final Duration TTL_SHORT = Duration.ofSeconds(1);
}
