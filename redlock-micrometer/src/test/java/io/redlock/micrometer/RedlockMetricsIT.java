package io.redlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The meters and observations over five real redis-server processes, with the restart guard
 * on (the default).
 *
 * <p>The servers are declared fresh after start, so the guard counts them at once. The
 * Redlock's {@code maxTtl} is 3 s, so that a node restarted empty is held back only that
 * long: the held-back gauge can be seen to rise and fall within a test.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockMetricsIT {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(1);

  private static RedisServers servers;
  private static SimpleMeterRegistry registry;
  private static final List<Observation.Context> observed = new CopyOnWriteArrayList<>();
  private static Redlock redlock;

  /** Leases acquired by the tests of this class so far: the only acquisitions that succeed. */
  private static final AtomicLong ACQUIRED = new AtomicLong();

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5);
    registry = new SimpleMeterRegistry();
    ObservationRegistry observations = RedlockMetricsTest.observedBy(observed);
    // as Spring Boot's registry has it: the acquisition timer is the one it makes
    observations
        .observationConfig()
        .observationHandler(new DefaultMeterObservationHandler(registry));
    RedlockMetrics metrics =
        RedlockMetrics.builder(registry).observationRegistry(observations).build();
    redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .ttl(TTL)
                .maxTtl(TTL)
                // Not under test: well above the default 50 ms, which a loaded machine can miss,
                // so that an extension (or an acquisition) is confirmed in time.
                .nodeTimeout(NODE_TIMEOUT)
                .retryCount(2)
                .listener(metrics)
                .build());
    new RedlockNodeGauges(redlock).bindTo(registry);
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

  private static String resource() {
    return "metrics:" + UUID.randomUUID();
  }

  /** Tries again and again until a lease is granted (the guard may hold nodes back). */
  private static Lease acquireEventually(String resource) throws InterruptedException {
    Lease lease =
        Timing.awaitValue("a lease on " + resource, WAIT, () -> redlock.tryAcquire(resource, TTL));
    ACQUIRED.incrementAndGet();
    return lease;
  }

  private static double count(String name, String... tags) {
    Counter counter = registry.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  /** Node {@code node}'s votes in acquisition rounds, whatever their outcome. */
  private static double acquireVotes(String node) {
    return registry
        .find("redlock.node.votes")
        .tags("node", node, "operation", "acquire")
        .counters()
        .stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /** Attempts of every acquisition heard of so far, whatever its outcome. */
  private static double attempts() {
    return registry.find("redlock.acquire.attempts").summaries().stream()
        .mapToDouble(DistributionSummary::totalAmount)
        .sum();
  }

  /**
   * Waits until node {@code node}'s vote in every acquisition attempt so far has been counted:
   * each attempt's round asks every node once (a node held back votes without being asked),
   * and its votes are heard once the round settled, which may be after the call returned.
   * Events are heard in the order they were reported: once the last acquisition is heard of,
   * every attempt made so far is in {@link #attempts()}.
   */
  private static void awaitEveryVoteOf(String node) throws InterruptedException {
    Timing.await(
        "every acquisition attempt's vote of " + node,
        WAIT,
        () ->
            timed("redlock.acquire", "outcome", "acquired") >= ACQUIRED.get()
                && acquireVotes(node) == attempts());
  }

  private static long timed(String name, String... tags) {
    io.micrometer.core.instrument.Timer timer = registry.find(name).tags(tags).timer();
    return timer == null ? 0 : timer.count();
  }

  // Listeners hear events on a thread of their own, a moment after the operation returned:
  // each check of a meter right after an operation waits for it.

  @Test
  void acquisitionsReleasesAndHeldLeasesAreMeasured() throws Exception {
    long releases = timed("redlock.release");
    Lease lease = acquireEventually(resource());
    Timing.await(
        "the acquisition to be timed",
        WAIT,
        () -> timed("redlock.acquire", "outcome", "acquired") > 0);
    Timing.await(
        "one lease held",
        WAIT,
        () -> registry.get("redlock.lease.held").longTaskTimer().activeTasks() == 1);

    lease.release();
    // (a release is timed once every node answered, after release() returned: a release of
    // the test before may still land now, hence "at least")
    Timing.await("the release to be timed", WAIT, () -> timed("redlock.release") >= releases + 1);
    Timing.await(
        "no lease held",
        WAIT,
        () -> registry.get("redlock.lease.held").longTaskTimer().activeTasks() == 0);
    // a node's vote is counted when it answers, which may be after acquire returned
    for (String node : redlock.nodes()) {
      Timing.await(
          node + " to have granted a vote",
          WAIT,
          () ->
              count(
                      "redlock.node.votes",
                      "node",
                      node,
                      "operation",
                      "acquire",
                      "outcome",
                      "granted")
                  > 0);
    }
    Timing.await(
        "the acquisition's observation",
        WAIT,
        () ->
            observed.stream()
                .anyMatch(
                    c ->
                        c.getName().equals("redlock.acquire")
                            && "acquired"
                                .equals(c.getLowCardinalityKeyValue("outcome").getValue())));
  }

  @Test
  void contentionShowsAsUnavailableAndTakenVotes() throws Exception {
    String resource = resource();
    Lease lease = acquireEventually(resource);
    long unavailable = timed("redlock.acquire", "outcome", "unavailable");
    double taken =
        count(
            "redlock.node.votes",
            "node",
            redlock.nodes().get(0),
            "operation",
            "acquire",
            "outcome",
            "taken");

    assertThat(redlock.tryAcquire(resource, TTL)).isEmpty();
    Timing.await(
        "the unavailable acquisition",
        WAIT,
        () -> timed("redlock.acquire", "outcome", "unavailable") == unavailable + 1);
    Timing.await(
        "node 0's taken vote",
        WAIT,
        () ->
            count(
                    "redlock.node.votes",
                    "node",
                    redlock.nodes().get(0),
                    "operation",
                    "acquire",
                    "outcome",
                    "taken")
                > taken);
    lease.release();
  }

  @Test
  void extensionsAndALeaseLostToAnotherValueAreCountedByOutcomeAndCause() throws Exception {
    String resource = resource();
    Lease lease = acquireEventually(resource);
    assertThat(lease.extend(TTL)).isTrue();
    Timing.await(
        "the extension", WAIT, () -> timed("redlock.lease.extend", "outcome", "extended") > 0);
    double lost = count("redlock.lease.lost", "cause", "not_held");

    for (int i = 0; i < 3; i++) { // a majority no longer holds our token
      servers.command(i, "SET", resource, "someone-else");
    }
    assertThatThrownBy(() -> lease.extend(TTL)).isInstanceOf(LeaseLostException.class);
    Timing.await(
        "the loss", WAIT, () -> count("redlock.lease.lost", "cause", "not_held") == lost + 1);
    Timing.await(
        "the lost extension", WAIT, () -> timed("redlock.lease.extend", "outcome", "lost") > 0);
    lease.release();
  }

  @Test
  void aKilledNodeShowsInTheVoteCountersAndARestartedOneInTheHeldBackGauge() throws Exception {
    assertThat(gauge("redlock.nodes.quorum")).isEqualTo(3.0);
    acquireEventually(resource()).release();
    Timing.await(
        "the fresh fleet counted",
        WAIT,
        () -> registry.get("redlock.nodes.held.back").gauge().value() == 0.0);
    String node4 = redlock.nodes().get(4);
    // Node 4 need not be in the majority that granted the first lease (it may have timed out):
    // take the baseline once its vote in every attempt so far has been counted, whatever it was.
    awaitEveryVoteOf(node4);
    double granted =
        count("redlock.node.votes", "node", node4, "operation", "acquire", "outcome", "granted");
    Timing.await("five nodes counted", WAIT, () -> gauge("redlock.nodes.counted") == 5.0);
    servers.kill(4);
    try {
      // from the lost connection, without a request
      Timing.await("node 4 unreachable", WAIT, () -> gauge("redlock.nodes.reachable") == 4.0);
      assertThat(gauge("redlock.nodes.counted")).isEqualTo(4.0);
      for (int i = 0; i < 5; i++) {
        acquireEventually(resource()).release(); // four nodes still make a majority
      }
      awaitEveryVoteOf(node4);
      // A dead node's connection is lost, so the restart guard holds it back (not asked) until
      // it is probed again; a request already in flight when it died errs or times out.
      Timing.await(
          "node 4's failed votes",
          WAIT,
          () ->
              count("redlock.node.votes", "node", node4, "outcome", "error")
                      + count("redlock.node.votes", "node", node4, "outcome", "timeout")
                      + count("redlock.node.votes", "node", node4, "outcome", "held_back")
                  >= 5);
      assertThat(
              count(
                  "redlock.node.votes",
                  "node",
                  node4,
                  "operation",
                  "acquire",
                  "outcome",
                  "granted"))
          .as("no grant from a dead node")
          .isEqualTo(granted);
    } finally {
      servers.restart(4);
    }
    // Restarted empty: the guard holds it back for maxTtl, and the gauge shows it.
    Timing.await(
        "node 4 held back",
        WAIT,
        () -> registry.get("redlock.nodes.held.back").gauge().value() == 1.0);
    Timing.await("node 4 reachable again", WAIT, () -> gauge("redlock.nodes.reachable") == 5.0);
    Timing.await(
        "node 4 counted again",
        WAIT,
        () -> registry.get("redlock.nodes.held.back").gauge().value() == 0.0);
    Timing.await("node 4 counted", WAIT, () -> gauge("redlock.nodes.counted") == 5.0);
  }

  private static double gauge(String name) {
    return registry.get(name).gauge().value();
  }
}
