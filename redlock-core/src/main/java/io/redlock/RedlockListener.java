package io.redlock;

/**
 * Hears what a {@link Redlock} does: acquisitions, each node's votes, extensions, losses,
 * releases and the restart guard's decisions. Metrics and tracing modules (such as
 * {@code redlock-micrometer}) implement it; register one with
 * {@link RedlockConfig.Builder#listener(RedlockListener)}.
 *
 * <p>Every method has an empty default, so an implementation overrides only what it needs.
 *
 * <p><b>How listeners are called.</b> {@link #acquireStarted} runs on the thread that asked
 * for the acquisition, before any request leaves, so that a tracing listener sees the
 * caller's context. Every other event is delivered on a thread of the library's own for
 * each listener ({@code redlock-events}), in the order the events happened, never on a
 * transport thread, the timer or another caller's thread. So a listener that is slow or
 * blocks cannot hold up the lock or another listener: it delays only its own events, and
 * once 16,384 wait for it, its newer events are dropped and counted, with a WARN the first
 * time. Each call is guarded: whatever a
 * listener throws is caught and logged (at WARN the first time per listener, then at DEBUG),
 * and the lock goes on as if the listener were not there. Listeners run outside every lock of
 * the library, after the state change they report. Events reach the listeners a moment after
 * they happen; a listener that needs to act on a loss at once should use
 * {@link Lease#onLost} instead.
 *
 * <p>With no listener registered no event object is created: each place that could report
 * checks one final field.
 *
 * <p>Implementations must be thread-safe: events arrive on several threads at once, and
 * events of different leases in no particular order.
 *
 * @since 0.1.0
 */
public interface RedlockListener {

  /** An acquisition started; called on the thread that asked for it. */
  default void acquireStarted(RedlockEvent.AcquireStarted event) {}

  /** An acquisition ended: acquired, unavailable or cancelled. */
  default void acquireFinished(RedlockEvent.AcquireFinished event) {}

  /** A node's final vote in an acquisition attempt or an extension. */
  default void nodeVoted(RedlockEvent.NodeVote event) {}

  /** An extension ended. */
  default void extended(RedlockEvent.Extension event) {}

  /** A lease became lost. */
  default void leaseLost(RedlockEvent.LeaseLost event) {}

  /** A lease's release round ended. */
  default void released(RedlockEvent.Release event) {}

  /** The restart guard started holding a node back. */
  default void nodeHeldBack(RedlockEvent.NodeHeldBack event) {}

  /** A node the restart guard held back counts again. */
  default void nodeCounted(RedlockEvent.NodeCounted event) {}
}
