package io.redlock.internal;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.LossCause;
import io.redlock.NodeOutcome;
import io.redlock.RedlockEvent;
import io.redlock.RedlockEvent.AcquireOutcome;
import io.redlock.RedlockEvent.ExtendOutcome;
import io.redlock.RedlockEvent.Operation;
import io.redlock.RedlockListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports to the configured {@link RedlockListener}s, each call guarded.
 *
 * <p>The hot path pays one read of the final field {@link #on} per place that could report:
 * every method returns at once when no listener is registered, before it creates anything,
 * and the call sites pass what they already have (no event, no lambda).
 *
 * <p>Where listeners run: {@link #acquireStarted} inline, on the caller's thread before any
 * request leaves (so a tracing listener sees the caller's context, and a listener that blocks
 * there blocks only its own caller); every other event through that listener's own delivery,
 * which in production ({@link #queued}) is an {@link EventQueue} per listener: one thread, in
 * order, bounded. So a listener that blocks or is slow never holds up a transport thread, the
 * timer, another caller, or another listener (a metrics listener that starts something on
 * one event and ends it on another never misses the end because someone else is stuck): the
 * lock goes on, and events beyond that listener's queue are dropped and counted. Every call
 * is outside every monitor of the library, and whatever a listener throws is caught.
 *
 * <p>Thread-safe.
 */
public final class Events {
  private static final Logger log = LoggerFactory.getLogger(Events.class);

  /** Reports nothing. */
  public static final Events NONE = new Events(List.of());

  private final RedlockListener[] listeners;
  private final AtomicBoolean[] warned;
  private final boolean on;
  private final AtomicLong acquisitions = new AtomicLong();
  private final Executor[] delivery;
  private final List<EventQueue> queues;

  /** Listeners called inline, on the thread where each event happens (for simulations). */
  public Events(List<RedlockListener> listeners) {
    this(listeners, List.of());
  }

  /**
   * Listeners each with a queue and a thread of its own (see the class comment), closed by
   * {@link #close()}. With no listener, no thread is started.
   */
  public static Events queued(List<RedlockListener> listeners) {
    List<EventQueue> queues = new java.util.ArrayList<>();
    for (int i = 0; i < listeners.size(); i++) {
      queues.add(new EventQueue());
    }
    return new Events(listeners, queues);
  }

  private Events(List<RedlockListener> listeners, List<EventQueue> queues) {
    this.queues = List.copyOf(queues);
    this.listeners = listeners.toArray(new RedlockListener[0]);
    this.delivery = new Executor[this.listeners.length];
    for (int i = 0; i < delivery.length; i++) {
      delivery[i] = queues.isEmpty() ? Runnable::run : queues.get(i);
    }
    this.warned = new AtomicBoolean[this.listeners.length];
    for (int i = 0; i < warned.length; i++) {
      warned[i] = new AtomicBoolean();
    }
    this.on = this.listeners.length > 0;
  }

  /** Whether any listener is registered. */
  public boolean on() {
    return on;
  }

  /** Reports an acquisition's start; returns its id (0 when nobody listens). */
  long acquireStarted(List<String> resources, long ttlMillis) {
    if (!on) {
      return 0;
    }
    long id = acquisitions.incrementAndGet();
    RedlockEvent.AcquireStarted event =
        new RedlockEvent.AcquireStarted(id, resources, Duration.ofMillis(ttlMillis));
    for (int i = 0; i < listeners.length; i++) { // inline: see the class comment
      callOne(i, l -> l.acquireStarted(event));
    }
    return id;
  }

  /** Reports an acquisition's end: {@code lease} on success, else {@code error}. */
  void acquireFinished(
      long id,
      List<String> resources,
      int attempts,
      long elapsedNanos,
      Lease lease,
      Throwable error) {
    if (!on) {
      return;
    }
    AcquireOutcome outcome =
        error == null
            ? AcquireOutcome.ACQUIRED
            : Futures.unwrap(error) instanceof LockUnavailableException
                ? AcquireOutcome.UNAVAILABLE
                : AcquireOutcome.CANCELLED;
    RedlockEvent.AcquireFinished event =
        new RedlockEvent.AcquireFinished(
            id,
            resources,
            outcome,
            attempts,
            Duration.ofNanos(elapsedNanos),
            error == null ? lease : null);
    each(l -> l.acquireFinished(event));
  }

  /** Reports every node's final vote once {@code round} settled. */
  void votes(Operation operation, Round round) {
    if (!on) {
      return;
    }
    round.settled().thenAccept(result -> votes(operation, result));
  }

  /** Reports every node's final vote in {@code settled}. */
  void votes(Operation operation, Round.Result settled) {
    if (!on) {
      return;
    }
    for (NodeOutcome outcome : settled.outcomes()) {
      RedlockEvent.NodeVote event = new RedlockEvent.NodeVote(operation, outcome);
      each(l -> l.nodeVoted(event));
    }
  }

  void extended(Lease lease, Boolean extended, Throwable error, long elapsedNanos) {
    if (!on) {
      return;
    }
    Throwable cause = error == null ? null : Futures.unwrap(error);
    ExtendOutcome outcome;
    if (cause == null) {
      outcome = Boolean.TRUE.equals(extended) ? ExtendOutcome.EXTENDED : ExtendOutcome.UNCONFIRMED;
    } else if (cause instanceof io.redlock.LeaseLostException) {
      outcome = ExtendOutcome.LOST;
    } else {
      return; // released meanwhile, or a bad ttl: not an extension
    }
    RedlockEvent.Extension event =
        new RedlockEvent.Extension(lease, outcome, Duration.ofNanos(elapsedNanos));
    each(l -> l.extended(event));
  }

  void leaseLost(Lease lease, LossCause cause, String reason) {
    if (!on) {
      return;
    }
    RedlockEvent.LeaseLost event = new RedlockEvent.LeaseLost(lease, cause, reason);
    each(l -> l.leaseLost(event));
  }

  void released(Lease lease, long elapsedNanos) {
    if (!on) {
      return;
    }
    RedlockEvent.Release event = new RedlockEvent.Release(lease, Duration.ofNanos(elapsedNanos));
    each(l -> l.released(event));
  }

  void nodeHeldBack(int index, String node, String reason) {
    if (!on) {
      return;
    }
    RedlockEvent.NodeHeldBack event = new RedlockEvent.NodeHeldBack(index, node, reason);
    each(l -> l.nodeHeldBack(event));
  }

  void nodeCounted(int index, String node) {
    if (!on) {
      return;
    }
    RedlockEvent.NodeCounted event = new RedlockEvent.NodeCounted(index, node);
    each(l -> l.nodeCounted(event));
  }

  private void each(Consumer<RedlockListener> call) {
    for (int i = 0; i < listeners.length; i++) {
      int listener = i;
      delivery[i].execute(() -> callOne(listener, call));
    }
  }

  private void callOne(int i, Consumer<RedlockListener> call) {
    try {
      call.accept(listeners[i]);
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable t) { // a listener's failure is its own, never the lock's
      if (warned[i].compareAndSet(false, true)) {
        log.warn(
            "listener {} failed; the lock goes on (further failures of this listener"
                + " are logged at DEBUG)",
            listeners[i].getClass().getName(),
            t);
      } else {
        log.debug("listener {} failed", listeners[i].getClass().getName(), t);
      }
    }
  }

  /** Delivers what the queues hold, then stops their threads; does not wait. Idempotent. */
  public void close() {
    queues.forEach(EventQueue::close);
  }
}
