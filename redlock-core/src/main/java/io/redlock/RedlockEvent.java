package io.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Redlock} tells its {@link RedlockListener}s: small immutable values that the
 * library creates only when a listener is registered.
 *
 * <p>Durations are measured on the monotonic clock where the event happened, not when a
 * listener reads it. Resource names are included because a listener may want them; keep them
 * out of metric tags unless their number is bounded.
 *
 * @since 0.1.0
 */
public sealed interface RedlockEvent {

  /** How an acquisition ended. */
  enum AcquireOutcome {
    /** A lease was acquired. */
    ACQUIRED,
    /** The retry budget (or the one attempt of a {@code try} method) was spent. */
    UNAVAILABLE,
    /** The caller gave up first: cancelled, interrupted, timed out, or the Redlock closed. */
    CANCELLED
  }

  /** How an extension ended. */
  enum ExtendOutcome {
    /** A majority confirmed it in time: the validity moved. */
    EXTENDED,
    /** Too few nodes answered: the lease keeps its old deadline and may be extended again. */
    UNCONFIRMED,
    /** The lease was found lost (or was already): see {@link LeaseLost} for why. */
    LOST
  }

  /** Which kind of round a node voted in. */
  enum Operation {
    /** An acquisition attempt: {@code SET NX PX}. */
    ACQUIRE,
    /** An extension: compare-and-{@code PEXPIRE}. */
    EXTEND,
    /**
     * The confirmation round of a fenced acquisition: raising the fencing counters to the
     * token. A node whose counters are not trusted votes {@code UNTRUSTED}.
     *
     * @since 0.1.0
     */
    FENCE
  }

  /**
   * An acquisition started, on the thread that asked for it (so a tracing context of that
   * thread is current).
   *
   * @param acquisition an id that the matching {@link AcquireFinished} carries too
   * @param resources the resources asked for
   * @param ttl the ttl asked for
   */
  record AcquireStarted(long acquisition, List<String> resources, Duration ttl)
      implements RedlockEvent {
    public AcquireStarted {
      Objects.requireNonNull(resources, "resources");
      Objects.requireNonNull(ttl, "ttl");
    }
  }

  /**
   * An acquisition ended.
   *
   * @param acquisition the id of its {@link AcquireStarted}
   * @param resources the resources asked for
   * @param outcome how it ended
   * @param attempts attempts made (0 if cancelled before the first one was decided)
   * @param elapsed from the start of the acquisition to its end
   * @param lease the lease, for {@link AcquireOutcome#ACQUIRED}; {@code null} otherwise
   */
  record AcquireFinished(
      long acquisition,
      List<String> resources,
      AcquireOutcome outcome,
      int attempts,
      Duration elapsed,
      Lease lease)
      implements RedlockEvent {
    public AcquireFinished {
      Objects.requireNonNull(resources, "resources");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(elapsed, "elapsed");
    }
  }

  /**
   * One node's final vote in one round, once the round settled (every node answered or timed
   * out). A node that the restart guard holds back is not asked and votes
   * {@link NodeOutcome.Vote#ERROR}, its detail saying so.
   *
   * @param operation the kind of round
   * @param outcome the node's index, address (no credentials) and vote
   */
  record NodeVote(Operation operation, NodeOutcome outcome) implements RedlockEvent {
    public NodeVote {
      Objects.requireNonNull(operation, "operation");
      Objects.requireNonNull(outcome, "outcome");
    }
  }

  /**
   * An extension ended (manual or by the watchdog).
   *
   * @param lease the lease
   * @param outcome how it ended
   * @param elapsed from the start of the extension's round to its decision
   */
  record Extension(Lease lease, ExtendOutcome outcome, Duration elapsed) implements RedlockEvent {
    public Extension {
      Objects.requireNonNull(lease, "lease");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(elapsed, "elapsed");
    }
  }

  /**
   * A lease became lost. With a listener registered, every lease's deadline is watched, so
   * this comes when the validity runs out even if nobody looks at the lease.
   *
   * @param lease the lease
   * @param cause why
   * @param reason the explanation, as in the {@link LeaseLostException}'s message
   */
  record LeaseLost(Lease lease, LossCause cause, String reason) implements RedlockEvent {
    public LeaseLost {
      Objects.requireNonNull(lease, "lease");
      Objects.requireNonNull(cause, "cause");
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * A lease's release round ended: every node answered or timed out. Comes once per lease
   * that was released (also one released after it was lost, or by {@link Redlock#close()}).
   *
   * @param lease the lease
   * @param elapsed from the start of the release to the last answer or timeout
   */
  record Release(Lease lease, Duration elapsed) implements RedlockEvent {
    public Release {
      Objects.requireNonNull(lease, "lease");
      Objects.requireNonNull(elapsed, "elapsed");
    }
  }

  /**
   * The restart guard holds a node back: it restarted, or its clock jumped, too recently,
   * and its votes do not count until {@link NodeCounted}.
   *
   * @param index the node's position in {@link RedlockConfig#nodes()}
   * @param node the node's address, without credentials
   * @param reason why, for people
   */
  record NodeHeldBack(int index, String node, String reason) implements RedlockEvent {
    public NodeHeldBack {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * A node that the restart guard held back counts again.
   *
   * @param index the node's position in {@link RedlockConfig#nodes()}
   * @param node the node's address, without credentials
   */
  record NodeCounted(int index, String node) implements RedlockEvent {
    public NodeCounted {
      Objects.requireNonNull(node, "node");
    }
  }
}
