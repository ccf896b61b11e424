package io.redlock;

import io.redlock.internal.TimeSource;
import io.redlock.spi.NodeClient;
import java.util.List;
import java.util.Random;

/**
 * Opens {@link Redlock#over} to the simulation in {@code io.redlock.randomized}: a Redlock over
 * caller-supplied node clients, on a caller-supplied clock and timer, with callbacks run on the
 * thread that completes them. Test support only.
 */
public final class SimulationAccess {
  private SimulationAccess() {}

  public static Redlock over(
      RedlockConfig config, List<NodeClient> nodes, TimeSource time, Random random) {
    return Redlock.over(config, nodes, time, random, Runnable::run);
  }
}
