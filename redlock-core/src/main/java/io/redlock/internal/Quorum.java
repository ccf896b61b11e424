package io.redlock.internal;

/**
 * The pure quorum decision: with {@code n} nodes, a majority of {@code n / 2 + 1} is needed.
 *
 * <p>A round is decided as soon as its outcome is certain: reached once {@code quorum} nodes
 * granted, unreachable once so many failed that the nodes still pending cannot make up the
 * difference. Kept apart from any I/O so that it can be tested exhaustively.
 */
public final class Quorum {
  /** Where a round stands. */
  public enum Decision {
    /** Not known yet: the pending nodes can still tip it either way. */
    PENDING,
    /** A majority granted. */
    REACHED,
    /** Too many nodes failed for a majority to grant. */
    UNREACHABLE
  }

  private Quorum() {}

  /** The majority of {@code nodes}: {@code nodes / 2 + 1}. */
  public static int of(int nodes) {
    if (nodes < 1) {
      throw new IllegalArgumentException("nodes must be 1 or more, got " + nodes);
    }
    return nodes / 2 + 1;
  }

  /** The decision after {@code granted} grants and {@code failed} other answers of {@code n}. */
  public static Decision decide(int nodes, int quorum, int granted, int failed) {
    if (granted >= quorum) {
      return Decision.REACHED;
    }
    if (nodes - failed < quorum) {
      return Decision.UNREACHABLE;
    }
    return Decision.PENDING;
  }
}
