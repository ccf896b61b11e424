package io.redlock.internal;

import io.redlock.FreshMarker;
import io.redlock.spi.NodeInfo;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * The restart guard's pure decisions, apart from any I/O so that they can be tested
 * exhaustively: whether a node may count at once, whether its clock ran fast, and whether an
 * error is a refusal.
 *
 * <p>Stateless and thread-safe.
 */
final class GuardRules {
  /** How precisely {@code TIME} reads the node's clock: one microsecond. */
  static final long TIME_RESOLUTION_NANOS = 1_000L;

  /** Why a node counts at once, without waiting out the guard's window. */
  public enum AtOnce {
    /** It does not: it counts once its process has been up for the window. */
    NO,
    /** The fresh marker names its current process ({@code redlock init}). */
    MARKER,
    /** It persists every write and loaded an earlier process's data at start. */
    PERSISTENCE
  }

  private GuardRules() {}

  /**
   * Whether a node may count as soon as it is probed, rather than once its process has been
   * up for the guard's window.
   *
   * <p>A marker that names the current {@code run_id} was written to this process by
   * {@code init}, which found no lock key in it: every lock the process holds since, it
   * still holds, as it has not restarted.
   *
   * <p>Persistence counts only with every one of: AOF on with {@code appendfsync always}
   * (every write reaches the disk before it is answered, so a restarted process that loaded
   * the file knows every lock granted before its restart); no AOF rewrite in this process,
   * done, running or scheduled (switching AOF on at run time, say after an empty restart,
   * always rewrites the file from memory, and what memory held then may lack locks: such a
   * node falls back to the window); the last AOF write succeeded; and a fresh marker from an
   * earlier process present in the data (the proof that this process loaded data from disk
   * at all, and not started on an empty or lost directory with AOF on). It assumes the
   * earlier processes ran with {@code appendfsync always} too, as a configuration file gives.
   *
   * @param tainted whether the guard flagged this process's clock: keys expired early then,
   *     which no marker or persistence undoes
   */
  public static AtOnce countsAtOnce(NodeInfo info, boolean tainted) {
    if (tainted) {
      return AtOnce.NO;
    }
    if (FreshMarker.names(info.marker(), info.runId())) {
      return AtOnce.MARKER;
    }
    NodeInfo.Persistence p = info.persistence();
    if (p != null
        && p.aofEnabled()
        && !p.rewrittenSinceStart()
        && p.lastWriteOk()
        && p.appendfsync().toLowerCase(Locale.ROOT).equals("always")
        && FreshMarker.isMarker(info.marker())) {
      return AtOnce.PERSISTENCE;
    }
    return AtOnce.NO;
  }

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
