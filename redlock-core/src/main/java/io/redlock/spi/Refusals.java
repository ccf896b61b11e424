package io.redlock.spi;

import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * The one rule that tells a node's refusal (it answers the same until its operator changes its
 * configuration) from a passing failure, shared by the restart guard, the transports and the
 * command line, so that they never disagree on what an answer means.
 *
 * <p>Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class Refusals {
  private Refusals() {}

  /**
   * Whether {@code cause}, the error of a request to a node, is a refusal: an answer that the node gives again at every try until its operator changes its
   * configuration, so that the request fails every time. The restart guard names a refused probe at WARN
   * and in the node's votes (anything else is a failed probe, tried again a second later);
   * the transport stops asking for what was refused; {@code redlock doctor} lists refused
   * commands.
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
