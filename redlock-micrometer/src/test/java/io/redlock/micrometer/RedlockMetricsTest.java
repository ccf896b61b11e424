package io.redlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Lease;
import io.redlock.LossCause;
import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.RedlockEvent;
import io.redlock.RedlockEvent.AcquireOutcome;
import io.redlock.RedlockEvent.ExtendOutcome;
import io.redlock.RedlockEvent.Operation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** How events become meters and observations; events are fed by hand, no network. */
class RedlockMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private static final class StubLease implements Lease {
    private final List<String> resources;
    private volatile boolean valid = true;

    StubLease(String... resources) {
      this.resources = List.of(resources);
    }

    @Override
    public List<String> resources() {
      return resources;
    }

    @Override
    public String token() {
      return "t";
    }

    @Override
    public long fencingToken() {
      throw new IllegalStateException("not fenced");
    }

    @Override
    public State state() {
      return State.HELD;
    }

    @Override
    public Duration remaining() {
      return Duration.ZERO;
    }

    @Override
    public boolean isValid() {
      return valid;
    }

    @Override
    public void ensureValid() {}

    @Override
    public boolean extend(Duration ttl) {
      return true;
    }

    @Override
    public CompletableFuture<Boolean> extendAsync(Duration ttl) {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public void releaseAfter(Duration delay) {}

    @Override
    public Lease autoExtend() {
      return this;
    }

    @Override
    public void onLost(Consumer<? super io.redlock.LeaseLostException> listener) {}

    @Override
    public void release() {}

    @Override
    public CompletableFuture<Void> releaseAsync() {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public void close() {}
  }

  private static RedlockEvent.AcquireFinished finished(
      long id, AcquireOutcome outcome, int attempts, long millis, Lease lease) {
    return new RedlockEvent.AcquireFinished(
        id, List.of("orders:42"), outcome, attempts, Duration.ofMillis(millis), lease);
  }

  @Test
  void acquisitionsAreTimedByOutcomeAndHeldLeasesAreCounted() {
    RedlockMetrics metrics = RedlockMetrics.builder(registry).build();
    Lease lease = new StubLease("orders:42");
    metrics.acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 3, lease));
    metrics.acquireFinished(finished(2, AcquireOutcome.UNAVAILABLE, 11, 2_000, null));
    metrics.acquireFinished(finished(3, AcquireOutcome.UNAVAILABLE, 4, 1_000, null));

    Timer acquired = registry.get("redlock.acquire").tag("outcome", "acquired").timer();
    assertThat(acquired.count()).isEqualTo(1);
    assertThat(acquired.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(3.0);
    Timer unavailable = registry.get("redlock.acquire").tag("outcome", "unavailable").timer();
    assertThat(unavailable.count()).isEqualTo(2);
    assertThat(
            registry
                .get("redlock.acquire.attempts")
                .tag("outcome", "unavailable")
                .summary()
                .totalAmount())
        .isEqualTo(15.0);
    assertThat(registry.get("redlock.acquire").tag("outcome", "cancelled").timer().count())
        .isZero();

    LongTaskTimer held = registry.get("redlock.lease.held").longTaskTimer();
    assertThat(held.activeTasks()).isEqualTo(1);
    metrics.released(new RedlockEvent.Release(lease, Duration.ofMillis(2)));
    assertThat(held.activeTasks()).isZero();
    assertThat(registry.get("redlock.release").timer().count()).isEqualTo(1);
    metrics.leaseLost(new RedlockEvent.LeaseLost(lease, LossCause.EXPIRED, "late"));
    assertThat(held.activeTasks()).as("stopped once").isZero();
  }

