package io.redlock.internal;

import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

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

  /**
   * Whether {@code cause}, the error of a probe or of a raise of the max-ttl register, is a
   * refusal: an answer that the node gives again at every try until its operator changes its
   * configuration, so that it never counts. A refusal is named at WARN and in the node's votes;
   * anything else is a failed probe, said at DEBUG and tried again a second later.
   *
   * <p>Refusals:
   * <ul>
   *   <li>an ACL denial of a command or key: {@code NOPERM ...} ({@code "NOPERM this user has
   *       no permissions to run the 'info' command or its subcommand"} in Redis 6.2, {@code
   *       "NOPERM User u has no permissions to run the 'time' command"} in 7.2);
   *   <li>an ACL denial inside a script, which Redis reports as {@code ERR}: {@code "... The
   *       user executing the script can't run this command or subcommand"} or {@code "... can't
   *       access at least one of the keys ..."} (6.2, 7.0), {@code "ERR ACL failure in script:
   *       ..."} (7.2 and later);
   *   <li>a command the node does not have, renamed or disabled by {@code rename-command} or
   *       missing behind a proxy: {@code "ERR unknown command ..."}, and {@code "... Unknown
   *       Redis command called from Lua script"} inside a script;
   *   <li>a transport that has no such request ({@link UnsupportedOperationException}).
   * </ul>
   *
   * <p>Not refusals: an unreachable or slow node ({@link IOException}, {@link
   * TimeoutException}), and every other error reply, {@code ERR} included, such as a write
   * refused for lack of memory ({@code OOM}, also as {@code "ERR Error running script ...
   * -OOM ..."}), a node still loading its data ({@code LOADING}) or busy with a script ({@code
   * BUSY}): they pass, and a refusal's advice (grant a command) would be wrong for them.
   */
  public static boolean isRefusal(Throwable cause) {
    if (cause instanceof IOException || cause instanceof TimeoutException) {
      return false;
    }
    if (cause instanceof UnsupportedOperationException) {
      return true;
    }
    String upper = String.valueOf(cause.getMessage()).toUpperCase(Locale.ROOT);
    return upper.contains("NOPERM")
        || upper.contains("CAN'T RUN THIS COMMAND")
        || upper.contains("CAN'T ACCESS AT LEAST ONE OF THE KEYS")
        || upper.contains("ACL FAILURE IN SCRIPT")
        || upper.contains("UNKNOWN COMMAND")
        || upper.contains("UNKNOWN REDIS COMMAND");
  }
}
