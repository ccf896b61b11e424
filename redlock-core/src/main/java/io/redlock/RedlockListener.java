package io.redlock;

/**
 * Hears what a {@link Redlock} does: acquisitions, each node's votes, extensions, losses,
 * releases and the restart guard's decisions. Metrics and tracing modules (such as
 * {@code redlock-micrometer}) implement it; register one with
 * {@link RedlockConfig.Builder#listener(RedlockListener)}.
 *
 * <p>Every method has an empty default, so an implementation overrides only what it needs.
 *
 * <p><b>How listeners are called.</b> Inline, on the thread where the event happens (the
 * caller's thread for {@link #acquireStarted}, otherwise the library's timer thread or the
 * transport thread that delivered a node's answer), after the state change they report and
 * outside every lock of the library. Each call is guarded: whatever a listener throws is
 * caught and logged (at WARN the first time per listener, then at DEBUG), and the lock goes
 * on as if the listener were not there. A listener must return quickly and must not block
 * (hand slow work to an executor): a listener that blocks cannot make a lease valid longer
 * or leave a key behind, since validity is measured on the monotonic clock from before the
 * first request, but it delays the thread it runs on, and a node whose answers it delays
 * may time out.
 *
 * <p>With no listener registered no event object is created: each place that could report
 * checks one final field.
 *
 * <p>Implementations must be thread-safe: events arrive on several threads at once, and
 * events of different leases in no particular order.
 *
 * @since 0.2.0
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
