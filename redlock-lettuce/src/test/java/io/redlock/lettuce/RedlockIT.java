package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The library end to end over five real, healthy redis-server processes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockIT {
  private static RedisServers servers;
  private static Redlock redlock;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5);
    redlock = Redlock.create(config().build());
  }

  @AfterAll
  static void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  static RedlockConfig.Builder config() {
    // The servers were declared fresh after start: the restart guard (on) counts them at once.
    return RedlockConfig.builder().nodes(servers.uris());
  }

  private static String resource() {
    return "it:" + UUID.randomUUID();
  }

  /** How many nodes hold {@code key} with more than {@code millis} left to live. */
  private static int nodesExpiringAfter(String key, long millis) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", key) > millis) {
        count++;
      }
    }
    return count;
  }

  /** Waits until no node holds {@code key}: the last releases land late. */
  private static void awaitNoneHold(String key) throws InterruptedException {
    Timing.await("no node to hold " + key, Duration.ofSeconds(5), () -> servers.holding(key) == 0);
  }

  @Test
  void aLeaseIsTheTokenUnderTheResourceNameOnEveryNodeThatGranted() throws Exception {
    String resource = resource();
    List<RedlockEvent.NodeVote> votes = new CopyOnWriteArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            if (event.operation() == RedlockEvent.Operation.ACQUIRE) {
              votes.add(event);
            }
          }

          @Override
          public void acquireFinished(RedlockEvent.AcquireFinished event) {
            attempts.set(event.attempts());
          }
        };
    try (Redlock watched = Redlock.create(config().listener(listener).build());
        Lease lease = watched.acquire(resource, Duration.ofSeconds(10))) {
      // Decided at the third grant; the round's votes are reported once every node answered or
      // timed out (a request cut off by the node timeout may never be written, and a node the
      // guard or the transport set aside is not asked): every node that granted holds it. A
      // first attempt may fail on a busy machine (node timeout): wait for every attempt's votes,
      // the winning round's last (here a failed attempt can only have timed out: its round
      // settled at its deadline, before the retry).
      Timing.await(
          "every attempt's votes",
          () -> attempts.get() > 0 && votes.size() >= servers.size() * attempts.get());
      List<RedlockEvent.NodeVote> last = votes.subList(votes.size() - servers.size(), votes.size());
      List<Integer> granted =
          last.stream()
              .filter(vote -> vote.outcome().vote() == Vote.GRANTED)
              .map(vote -> vote.outcome().index())
              .toList();
      assertThat(granted).hasSizeGreaterThanOrEqualTo(3);
      for (int node : granted) {
        assertThat(servers.command(node, "GET", resource)).isEqualTo(lease.token());
        assertThat((Long) servers.command(node, "PTTL", resource)).isBetween(1L, 10_000L);
      }
      assertThat(lease.isValid()).isTrue();
    }
    awaitNoneHold(resource); // release() returns once a majority freed it
  }

  @Test
  void twoClientsWithEightThreadsEachNeverOverlap() throws Exception {
    String resource = resource();
    RedlockConfig fast =
        config()
            .ttl(Duration.ofSeconds(5))
            .retryCount(100_000)
            .maxWait(Duration.ofMinutes(2))
            .retryDelay(Duration.ofMillis(2))
            .retryJitter(Duration.ofMillis(2))
            .build();
    int total = 10_000;
    AtomicInteger remaining = new AtomicInteger(total);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger invalidUses = new AtomicInteger();
    AtomicLong acquired = new AtomicLong();
    try (Redlock first = Redlock.create(fast);
        Redlock second = Redlock.create(fast)) {
      ExecutorService pool = Executors.newFixedThreadPool(16);
      CountDownLatch startGate = new CountDownLatch(1);
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        Redlock client = t % 2 == 0 ? first : second;
        workers.add(
            pool.submit(
                () -> {
                  startGate.await();
                  while (remaining.getAndDecrement() > 0) {
                    try (Lease lease = client.acquire(resource, Duration.ofSeconds(5))) {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      if (!lease.isValid()) {
                        invalidUses.incrementAndGet();
                      }
                      acquired.incrementAndGet();
                      inside.decrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      startGate.countDown();
      // Each worker ends once the budget of acquisitions is spent; one deadline for them all,
      // well past maxWait, so that a hung worker fails the test instead of stalling it.
      Duration atMost = Timing.scaled(Duration.ofMinutes(4));
      long deadline = System.nanoTime() + atMost.toNanos();
      try {
        for (Future<?> worker : workers) {
          try {
            worker.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          } catch (TimeoutException e) {
            throw new AssertionError(
                "workers still running after "
                    + atMost
                    + " with "
                    + remaining.get()
                    + " acquisitions left",
                e);
          }
        }
      } finally {
        pool.shutdownNow();
      }
    }
    assertThat(acquired.get()).isEqualTo(total);
    assertThat(overlaps.get()).isZero();
    assertThat(invalidUses.get()).isZero();
    // failed attempts were undone everywhere, granted leases released (release() returns once
    // a majority answered): nothing is left
    awaitNoneHold(resource);
  }

  @Test
  void releaseNeverDeletesAKeyAnotherHolderSetAfterOurLeaseExpired() throws Exception {
    String resource = resource();
    Lease lease = redlock.acquire(resource, Duration.ofMillis(200));
    // our keys expire by the nodes' clocks
    Timing.await(resource + " to expire on every node", () -> servers.holding(resource) == 0);
    assertThat(lease.isValid()).isFalse();
    for (int i = 0; i < 5; i++) {
      servers.command(i, "SET", resource, "other-holder", "NX", "PX", "30000");
    }
    lease.release();
    assertThat(servers.holding(resource, "other-holder")).isEqualTo(5);
  }

  @Test
  void anExtensionKeepsTheLockPastItsFirstTtl() throws Exception {
    String resource = resource();
    try (Lease lease = redlock.acquire(resource, Duration.ofMillis(500))) {
      assertThat(lease.extend(Duration.ofSeconds(5))).isTrue();
      // confirmed by a majority; the last nodes' extensions may still be on their way
      assertThat(nodesExpiringAfter(resource, 1_000L)).isGreaterThanOrEqualTo(3);
      Timing.await(
          "every node to extend " + resource,
          Duration.ofSeconds(5),
          () -> nodesExpiringAfter(resource, 1_000L) == servers.size());
      Thread.sleep(700); // past the first ttl
      assertThat(lease.isValid()).isTrue();
      assertThat(servers.holding(resource, lease.token())).isEqualTo(5);
      assertThat(redlock.tryAcquire(resource, Duration.ofSeconds(1))).isEmpty();
    }
  }

  @Test
  void extendingAnExpiredLeaseFailsAndMarksItLostWithoutRecreatingKeys() throws Exception {
    String resource = resource();
    Lease lease = redlock.acquire(resource, Duration.ofMillis(200));
    Timing.await(resource + " to expire on every node", () -> servers.holding(resource) == 0);
    assertThatThrownBy(() -> lease.extend(Duration.ofSeconds(10)))
        .isInstanceOf(LeaseLostException.class);
    assertThat(lease.state()).isEqualTo(Lease.State.LOST);
    assertThat(lease.isValid()).isFalse();
    assertThat(servers.holding(resource)).isZero();
  }

  @Test
  void autoExtensionKeepsAWithLockActionSafeForThreeTtls() throws Exception {
    String resource = resource();
    Duration ttl = Duration.ofSeconds(1);
    AtomicInteger checks = new AtomicInteger();
    try (Redlock rival = Redlock.create(config().retryCount(0).build())) {
      redlock.withLock(
          resource,
          ttl,
          lease -> {
            long end = System.nanoTime() + ttl.multipliedBy(3).toNanos();
            while (System.nanoTime() - end < 0) {
              lease.ensureValid();
              try {
                assertThat(rival.tryAcquire(resource, ttl)).isEmpty();
                Thread.sleep(50);
              } catch (InterruptedException e) {
                throw new AssertionError(e);
              }
              checks.incrementAndGet();
            }
            assertThat(lease.isValid()).isTrue();
          });
    }
    assertThat(checks.get()).isGreaterThan(5);
    awaitNoneHold(resource); // release() returns once a majority freed it
  }

  @Test
  void aKeySetByAnotherClientOnAMajorityBlocksUs() throws Exception {
    String resource = resource();
    for (int i = 0; i < 3; i++) {
      servers.command(i, "SET", resource, "another-client", "NX", "PX", "30000");
    }
    assertThat(redlock.tryAcquire(resource, Duration.ofSeconds(5))).isEmpty();
    // a failed attempt returns once its undo is sent: nodes 3 and 4 may not have run it yet
    Timing.await(
        "nodes 3 and 4 to drop the undone grants",
        Duration.ofSeconds(5),
        () -> servers.holding(resource) == 3);
    try (Redlock patient = Redlock.create(config().retryCount(2).build())) {
      assertThatThrownBy(() -> patient.acquire(resource, Duration.ofSeconds(5)))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.attempts()).isEqualTo(3);
                // decided as soon as three TAKEN answers came: nodes 3 and 4 may not have answered
                assertThat(e.lastOutcomes())
                    .extracting(NodeOutcome::vote)
                    .startsWith(Vote.TAKEN, Vote.TAKEN, Vote.TAKEN);
                assertThat(e.lastOutcomes().subList(3, 5))
                    .extracting(NodeOutcome::vote)
                    .allMatch(vote -> vote == Vote.GRANTED || vote == Vote.PENDING);
              });
    }
    assertThat(servers.holding(resource, "another-client")).isEqualTo(3);
    // our grants on nodes 3 and 4 are undone: close() waits for each undo until its node answers
    // or times out, and one that timed out on a busy machine still runs, later
    Timing.await(
        "nodes 3 and 4 to drop the patient client's grants",
        Duration.ofSeconds(5),
        () -> servers.holding(resource) == 3);
  }

  @Test
  void scriptsStillWorkAfterScriptFlush() throws Exception {
    String a = resource();
    String b = resource();
    // several resources go through the lock script; extension and release through theirs.
    // Every node must have run the lock script after the flush: a vote that timed out on a busy
    // machine before it was written leaves its node without the keys, and then it is tried again.
    Lease taken =
        LeaseOnNodes.take(
            "a lease every node holds, taken after a script flush",
            Timing.DEFAULT_WAIT,
            () -> {
              for (int i = 0; i < 5; i++) {
                servers.command(i, "SCRIPT", "FLUSH");
              }
              // acquire, not tryAcquire: a first attempt after a flush meets NOSCRIPT, and the
              // retry sends the script itself
              return Optional.of(redlock.acquire(List.of(a, b), Duration.ofSeconds(10)));
            },
            LeaseOnNodes.everyNode(servers, a, b));
    try (Lease lease = taken) {
      for (int i = 0; i < 5; i++) {
        servers.command(i, "SCRIPT", "FLUSH");
      }
      assertThat(lease.extend(Duration.ofSeconds(20))).isTrue();
      // confirmed by a majority, each of which ran the extension script after the flush
      assertThat(nodesExpiringAfter(a, 10_000L)).isGreaterThanOrEqualTo(3);
      for (int i = 0; i < 5; i++) {
        servers.command(i, "SCRIPT", "FLUSH");
      }
    }
    awaitNoneHold(a);
    awaitNoneHold(b);
  }

  @Test
  void aLostListenerMayBlockOnTheLibraryWithoutStallingIt() throws Exception {
    String resource = resource();
    Lease lease = redlock.acquire(resource, Duration.ofMillis(300));
    CompletableFuture<Lease> fromListener = new CompletableFuture<>();
    lease.onLost(
        lost -> {
          try {
            fromListener.complete(redlock.acquire(resource, Duration.ofSeconds(5)));
          } catch (Throwable t) {
            fromListener.completeExceptionally(t);
          }
        });
    // nobody looks at the lease: its watch finds the deadline passed and tells the listener,
    // which blocks in acquire(), which needs the library's timer and transport threads
    try (Lease again = fromListener.get(20, TimeUnit.SECONDS)) {
      assertThat(again.isValid()).isTrue();
      assertThat(lease.state()).isEqualTo(Lease.State.LOST);
    }
  }

  @Test
  void callbacksOnAsyncAcquisitionsMayBlock() throws Exception {
    String resource = resource();
    Boolean extended =
        redlock
            .acquireAsync(resource, Duration.ofSeconds(5))
            .thenApply(
                lease -> {
                  try (lease) {
                    return lease.extend(Duration.ofSeconds(10)); // blocking, inside a callback
                  } catch (InterruptedException e) {
                    throw new AssertionError(e);
                  }
                })
            .get(20, TimeUnit.SECONDS);
    assertThat(extended).isTrue();
    awaitNoneHold(resource); // release() returns once a majority freed it
  }

  @Test
  void createFindsTheLettuceTransportOnTheClassPath() {
    // as given, without the password each URI carries
    assertThat(redlock.nodes())
        .containsExactlyElementsOf(
            java.util.stream.IntStream.range(0, servers.size())
                .mapToObj(servers::address)
                .toList());
    assertThat(redlock.quorum()).isEqualTo(3);
  }
}
