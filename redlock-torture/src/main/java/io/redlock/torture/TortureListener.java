package io.redlock.torture;

import io.redlock.NodeOutcome;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.List;

/**
 * Hears what a torture run does while it runs, for a console or live checks of its own: the
 * servers it started, its progress, every fault, and what clients in this JVM acquire, fail
 * to acquire and hold. Every method does nothing by default.
 *
 * <p>Methods are called from the run's threads (clients, nemesis, progress) at once, and must
 * be thread-safe and quick. Clients in other processes ({@link TortureOptions#processes()})
 * report only {@link #progress}, {@link #fault} and {@link #started}.
 */
public interface TortureListener {

  /** Nothing: the run's own result is all that is wanted. */
  TortureListener NONE = new TortureListener() {};

  /**
   * The servers are up and declared fresh, the first lock was taken, and the clients and the
   * nemesis start now: {@code startNanos} ({@link System#nanoTime()}) is the run's time zero.
   */
  default void started(RedisServers servers, long startNanos) {}

  /** How the run is doing, about once a second. */
  default void progress(TortureRun.Progress progress) {}

  /** A fault (or one phase of it) was injected, as recorded in the result. */
  default void fault(FaultRecord fault) {}

  /** {@code client} acquired a lease; {@code waited} is how long its acquire call took. */
  default void acquired(String client, Duration waited) {}

  /**
   * {@code client}'s acquire call, begun at {@code startNanos}, failed; {@code outcomes} are
   * each node's votes in its last attempt.
   */
  default void failed(String client, List<NodeOutcome> outcomes, long startNanos) {}

  /**
   * {@code client} now holds a lease on {@code resource}, or, with {@code null}, holds none
   * any more (called right before the release).
   */
  default void holding(String client, String resource) {}

  /**
   * {@code client} now holds a lease on {@code resource}, valid until {@code validUntilNanos}
   * ({@link System#nanoTime()}) as the client computed it. By default the same as {@link
   * #holding(String, String)}; a listener that judges overlaps overrides this one, since a
   * holder paused past {@code validUntilNanos} no longer holds a valid lease.
   */
  default void holding(String client, String resource, long validUntilNanos) {
    holding(client, resource);
  }
}
