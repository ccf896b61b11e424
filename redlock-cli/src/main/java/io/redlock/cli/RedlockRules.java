package io.redlock.cli;

import io.redlock.RedlockConfig;
import java.time.Duration;

/**
 * Two rules of Redlock as the commands that only look at nodes ({@code status},
 * {@code doctor}, {@code demo}) apply them, without a {@code Redlock} instance: the quorum,
 * and how long the restart guard holds a restarted node back. Each is what the core does for
 * the same nodes and configuration ({@code Redlock.quorum()}, the restart guard's window).
 *
 * <p>Stateless, so thread-safe.
 */
final class RedlockRules {
  private RedlockRules() {}

  /** The majority of {@code nodes} that must grant a lock: {@code nodes / 2 + 1}. */
  static int quorum(int nodes) {
    return nodes / 2 + 1;
  }

  /**
   * How long a node must have been up before the restart guard of a Redlock with
   * {@code config} counts it (unless declared fresh or persisting every write): its
   * {@code maxTtl} plus the drift margin of its {@code driftFactor}.
   */
  static Duration guardWindow(RedlockConfig config) {
    return config.maxTtl().plus(config.driftFor(config.maxTtl()));
  }
}
