package io.redlock.internal;

import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The identity {@code init} gives a cluster: a random {@code id} and the number of nodes it was
 * given ({@code size}), written into every node's record ({@link NodeRecord#cluster()}, text
 * {@code id/size}). Every client compares it with its own node list, so that two clients that
 * list different nodes (while a cluster moves from 3 to 5 nodes, or with a node list copied
 * wrong) cannot both hold a lock without a word: a client whose node count differs from the
 * declared size, or whose nodes carry different identities, does not use the nodes that
 * disagree ({@link #conflict}).
 *
 * <p>What it does not catch: a node no {@code init} declared (it carries no identity) listed in
 * place of one that was, by a client with the right count. Such a node is new to the cluster,
 * so the restart guard holds it back for a window like any node first seen.
 *
 * <p>An immutable value; thread-safe.
 *
 * @param id the cluster's random id, 12 lower-case hex digits
 * @param size how many nodes {@code init} was given
 */
public record ClusterIdentity(String id, int size) {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** A new identity for a cluster of {@code size} nodes. */
  public static ClusterIdentity create(int size) {
    return new ClusterIdentity(String.format("%012x", RANDOM.nextLong() & 0xffff_ffff_ffffL), size);
  }

  /** Reads {@code id/size}; {@code null} for none ({@code -}, null) or text in no known form. */
  public static ClusterIdentity parse(String text) {
    if (text == null) {
      return null;
    }
    int slash = text.indexOf('/');
    if (slash != 12 || !text.substring(0, slash).matches("[0-9a-f]{12}")) {
      return null;
    }
    try {
      int size = Integer.parseInt(text.substring(slash + 1));
      return size > 0 ? new ClusterIdentity(text.substring(0, slash), size) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The text form, {@code id/size}. */
  public String format() {
    return id + "/" + size;
  }

  /**
   * Why node {@code index} must not be used by a client that lists {@code names} (one per
   * node, in its order), given the identities its nodes carry ({@code null}: none known), or
   * {@code null} when nothing disagrees. A node disagrees when its declared size is not the
   * client's node count, or when its id is not the one most of the client's nodes carry (on a
   * tie, every id in the tie disagrees: the client cannot tell which cluster it meant).
   */
  public static String conflict(int index, List<ClusterIdentity> identities, List<String> names) {
    ClusterIdentity own = identities.get(index);
    if (own == null) {
      return null;
    }
    int listed = names.size();
    if (own.size() != listed) {
      return "'redlock init' declared it one of a cluster of "
          + own.size()
          + " nodes (cluster "
          + own.id()
          + "), but this client lists "
          + listed
          + ": every client of a cluster must list the same nodes (docs/safety.md, the"
          + " cluster identity)";
    }
    Map<String, Integer> counts = new HashMap<>();
    for (ClusterIdentity identity : identities) {
      if (identity != null) {
        counts.merge(identity.id(), 1, Integer::sum);
      }
    }
    if (counts.size() < 2) {
      return null;
    }
    int most = counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    Set<String> leaders = new HashSet<>();
    counts.forEach((id, count) -> leaders.add(count == most ? id : null));
    leaders.remove(null);
    if (leaders.size() == 1 && leaders.contains(own.id())) {
      return null;
    }
    StringBuilder others = new StringBuilder();
    for (int i = 0; i < identities.size(); i++) {
      ClusterIdentity other = identities.get(i);
      if (other != null && !other.id().equals(own.id())) {
        others.append(others.length() == 0 ? "" : ", ").append(names.get(i));
        others.append(" (cluster ").append(other.id()).append(')');
      }
    }
    return "it belongs to cluster "
        + own.id()
        + " but "
        + others
        + " to another: this client's node list mixes clusters (each 'redlock init' declares"
        + " one)";
  }
}
