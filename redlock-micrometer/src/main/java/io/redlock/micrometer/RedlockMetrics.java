package io.redlock.micrometer;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Lease;
import io.redlock.LossCause;
import io.redlock.NodeOutcome;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockEvent.AcquireOutcome;
import io.redlock.RedlockEvent.ExtendOutcome;
import io.redlock.RedlockEvent.Operation;
import io.redlock.RedlockListener;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters and observations for a {@link io.redlock.Redlock}: a
 * {@link RedlockListener} to register on its configuration.
 *
 * <pre>{@code
 * RedlockMetrics metrics = RedlockMetrics.builder(meterRegistry)
 *     .observationRegistry(observationRegistry)   // optional: spans through a tracing bridge
 *     .build();
 * Redlock redlock = Redlock.create(RedlockConfig.builder()
 *     .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
 *     .listener(metrics)
 *     .build());
 * }</pre>
 *
 * <p>Meters (tag values in lower case):
 * <ul>
 *   <li>{@code redlock.acquire}: timer, from the start of an acquisition to its end, tagged
 *       {@code outcome} ({@code acquired}, {@code unavailable}, {@code cancelled}); with an
 *       {@link ObservationRegistry}, the observation's meter handler makes it instead (see
 *       below);
 *   <li>{@code redlock.acquire.attempts}: distribution summary, attempts per acquisition,
 *       tagged {@code outcome};
 *   <li>{@code redlock.node.votes}: counter, one per node and round, tagged {@code node} (its
 *       address, without credentials), {@code operation} ({@code acquire}; {@code fence}, the
 *       confirmation round of a fenced acquisition; {@code extend}) and {@code outcome}
 *       ({@code granted}, {@code taken}, {@code timeout}, {@code error}, {@code held_back}: a
 *       node the restart guard does not count now, not asked; {@code untrusted}: a node whose
 *       fencing counters are not trusted, in a {@code fence} round; {@code stalled}: a node
 *       that stopped answering or whose backlog is full, not asked), counted once the round
 *       settled;
 *   <li>{@code redlock.lease.extend}: timer, tagged {@code outcome} ({@code extended},
 *       {@code unconfirmed}, {@code lost});
 *   <li>{@code redlock.lease.lost}: counter, tagged {@code cause} (a {@link LossCause}:
 *       {@code expired}, {@code not_held}, {@code confirmed_too_late}, {@code unconfirmed},
 *       {@code closed});
 *   <li>{@code redlock.lease.held}: long-task timer, the leases held now and for how long;
 *   <li>{@code redlock.release}: timer, from the start of a release to the last node's answer;
 *   <li>{@code redlock.nodes.held.back}: gauge, the nodes the restart guard holds back now.
 * </ul>
 * Resource names are not tags unless {@link Builder#resourceTags(boolean)} asks for them:
 * their number is unbounded in most services. Node addresses are, since the configuration
 * bounds them.
 *
 * <p>With an {@link ObservationRegistry}, each acquisition is an {@link Observation} named
 * {@code redlock.acquire} (contextual name {@code redlock acquire}), started on the thread that
 * asks for the lock, so that it is a child of the observation current there, and stopped when
 * the acquisition ends, with the low-cardinality key values {@code outcome} (as above, or
 * {@code unknown}: see below), the {@link Builder#tags(Iterable) tags} and, with {@link
 * Builder#resourceTags(boolean)}, {@code resource}; and the high-cardinality key values
 * {@code attempts} and {@code ttl.ms}. A tracing bridge turns it into a span. The timer
 * {@code redlock.acquire} is then the one the registry's meter handler makes of the
 * observation (Micrometer's {@code DefaultMeterObservationHandler}, which Spring Boot
 * registers; it adds the tag {@code error}, and a long-task timer {@code
 * redlock.acquire.active}), and this class records none of its own: one timer per
 * acquisition, not two. An observation registry without a meter handler therefore gives spans
 * and no acquisition timer. Whether acquisitions are observed is decided when this is built,
 * by whether the registry has any handler then ({@link ObservationRegistry#isNoop()}).
 *
 * <p>Every listener method is quick and never blocks: it updates meters, as Micrometer meters
 * are made to be updated on any thread.
 *
 * <p><b>Dropped events.</b> A {@code Redlock} drops a listener's events when too many wait for
 * it, and those that come after it was closed (see {@link RedlockListener}), so the event that
 * ends a held lease or an observation may never come. Such entries are swept on later events:
 * at most once a second (by the meter registry's clock), on any event but
 * {@code acquireStarted} (which runs on the caller's thread), a lease that is
 * no longer {@linkplain Lease#isValid() valid} leaves {@code redlock.lease.held}, and an
 * observation open for longer than {@link Builder#abandonAfter(Duration)} is stopped with
 * {@code outcome} {@code unknown}. Once no event comes any more (the {@code Redlock} closed),
 * nothing sweeps them.
 *
 * <p>Thread-safe. One instance serves one {@code Redlock}: the held-back gauge counts the
 * nodes of one configuration.
 *
 * @since 0.1.0
 */
public final class RedlockMetrics implements RedlockListener {
  /** How often, at most, entries whose ending event never came are looked for. */
  private static final long SWEEP_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The default of {@link Builder#abandonAfter(Duration)}. */
  static final Duration DEFAULT_ABANDON_AFTER = Duration.ofMinutes(10);

  private final MeterRegistry registry;
  private final ObservationRegistry observations;

  /** Whether acquisitions are observations, timed by the registry's meter handler. */
  private final boolean observed;

  private final boolean resourceTags;
  private final Tags tags;

  private final Map<AcquireOutcome, Timer> acquireTimers = new EnumMap<>(AcquireOutcome.class);
  private final Map<AcquireOutcome, DistributionSummary> attemptSummaries =
      new EnumMap<>(AcquireOutcome.class);
  private final Map<ExtendOutcome, Timer> extendTimers = new EnumMap<>(ExtendOutcome.class);
  private final Map<LossCause, Counter> lostCounters = new EnumMap<>(LossCause.class);
  private final Timer releaseTimer;
  private final LongTaskTimer heldTimer;
  private final Map<String, Counter> voteCounters = new ConcurrentHashMap<>();
  private final Map<Lease, LongTaskTimer.Sample> held = new ConcurrentHashMap<>();
  private final Map<Long, Open> acquiring = new ConcurrentHashMap<>();
  private final Clock clock;
  private final long abandonAfterNanos;
  private final AtomicLong nextSweep;

  /** An observation of an acquisition that has not ended, and when it started. */
  private record Open(Observation observation, long startNanos) {}

  /** The indices of the nodes held back now; the gauge reads its size. */
  private final Set<Integer> heldBack = ConcurrentHashMap.newKeySet();

  private RedlockMetrics(Builder b) {
    this.registry = b.registry;
    this.observations = b.observations;
    this.observed = !b.observations.isNoop();
    this.resourceTags = b.resourceTags;
    this.tags = b.tags;
    this.clock = registry.config().clock();
    this.abandonAfterNanos =
        b.abandonAfter.compareTo(Duration.ofDays(365)) > 0
            ? Duration.ofDays(365).toNanos()
            : b.abandonAfter.toNanos();
    this.nextSweep = new AtomicLong(clock.monotonicTime() + SWEEP_INTERVAL_NANOS);
    for (AcquireOutcome outcome : AcquireOutcome.values()) {
      if (!observed) {
        acquireTimers.put(outcome, acquireTimer(outcome, Tags.empty()));
      }
      attemptSummaries.put(outcome, attemptSummary(outcome, Tags.empty()));
    }
    for (ExtendOutcome outcome : ExtendOutcome.values()) {
      extendTimers.put(outcome, extendTimer(outcome, Tags.empty()));
    }
    for (LossCause cause : LossCause.values()) {
      lostCounters.put(cause, lostCounter(cause, Tags.empty()));
    }
    releaseTimer = releaseTimer(Tags.empty());
    heldTimer = heldTimer(Tags.empty());
    Gauge.builder("redlock.nodes.held.back", heldBack, Set::size)
        .description("Nodes the restart guard holds back now: their votes do not count")
        .tags(tags)
        .register(registry);
  }

  /** A builder for metrics registered in {@code registry}. */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  @Override
  public void acquireStarted(RedlockEvent.AcquireStarted event) {
    if (!observed) {
      return;
    }
    // No sweep here: this runs on the caller's thread, the others on the listener's.
    Observation observation =
        Observation.createNotStarted("redlock.acquire", observations)
            .contextualName("redlock acquire")
            .highCardinalityKeyValue("ttl.ms", Long.toString(event.ttl().toMillis()));
    for (Tag tag : tags) {
      observation.lowCardinalityKeyValue(tag.getKey(), tag.getValue());
    }
    if (resourceTags) {
      observation.lowCardinalityKeyValue("resource", String.join(",", event.resources()));
    }
    acquiring.put(event.acquisition(), new Open(observation.start(), clock.monotonicTime()));
  }

  @Override
  public void acquireFinished(RedlockEvent.AcquireFinished event) {
    sweepIfDue();
    Tags resource = resourceTags(event.resources());
    if (resourceTags) {
      if (!observed) {
        acquireTimer(event.outcome(), resource).record(event.elapsed());
      }
      attemptSummary(event.outcome(), resource).record(event.attempts());
    } else {
      if (!observed) {
        acquireTimers.get(event.outcome()).record(event.elapsed());
      }
      attemptSummaries.get(event.outcome()).record(event.attempts());
    }
    if (event.lease() != null) {
      LongTaskTimer timer = resourceTags ? heldTimer(resource) : heldTimer;
      held.put(event.lease(), timer.start());
    }
    Open open = acquiring.remove(event.acquisition());
    if (open != null) {
      open.observation().lowCardinalityKeyValue("outcome", lower(event.outcome()));
      open.observation().highCardinalityKeyValue("attempts", Integer.toString(event.attempts()));
      open.observation().stop();
    }
  }

  @Override
  public void nodeVoted(RedlockEvent.NodeVote event) {
    sweepIfDue();
    NodeOutcome outcome = event.outcome();
    String key = outcome.index() + "/" + event.operation() + "/" + outcome.vote();
    voteCounters.computeIfAbsent(key, k -> voteCounter(outcome, event.operation())).increment();
  }

  @Override
  public void extended(RedlockEvent.Extension event) {
    sweepIfDue();
    if (resourceTags) {
      extendTimer(event.outcome(), resourceTags(event.lease().resources())).record(event.elapsed());
    } else {
      extendTimers.get(event.outcome()).record(event.elapsed());
    }
  }

  @Override
  public void leaseLost(RedlockEvent.LeaseLost event) {
    sweepIfDue();
    if (resourceTags) {
      lostCounter(event.cause(), resourceTags(event.lease().resources())).increment();
    } else {
      lostCounters.get(event.cause()).increment();
    }
    stopHeld(event.lease());
  }

  @Override
  public void released(RedlockEvent.Release event) {
    sweepIfDue();
    if (resourceTags) {
      releaseTimer(resourceTags(event.lease().resources())).record(event.elapsed());
    } else {
      releaseTimer.record(event.elapsed());
    }
    stopHeld(event.lease());
  }

  @Override
  public void nodeHeldBack(RedlockEvent.NodeHeldBack event) {
    sweepIfDue();
    heldBack.add(event.index());
  }

  @Override
  public void nodeCounted(RedlockEvent.NodeCounted event) {
    sweepIfDue();
    heldBack.remove(event.index());
  }

  /**
   * Once per {@link #SWEEP_INTERVAL_NANOS} at most (one caller wins the turn), on the
   * listener's thread, never a caller's ({@link #acquireStarted} does not sweep): ends what an
   * event that was dropped should have ended. A lease that is not valid is not held, whatever
   * became of its event; an acquisition lasts its retry budget, so an observation open for
   * longer than {@code abandonAfter} lost its end.
   */
  private void sweepIfDue() {
    long now = clock.monotonicTime();
    long due = nextSweep.get();
    if (now - due < 0 || !nextSweep.compareAndSet(due, now + SWEEP_INTERVAL_NANOS)) {
      return;
    }
    for (Lease lease : held.keySet()) {
      if (!lease.isValid()) {
        stopHeld(lease);
      }
    }
    for (Map.Entry<Long, Open> entry : acquiring.entrySet()) {
      Open open = entry.getValue();
      if (now - open.startNanos() > abandonAfterNanos && acquiring.remove(entry.getKey(), open)) {
        open.observation().lowCardinalityKeyValue("outcome", "unknown");
        open.observation().stop();
      }
    }
  }

  private void stopHeld(Lease lease) {
    LongTaskTimer.Sample sample = held.remove(lease);
    if (sample != null) {
      sample.stop();
    }
  }

  private Tags resourceTags(java.util.List<String> resources) {
    return resourceTags ? Tags.of("resource", String.join(",", resources)) : Tags.empty();
  }

  private Timer acquireTimer(AcquireOutcome outcome, Tags extra) {
    return Timer.builder("redlock.acquire")
        .description("Acquisitions, from the first attempt to the outcome")
        .tags(tags)
        .tags(extra)
        .tag("outcome", lower(outcome))
        .register(registry);
  }

  private DistributionSummary attemptSummary(AcquireOutcome outcome, Tags extra) {
    return DistributionSummary.builder("redlock.acquire.attempts")
        .description("Attempts per acquisition")
        .tags(tags)
        .tags(extra)
        .tag("outcome", lower(outcome))
        .register(registry);
  }

  private Timer extendTimer(ExtendOutcome outcome, Tags extra) {
    return Timer.builder("redlock.lease.extend")
        .description("Extensions, manual or automatic, from the request to the outcome")
        .tags(tags)
        .tags(extra)
        .tag("outcome", lower(outcome))
        .register(registry);
  }

  private Counter lostCounter(LossCause cause, Tags extra) {
    return Counter.builder("redlock.lease.lost")
        .description("Leases lost while held, by cause")
        .tags(tags)
        .tags(extra)
        .tag("cause", lower(cause))
        .register(registry);
  }

  private Timer releaseTimer(Tags extra) {
    return Timer.builder("redlock.release")
        .description("Releases, from the request to the last node's answer or timeout")
        .tags(tags)
        .tags(extra)
        .register(registry);
  }

  private LongTaskTimer heldTimer(Tags extra) {
    return LongTaskTimer.builder("redlock.lease.held")
        .description("Leases held now, from acquisition to release or loss")
        .tags(tags)
        .tags(extra)
        .register(registry);
  }

  private Counter voteCounter(NodeOutcome outcome, Operation operation) {
    return Counter.builder("redlock.node.votes")
        .description(
            "Each node's vote in each acquisition attempt, fencing confirmation and extension")
        .tags(tags)
        .tag("node", outcome.node())
        .tag("operation", lower(operation))
        .tag("outcome", lower(outcome.vote()))
        .register(registry);
  }

  private static String lower(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  /**
   * Settings for {@link RedlockMetrics}. Not thread-safe; build on one thread.
   */
  public static final class Builder {
    private final MeterRegistry registry;
    private ObservationRegistry observations = ObservationRegistry.NOOP;
    private boolean resourceTags;
    private Tags tags = Tags.empty();
    private Duration abandonAfter = DEFAULT_ABANDON_AFTER;

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Where acquisitions are observed; none by default ({@link ObservationRegistry#NOOP}),
     * and then no observation is created and this class times acquisitions itself. With a
     * registry that has handlers, the timer {@code redlock.acquire} is the one its meter
     * handler makes (see the class comment): give it a registry with one.
     */
    public Builder observationRegistry(ObservationRegistry observations) {
      this.observations = Objects.requireNonNull(observations, "observationRegistry");
      return this;
    }

    /**
     * Whether meters are also tagged {@code resource} with the resource names (several joined
     * by commas); off by default. Turn it on only for a small, fixed set of names: each name
     * makes a time series of every meter.
     */
    public Builder resourceTags(boolean resourceTags) {
      this.resourceTags = resourceTags;
      return this;
    }

    /**
     * Tags added to every meter, for example to tell two {@code Redlock}s of one application
     * apart ({@code Tag.of("redlock", "orders")}).
     */
    public Builder tags(Iterable<Tag> tags) {
      this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
      return this;
    }

    /**
     * How long an acquisition's observation may stay open before it is taken as one whose end
     * was dropped ("Dropped events" in the class comment) and stopped with {@code outcome}
     * {@code unknown}; 10 minutes by default. Set it above the longest acquisition of the
     * {@code Redlock}: its {@link RedlockConfig#maxWait()} plus a node timeout.
     *
     * @throws IllegalArgumentException if {@code abandonAfter} is zero or negative
     */
    public Builder abandonAfter(Duration abandonAfter) {
      Objects.requireNonNull(abandonAfter, "abandonAfter");
      if (abandonAfter.isZero() || abandonAfter.isNegative()) {
        throw new IllegalArgumentException(
            "abandonAfter is "
                + abandonAfter
                + ": it must be positive, above the longest acquisition (maxWait plus a node"
                + " timeout)");
      }
      this.abandonAfter = abandonAfter;
      return this;
    }

    /** Registers the meters and returns the listener to give to {@link RedlockConfig.Builder#listener}. */
    public RedlockMetrics build() {
      return new RedlockMetrics(this);
    }
  }
}
