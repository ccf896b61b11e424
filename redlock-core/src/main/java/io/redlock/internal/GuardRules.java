package io.redlock.internal;

/**
 * The restart guard's pure decisions on clocks and errors, apart from any I/O so that they can
 * be tested exhaustively: whether a node's clock ran fast or jumped, and whether an error is a
 * refusal. Trust in a node's data is {@link TrustRules}'.
 *
 * <p>Stateless and thread-safe.
 */
final class GuardRules {
  /** How precisely {@code TIME} reads the node's clock: one microsecond. */
  static final long TIME_RESOLUTION_NANOS = 1_000L;

  private GuardRules() {}

  /**
   * Whether a node's clock certainly ran ahead of ours by more than {@code allowanceNanos}
   * between two readings: its {@code TIME} advanced by {@code serverDelta} while our
   * monotonic clock advanced by {@code localDelta}. Each reading is known only to within
   * half its probe's round trip (the node read its clock at some moment between sending
   * and receiving), so {@code uncertaintyNanos}, the sum of the two half round trips, is
   * given to the node: only an excess beyond it is certain.
   */
  public static boolean ranAhead(
      long serverDelta, long localDelta, long uncertaintyNanos, long allowanceNanos) {
    return serverDelta - localDelta - uncertaintyNanos - 2 * TIME_RESOLUTION_NANOS > allowanceNanos;
  }

  /**
   * The largest rate of a node's clock against ours consistent with a baseline over which its
   * {@code TIME} advanced by {@code baseServerDelta} while our monotonic clock advanced by
   * {@code baseLocalDelta}, uncertain by {@code baseUncertaintyNanos}: {@code (baseServerDelta
   * + resolution) / (baseLocalDelta - baseUncertaintyNanos)}; {@link Double#NaN} when the
   * baseline is no longer than its uncertainty and so says nothing of the rate.
   */
  public static double fastestRate(
      long baseServerDelta, long baseLocalDelta, long baseUncertaintyNanos) {
    long baseShortest = baseLocalDelta - baseUncertaintyNanos;
    if (baseShortest <= 0) {
      return Double.NaN;
    }
    return (double) (baseServerDelta + TIME_RESOLUTION_NANOS) / baseShortest;
  }

  /**
   * The smallest forward step of a node's clock between two readings beyond what a clock at
   * {@code fastestRate} explains, in nanoseconds (negative when none is certain), or {@link
   * Long#MIN_VALUE} when the rate is not known ({@link Double#NaN}) or no time passed between
   * the readings: the interval ({@code serverDelta} of the node's {@code TIME} against {@code
   * localDelta} of our clock) is taken at its longest, {@code uncertaintyNanos} (the two half
   * round trips) longer, and the node's advance at its shortest, the {@code TIME} resolution
   * less.
   *
   * <p>The rate is measured over a baseline that ends at the first of the two readings ({@link
   * #fastestRate}). It is the node's own, whatever it is (a clock running slow and then
   * stepping forward is seen), and it replaces any allowance for drift: only the round trips'
   * uncertainty is given to the node. Judging the rate against {@code driftFactor} is {@link
   * #ranAhead}'s business.
   */
  public static long leastStepAtRate(
      double fastestRate, long serverDelta, long localDelta, long uncertaintyNanos) {
    if (Double.isNaN(fastestRate) || localDelta <= 0) {
      return Long.MIN_VALUE;
    }
    double longest = (double) localDelta + uncertaintyNanos;
    return (long) Math.floor(serverDelta - TIME_RESOLUTION_NANOS - fastestRate * longest);
  }
}
