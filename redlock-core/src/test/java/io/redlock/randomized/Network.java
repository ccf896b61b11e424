package io.redlock.randomized;

import java.util.Random;

/**
 * The message delays and losses of one schedule, drawn from its seeded random source.
 *
 * <p>Each message (request or reply) is delayed by {@code base + uniform(0, jitter)}, and with
 * probability {@code slowChance} by up to {@code slowMax} instead (longer than the node
 * timeout); it is lost with probability {@code lossChance}. While {@link #immediate} is set
 * (at start-up, and in the contract test), requests are executed and answered inline.
 */
final class Network {
  private final Random random;
  private final long baseNanos;
  private final long jitterNanos;
  private final double slowChance;
  private final long slowMaxNanos;
  private final double lossChance;

  /** How long a transport waits for a lost message before failing it with a timeout. */
  final long transportTimeoutNanos;

  boolean immediate;

  Network(
      Random random,
      long baseNanos,
      long jitterNanos,
      double slowChance,
      long slowMaxNanos,
      double lossChance,
      long transportTimeoutNanos) {
    this.random = random;
    this.baseNanos = baseNanos;
    this.jitterNanos = jitterNanos;
    this.slowChance = slowChance;
    this.slowMaxNanos = slowMaxNanos;
    this.lossChance = lossChance;
    this.transportTimeoutNanos = transportTimeoutNanos;
  }

  /** A network that answers every request inline, for the contract test. */
  static Network inline() {
    Network network = new Network(new Random(0), 0, 0, 0, 0, 0, 0);
    network.immediate = true;
    return network;
  }

  long delayNanos() {
    if (slowChance > 0 && random.nextDouble() < slowChance) {
      return baseNanos + (long) (random.nextDouble() * slowMaxNanos);
    }
    return baseNanos + (jitterNanos == 0 ? 0 : (long) (random.nextDouble() * jitterNanos));
  }

  boolean lost() {
    return lossChance > 0 && random.nextDouble() < lossChance;
  }

  @Override
  public String toString() {
    return "delay="
        + baseNanos / 1_000
        + "us+U(0,"
        + jitterNanos / 1_000
        + "us) slow="
        + slowChance
        + "xU(0,"
        + slowMaxNanos / 1_000_000
        + "ms) loss="
        + lossChance;
  }
}
