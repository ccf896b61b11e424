package io.redlock.cli;

/**
 * The exit codes of the {@code redlock} command, in one place.
 *
 * <p>{@code redlock exec} exits with its child's own status (0 to 125) when it ran and the
 * lease held; the codes below are chosen not to clash with what commands commonly return:
 * 73 and 74 sit outside the shell's 126..165 range and the low codes most tools use, next to
 * the {@code sysexits.h} values for "can't create" (73) and "I/O error" (74).
 */
public final class ExitCodes {
  /** Success; for {@code status}: the verdict is held or free. */
  public static final int OK = 0;

  /** {@code demo}: a safety violation was seen. */
  public static final int VIOLATION = 1;

  /** Bad arguments, settings or config file: one line names the culprit. */
  public static final int USAGE = 2;

  /**
   * The command could not run: no majority of the nodes answered, a node refused the
   * credentials, an internal error; for {@code status}: the verdict is unknown.
   */
  public static final int FAILURE = 3;

  /** {@code exec}: the lock was not acquired within {@code --wait} (or at once with --no-wait). */
  public static final int NOT_ACQUIRED = 73;

  /** {@code exec}: the lease was lost while the child ran (the child was signalled first). */
  public static final int LEASE_LOST = 74;

  /** {@code exec}: the command was found but could not be executed (as in shells). */
  public static final int CANNOT_EXECUTE = 126;

  /** {@code exec}: the command was not found (as in shells). */
  public static final int NOT_FOUND = 127;

  /** {@code exec}: the child died of signal N: 128 + N (what Java reports on Linux). */
  public static final int SIGNAL_BASE = 128;

  private ExitCodes() {}
}