  @Test
  void noResourceNameIsATagUnlessAskedFor() {
    RedlockMetrics.builder(registry)
        .build()
        .acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 1, null));
    registry
        .getMeters()
        .forEach(
            meter ->
                assertThat(meter.getId().getTags())
                    .extracting(Tag::getKey)
                    .doesNotContain("resource"));

    SimpleMeterRegistry tagged = new SimpleMeterRegistry();
    RedlockMetrics.builder(tagged)
        .resourceTags(true)
        .tags(List.of(Tag.of("redlock", "orders")))
        .build()
        .acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 1, null));
    assertThat(
            tagged
                .get("redlock.acquire")
                .tag("resource", "orders:42")
                .tag("redlock", "orders")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void votesAreCountedPerNodeOperationAndOutcome() {
    RedlockMetrics metrics = RedlockMetrics.builder(registry).build();
    for (int i = 0; i < 3; i++) {
      metrics.nodeVoted(
          new RedlockEvent.NodeVote(
              Operation.ACQUIRE, new NodeOutcome(0, "127.0.0.1:7000", Vote.GRANTED, "")));
    }
    metrics.nodeVoted(
        new RedlockEvent.NodeVote(
            Operation.ACQUIRE,
            new NodeOutcome(1, "127.0.0.1:7001", Vote.TIMEOUT, "no answer within 50 ms")));
    metrics.nodeVoted(
        new RedlockEvent.NodeVote(
            Operation.EXTEND, new NodeOutcome(0, "127.0.0.1:7000", Vote.TAKEN, "")));

    assertThat(
            registry
                .get("redlock.node.votes")
                .tags("node", "127.0.0.1:7000", "operation", "acquire", "outcome", "granted")
                .counter()
                .count())
        .isEqualTo(3);
    assertThat(
            registry
                .get("redlock.node.votes")
                .tags("node", "127.0.0.1:7001", "outcome", "timeout")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get("redlock.node.votes")
                .tags("operation", "extend", "outcome", "taken")
                .counter()
                .count())
        .isEqualTo(1);
  }

  @Test
  void extensionsLossesAndHeldBackNodesHaveTheirMeters() {
    RedlockMetrics metrics = RedlockMetrics.builder(registry).build();
    Lease lease = new StubLease("r");
    metrics.extended(
        new RedlockEvent.Extension(lease, ExtendOutcome.EXTENDED, Duration.ofMillis(1)));
    metrics.extended(new RedlockEvent.Extension(lease, ExtendOutcome.LOST, Duration.ofMillis(1)));
    metrics.leaseLost(new RedlockEvent.LeaseLost(lease, LossCause.NOT_HELD, "gone"));
    assertThat(registry.get("redlock.lease.extend").tag("outcome", "extended").timer().count())
        .isEqualTo(1);
    assertThat(registry.get("redlock.lease.extend").tag("outcome", "lost").timer().count())
        .isEqualTo(1);
    assertThat(registry.get("redlock.lease.lost").tag("cause", "not_held").counter().count())
        .isEqualTo(1);
    assertThat(registry.get("redlock.lease.lost").tag("cause", "expired").counter().count())
        .isZero();

    metrics.nodeHeldBack(new RedlockEvent.NodeHeldBack(2, "n2", "restarted"));
    metrics.nodeHeldBack(new RedlockEvent.NodeHeldBack(2, "n2", "clock jumped"));
    metrics.nodeHeldBack(new RedlockEvent.NodeHeldBack(4, "n4", "restarted"));
    assertThat(registry.get("redlock.nodes.held.back").gauge().value()).isEqualTo(2.0);
    metrics.nodeCounted(new RedlockEvent.NodeCounted(2, "n2"));
    assertThat(registry.get("redlock.nodes.held.back").gauge().value()).isEqualTo(1.0);
  }

  @Test
  void anAcquisitionIsAnObservationChildOfTheCallersCurrentOne() {
    List<Observation.Context> stopped = new ArrayList<>();
    ObservationRegistry observations = observedBy(stopped);
    RedlockMetrics metrics =
        RedlockMetrics.builder(registry).observationRegistry(observations).build();

    Observation request = Observation.start("http.request", observations);
    try (Observation.Scope scope = request.openScope()) {
      metrics.acquireStarted(
          new RedlockEvent.AcquireStarted(7, List.of("orders:42"), Duration.ofSeconds(30)));
    }
    metrics.acquireFinished(finished(7, AcquireOutcome.ACQUIRED, 2, 5, null));
    request.stop();

    Observation.Context acquisition = stopped.get(0);
    assertThat(acquisition.getName()).isEqualTo("redlock.acquire");
    assertThat(acquisition.getContextualName()).isEqualTo("redlock acquire");
    assertThat(acquisition.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("acquired");
    assertThat(acquisition.getHighCardinalityKeyValue("attempts").getValue()).isEqualTo("2");
    assertThat(acquisition.getHighCardinalityKeyValue("ttl.ms").getValue()).isEqualTo("30000");
    assertThat(acquisition.getParentObservation()).isSameAs(request);
    assertThat(acquisition.getHighCardinalityKeyValue("resource")).isNull();
  }

  /** A registry whose observations, once stopped, are added to {@code stopped}. */
  static ObservationRegistry observedBy(List<Observation.Context> stopped) {
    ObservationRegistry observations = ObservationRegistry.create();
    observations
        .observationConfig()
        .observationHandler(
            new ObservationHandler<>() {
              @Override
              public boolean supportsContext(Observation.Context context) {
                return true;
              }

              @Override
              public void onStop(Observation.Context context) {
                stopped.add(context);
              }
            });
    return observations;
  }

  @Test
  void aMeterHandlerMakesTheOneTimerPerOutcomeNotOnePerAttemptCountOrTtl() {
    ObservationRegistry observations = ObservationRegistry.create();
    observations
        .observationConfig()
        .observationHandler(new DefaultMeterObservationHandler(registry));
    RedlockMetrics metrics =
        RedlockMetrics.builder(registry).observationRegistry(observations).build();
    for (int i = 1; i <= 3; i++) {
      metrics.acquireStarted(
          new RedlockEvent.AcquireStarted(i, List.of("orders:42"), Duration.ofSeconds(10L * i)));
      metrics.acquireFinished(finished(i, AcquireOutcome.ACQUIRED, i, 5, null));
    }
    metrics.acquireStarted(
        new RedlockEvent.AcquireStarted(4, List.of("orders:42"), Duration.ofSeconds(10)));
    metrics.acquireFinished(finished(4, AcquireOutcome.UNAVAILABLE, 11, 2_000, null));

    // The handler's timers alone (they carry its "error" tag): none of this class's own.
    List<Timer> timers = new ArrayList<>(registry.find("redlock.acquire").timers());
    assertThat(timers)
        .extracting(t -> t.getId().getTag("outcome"))
        .containsExactlyInAnyOrder("acquired", "unavailable");
    for (Timer timer : timers) {
      assertThat(timer.getId().getTags())
          .extracting(Tag::getKey)
          .contains("error")
          .doesNotContain("attempts", "ttl.ms");
    }
    assertThat(registry.get("redlock.acquire").tag("outcome", "acquired").timer().count())
        .isEqualTo(3);
    assertThat(registry.find("redlock.acquisition").meters()).isEmpty();
    assertThat(
            registry.get("redlock.acquire.attempts").tag("outcome", "acquired").summary().count())
        .as("the attempts are still this class's")
        .isEqualTo(3);
  }

  @Test
  void theObservationCarriesTheTagsAndWithResourceTagsTheResource() {
    List<Observation.Context> stopped = new ArrayList<>();
    RedlockMetrics metrics =
        RedlockMetrics.builder(registry)
            .observationRegistry(observedBy(stopped))
            .tags(Tags.of("redlock", "orders"))
            .resourceTags(true)
            .build();
    metrics.acquireStarted(
        new RedlockEvent.AcquireStarted(1, List.of("orders:42"), Duration.ofSeconds(10)));
    metrics.acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 5, null));
    Observation.Context acquisition = stopped.get(0);
    assertThat(acquisition.getLowCardinalityKeyValue("redlock").getValue()).isEqualTo("orders");
    assertThat(acquisition.getLowCardinalityKeyValue("resource").getValue()).isEqualTo("orders:42");
    assertThat(registry.find("redlock.acquire").timers()).as("timed by the observation").isEmpty();
  }

  @Test
  void aHeldLeaseWhoseEndWasDroppedLeavesTheHeldTimerOnceInvalid() {
    MockClock clock = new MockClock();
    SimpleMeterRegistry timed = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    RedlockMetrics metrics = RedlockMetrics.builder(timed).build();
    StubLease releasedUnseen = new StubLease("a");
    StubLease stillHeld = new StubLease("b");
    metrics.acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 3, releasedUnseen));
    metrics.acquireFinished(finished(2, AcquireOutcome.ACQUIRED, 1, 3, stillHeld));
    LongTaskTimer held = timed.get("redlock.lease.held").longTaskTimer();
    assertThat(held.activeTasks()).isEqualTo(2);

    releasedUnseen.valid = false; // released, and its Release event was dropped
    NodeOutcome vote = new NodeOutcome(0, "127.0.0.1:7000", Vote.GRANTED, "");
    metrics.nodeVoted(new RedlockEvent.NodeVote(Operation.ACQUIRE, vote));
    assertThat(held.activeTasks()).as("no sweep within a second of the last").isEqualTo(2);

    clock.add(Duration.ofSeconds(1));
    metrics.nodeVoted(new RedlockEvent.NodeVote(Operation.ACQUIRE, vote));
    assertThat(held.activeTasks()).as("the invalid lease left, the valid one stays").isEqualTo(1);

    metrics.released(new RedlockEvent.Release(stillHeld, Duration.ofMillis(1)));
    assertThat(held.activeTasks()).isZero();
  }

  @Test
  void anObservationWhoseEndWasDroppedIsStoppedAsUnknownAfterAbandonAfter() {
    MockClock clock = new MockClock();
    SimpleMeterRegistry timed = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
    List<Observation.Context> stopped = new ArrayList<>();
    RedlockMetrics metrics =
        RedlockMetrics.builder(timed)
            .observationRegistry(observedBy(stopped))
            .abandonAfter(Duration.ofMinutes(1))
            .build();
    metrics.acquireStarted(
        new RedlockEvent.AcquireStarted(1, List.of("a"), Duration.ofSeconds(30)));
    clock.add(Duration.ofSeconds(50));
    metrics.acquireStarted(
        new RedlockEvent.AcquireStarted(2, List.of("b"), Duration.ofSeconds(30)));
    NodeOutcome vote = new NodeOutcome(0, "127.0.0.1:7000", Vote.GRANTED, "");

    clock.add(Duration.ofSeconds(11)); // 61 s after the first started, 11 s after the second
    metrics.nodeVoted(new RedlockEvent.NodeVote(Operation.ACQUIRE, vote));
    assertThat(stopped).hasSize(1);
    assertThat(stopped.get(0).getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("unknown");

    metrics.acquireFinished(finished(2, AcquireOutcome.ACQUIRED, 1, 5, null));
    assertThat(stopped).hasSize(2);
    assertThat(stopped.get(1).getLowCardinalityKeyValue("outcome").getValue())
        .isEqualTo("acquired");
    metrics.acquireFinished(finished(1, AcquireOutcome.ACQUIRED, 1, 5, null));
    assertThat(stopped).as("a late end of an abandoned one is ignored").hasSize(2);
  }

  @Test
  void abandonAfterMustBePositive() {
    RedlockMetrics.Builder builder = RedlockMetrics.builder(registry);
    assertThatThrownBy(() -> builder.abandonAfter(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("abandonAfter")
        .hasMessageContaining("positive");
    assertThatThrownBy(() -> builder.abandonAfter(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("abandonAfter");
  }
}
