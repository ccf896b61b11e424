package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Nodes killed, paused and restarted under a running client: a fresh fleet per test. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FaultsIT {
  private static final Duration TTL = Duration.ofSeconds(30);

  private RedisServers servers;
  private Redlock redlock;

  @BeforeEach
  void start() {
    // Declared fresh, as 'redlock init' does: the restart guard (on) counts them at once.
    servers = RedisServers.startFresh(5);
    redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .retryCount(2)
                .retryDelay(Duration.ofMillis(50))
                .retryJitter(Duration.ofMillis(20))
                .build());
  }

  @AfterEach
  void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private static String resource() {
    return "faults:" + UUID.randomUUID();
  }

  private Object get(int node, String key) {
    return servers.command(node, "GET", key);
  }

  @Test
  void twoOfFiveNodesKilledStillGrantTheLock() throws Exception {
    servers.kill(0);
    servers.kill(1);
    String resource = resource();
    try (Lease lease = redlock.acquire(resource, TTL)) {
      assertThat(lease.isValid()).isTrue();
      for (int i = 2; i < 5; i++) {
        assertThat(get(i, resource)).isEqualTo(lease.token());
      }
    }
    for (int i = 2; i < 5; i++) {
      awaitNoKey(i, resource); // a node that answered after the node timeout frees it late
    }
  }

  @Test
  void threeOfFiveNodesKilledFailEveryAttemptAndLeaveNothingOnTheSurvivors() throws Exception {
    servers.kill(0);
    servers.kill(1);
    servers.kill(2);
    String resource = resource();
    long start = System.nanoTime();
    assertThatThrownBy(() -> redlock.acquire(resource, TTL))
        .isInstanceOfSatisfying(
            LockUnavailableException.class,
            e -> {
              assertThat(e.attempts()).isEqualTo(3);
              List<NodeOutcome> outcomes = e.lastOutcomes();
              assertThat(outcomes.subList(0, 3))
                  .extracting(NodeOutcome::vote)
                  // a killed node's lost connection makes the guard hold it back, unasked
                  .allMatch(
                      vote ->
                          vote == Vote.ERROR
                              || vote == Vote.TIMEOUT
                              || vote == Vote.PENDING
                              || vote == Vote.HELD_BACK);
              assertThat(outcomes.subList(3, 5))
                  .extracting(NodeOutcome::vote)
                  .allMatch(vote -> vote == Vote.GRANTED || vote == Vote.PENDING);
            });
    System.out.printf(
        "3 of 5 killed: 3 attempts failed in %d ms%n", (System.nanoTime() - start) / 1_000_000);
    // a failed attempt returns once its undo is sent: the survivors may not have run it yet
    awaitNoKey(3, resource);
    awaitNoKey(4, resource);
  }

  @Test
  void aPausedNodeCostsAtMostTheNodeTimeout() throws Exception {
    String resource = resource();
    servers.pause(0);
    servers.pause(1);
    try {
      // Two paused: the three others make the quorum without waiting for them.
      try (Lease lease = redlock.acquire(resource, TTL)) {
        assertThat(lease.isValid()).isTrue();
      }
      // Three paused: no majority; the attempt ends when the node timeout says so, and the
      // paused nodes' votes say that it was the timeout that ended it. Which of two timers
      // fired first (ours, or Lettuce's command timeout) only changes the detail's wording;
      // and on a loaded machine a healthy node may miss 50 ms too, but it never refuses.
      servers.pause(2);
      assertThatThrownBy(() -> redlock.acquire(resource, TTL))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.lastOutcomes().subList(0, 3))
                    .extracting(NodeOutcome::vote)
                    .containsOnly(Vote.TIMEOUT);
                assertThat(e.lastOutcomes().subList(3, 5))
                    .extracting(NodeOutcome::vote)
                    .isSubsetOf(Vote.GRANTED, Vote.TIMEOUT);
              });
    } finally {
      servers.resume(0);
      servers.resume(1);
      servers.resume(2);
    }
    // the requests held by the paused nodes run now, each followed by its release
    for (int i = 0; i < 5; i++) {
      awaitNoKey(i, resource);
    }
  }

  @Test
  void scriptsStillWorkAfterANodeRestart() throws Exception {
    String a = resource();
    String b = resource();
    for (int i = 0; i < 5; i++) {
      servers.restart(i); // empty: no keys, no scripts
    }
    // The whole cluster restarted empty while no lease was held: declared fresh again, as an
    // operator would with 'redlock init', or the guard would hold every node back a maxTtl.
    servers.declareFresh();
    // Lettuce reconnects in the background; the retries absorb the wait.
    Lease lease =
        Timing.awaitValue(
            "a lease after the restarts",
            Duration.ofSeconds(10),
            () -> redlock.tryAcquire(List.of(a, b), TTL));
    assertThat(lease.extend(Duration.ofSeconds(40))).isTrue();
    lease.release();
    for (int i = 0; i < 5; i++) {
      awaitNoKey(i, a); // release() returns once a majority freed them
      awaitNoKey(i, b);
    }
  }

  private void awaitNoKey(int node, String key) throws InterruptedException {
    // A resumed process answers the backlog in its own time; far less than the 30 s ttl that
    // would otherwise remove the key, so a key still there after 5 s is a real leftover.
    Timing.await(
        key + " to go from node " + node, Duration.ofSeconds(5), () -> get(node, key) == null);
  }
}
