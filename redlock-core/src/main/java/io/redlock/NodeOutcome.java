package io.redlock;

import java.io.Serializable;
import java.util.Objects;

/**
 * What one node answered in one round of requests (an acquisition attempt, an extension or a
 * release). Immutable and serializable.
 *
 * @param index the node's position in {@link RedlockConfig#nodes()}
 * @param node the node's address, without credentials
 * @param vote how the node's answer counted
 * @param detail a short explanation for {@code TIMEOUT}, {@code ERROR} (the error text),
 *     {@code HELD_BACK} (why, and for how long) and {@code STALLED} (why, with the figures), or an empty string; for people only: code
 *     acts on {@code vote}
 * @since 0.1.0
 */
public record NodeOutcome(int index, String node, Vote vote, String detail)
    implements Serializable {

  /** How one node's answer counted toward the quorum. */
  public enum Vote {
    /** The node did what was asked: set the key, extended it or deleted it. */
    GRANTED,
    /** The node answered, but the key is held by another token (or, for an extension, gone). */
    TAKEN,
    /** The node did not answer within the node timeout. */
    TIMEOUT,
    /** The node answered with an error, or could not be reached. */
    ERROR,
    /**
     * The node was not asked: the restart guard does not count it now, because it restarted,
     * or its clock jumped or runs fast, less than the guard's window ago, or it has not been
     * probed since it was (re)connected. Counted as a failure by the quorum; the detail says
     * why and for how long.
     */
    HELD_BACK,
    /**
     * Fenced leases only: the node's fencing counters are not trusted now (its state is not
     * known complete, or it may evict keys without a ttl), so its grant or its confirmation
     * does not count toward the majority that chooses and confirms the token; the detail says
     * why. See {@code docs/fencing.md}.
     *
     * @since 0.1.0
     */
    UNTRUSTED,
    /**
     * The node was not asked: the transport set it aside because it is not keeping up (it
     * stopped answering, or the requests waiting on it reached the transport's bound), so
     * that nothing waits on it and nothing piles up for it; it is asked again once it answers.
     * Counted as a failure by the quorum; the detail says which and the figures. See {@link
     * io.redlock.spi.NodeStalledException}.
     *
     * @since 0.1.0
     */
    STALLED,
    /** The round was decided before this node answered. */
    PENDING
  }

  public NodeOutcome {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(vote, "vote");
    Objects.requireNonNull(detail, "detail");
  }

  @Override
  public String toString() {
    return detail.isEmpty() ? node + " " + vote : node + " " + vote + " (" + detail + ")";
  }
}
