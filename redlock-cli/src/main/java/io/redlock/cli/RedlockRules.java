package io.redlock.cli;

/**
 * The quorum as the commands that only look at nodes ({@code status}, {@code doctor},
 * {@code demo}) count it, from a number of nodes they found rather than a configuration:
 * what {@link io.redlock.RedlockConfig#quorum()} gives for that many nodes.
 *
 * <p>Stateless, so thread-safe.
 */
final class RedlockRules {
  private RedlockRules() {}

  /** The majority of {@code nodes} that must grant a lock: {@code nodes / 2 + 1}. */
  static int quorum(int nodes) {
    return nodes / 2 + 1;
  }
}
