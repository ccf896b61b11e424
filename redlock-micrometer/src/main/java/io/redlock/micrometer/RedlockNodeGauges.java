package io.redlock.micrometer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlock.NodeState;
import io.redlock.Redlock;
import java.util.Objects;

/**
 * Gauges of the nodes of one {@link Redlock}, read from {@link Redlock#nodeStates()} each time
 * the registry asks: no listener, so they serve any {@code Redlock}, however it was built.
 *
 * <pre>{@code
 * new RedlockNodeGauges(redlock).bindTo(meterRegistry);
 * }</pre>
 *
 * <ul>
 *   <li>{@code redlock.nodes.reachable}: the nodes that answered their last probe;
 *   <li>{@code redlock.nodes.counted}: the nodes that answer and whose votes count
 *       ({@link NodeState.Status#COUNTED}); locks can be granted while this is at least
 *       {@code redlock.nodes.quorum};
 *   <li>{@code redlock.nodes.quorum}: how many nodes must grant a lock ({@code N / 2 + 1}).
 * </ul>
 *
 * <p>An alert on {@code redlock.nodes.counted < redlock.nodes.quorum} fires while no lock can
 * be granted; on {@code redlock.nodes.reachable < redlock.nodes.quorum}, while that is because
 * nodes do not answer (and not because the restart guard holds them back).
 *
 * <p>The gauges hold the {@code Redlock} strongly: bind them for as long as it lives. Once it
 * is closed they show what it last knew. Thread-safe.
 *
 * @since 0.1.0
 */
public final class RedlockNodeGauges implements MeterBinder {
  private final Redlock redlock;
  private final Tags tags;

  /** Gauges of {@code redlock}'s nodes, without tags of their own. */
  public RedlockNodeGauges(Redlock redlock) {
    this(redlock, Tags.empty());
  }

  /**
   * Gauges of {@code redlock}'s nodes with {@code tags} added to each, for example to tell two
   * {@code Redlock}s of one application apart ({@code Tag.of("redlock", "orders")}).
   */
  public RedlockNodeGauges(Redlock redlock, Iterable<Tag> tags) {
    this.redlock = Objects.requireNonNull(redlock, "redlock");
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Gauge.builder("redlock.nodes.reachable", redlock, r -> count(r, false))
        .description("Nodes that answered their last probe")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("redlock.nodes.counted", redlock, r -> count(r, true))
        .description("Nodes that answer and whose votes count toward the quorum")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("redlock.nodes.quorum", redlock, Redlock::quorum)
        .description("Nodes that must grant a lock")
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }

  private static double count(Redlock redlock, boolean counted) {
    int n = 0;
    for (NodeState state : redlock.nodeStates()) {
      if (counted ? state.status() == NodeState.Status.COUNTED : state.reachable()) {
        n++;
      }
    }
    return n;
  }
}
