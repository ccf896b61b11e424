package io.redlock.cli;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code redlock exec RESOURCE -- COMMAND [ARGS]}: runs a command while holding a lock.
 *
 * <p>Acquires the resource (retrying up to {@code --wait}), starts the command with inherited
 * stdin, stdout and stderr and with {@code REDLOCK_TOKEN} and {@code REDLOCK_RESOURCE} (with
 * {@code --fencing}, also {@code REDLOCK_FENCING_TOKEN}) in its environment, keeps the lease extended while it runs, releases it when it exits and exits
 * with its status. If the lease is lost the command is signalled as {@code --on-lost} says.
 * SIGTERM, SIGINT and SIGHUP sent to {@code redlock} are forwarded to the command as SIGTERM
 * (from a JVM shutdown hook) and the lock is released once it exited.
 */
@Command(
    name = "exec",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Runs a command while holding a lock; exits with its status.",
    // Everything after RESOURCE belongs to the command, even words that look like options:
    // Main.commandLine() sets stopAtPositional for this command (see commandWords() for "--").
    description = {
      "Acquires RESOURCE, runs COMMAND with inherited stdin/stdout/stderr while keeping the"
          + " lease extended, releases the lock when COMMAND exits and exits with its status.",
      "COMMAND sees REDLOCK_TOKEN (the lease's token) and REDLOCK_RESOURCE in its"
          + " environment, and with --fencing REDLOCK_FENCING_TOKEN. Options go before RESOURCE; everything after it (or after --) is"
          + " the command.",
      "",
      "If the lease is lost while COMMAND runs (a majority of the nodes no longer hold it),"
          + " --on-lost decides: kill = SIGTERM, then SIGKILL after --grace; term = SIGTERM"
          + " only; ignore = a warning only. Either way redlock exits 74 afterwards.",
      "SIGTERM, SIGINT and SIGHUP sent to redlock are forwarded to COMMAND as SIGTERM"
          + " (SIGKILL after --grace), the lock is released and redlock exits with COMMAND's"
          + " status. SIGKILL cannot be forwarded: COMMAND then runs on unlocked once the ttl"
          + " expires."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0..125:COMMAND's own exit status",
      "2:bad arguments, settings or config file",
      "3:could not run: no majority of the nodes answered, credentials refused, internal"
          + " error",
      "73:the lock was not acquired within --wait (at once with --no-wait)",
      "74:the lease was lost while COMMAND ran (COMMAND was signalled per --on-lost)",
      "126:COMMAND could not be executed (permission denied)",
      "127:COMMAND was not found",
      "128+N:COMMAND died of signal N (e.g. 137 = SIGKILL, 143 = SIGTERM)"
    })
final class ExecCommand implements Callable<Integer> {

  /** What to do with the command when the lease is lost. */
  enum OnLost {
    kill,
    term,
    ignore
  }

  static final Duration DEFAULT_TTL = Duration.ofSeconds(30);
  static final Duration MIN_TTL = Duration.ofMillis(100);

  @Spec CommandSpec spec;

  @Mixin ConnectionOptions connection;

  @Option(
      names = "--wait",
      defaultValue = "30s",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "How long to keep trying to acquire (default: ${DEFAULT-VALUE}).")
  Duration wait;

  @Option(
      names = "--no-wait",
      description = "Make one attempt and fail at once (exit 73) if the lock is held.")
  boolean noWait;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description =
          "Lease time to live, renewed while COMMAND runs; how long the lock"
              + " outlives a redlock that died without releasing it (default: ttl= in the config"
              + " file, else 30s).")
  Duration ttl;

  @Option(
      names = "--fencing",
      description =
          "Take a fenced lease and give COMMAND its fencing token in REDLOCK_FENCING_TOKEN:"
              + " larger than the token of every earlier holder of RESOURCE, for COMMAND to"
              + " pass to what it writes to (one more round trip; see docs/fencing.md).")
  boolean fencing;

  @Option(
      names = "--on-lost",
      defaultValue = "kill",
      paramLabel = "kill|term|ignore",
      description =
          "When the lease is lost: kill (SIGTERM, then SIGKILL after --grace), term"
              + " (SIGTERM only) or ignore (default: ${DEFAULT-VALUE}).")
  OnLost onLost;

  @Option(
      names = "--grace",
      defaultValue = "10s",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Time between SIGTERM and SIGKILL (default: ${DEFAULT-VALUE}).")
  Duration grace;

  @Parameters(index = "0", paramLabel = "RESOURCE", description = "The resource to lock.")
  String resource;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "COMMAND",
      description = "The command and its arguments.")
  List<String> command;

  private volatile Redlock redlock;
  private volatile Lease lease;
  private volatile Process child;
  private volatile boolean shuttingDown;
  private final AtomicBoolean lost = new AtomicBoolean();

  @Override
  public Integer call() throws InterruptedException {
    checkArguments();
    List<String> words = commandWords();
    ConnectionOptions.Settings settings = connection.resolve();
    Duration leaseTtl = ttl != null ? ttl : settings.ttl().orElse(DEFAULT_TTL);
    if (leaseTtl.compareTo(MIN_TTL) < 0) {
      throw invalid(
          ttl != null ? "option '--ttl'" : "config key 'ttl'",
          DurationConverter.format(leaseTtl) + " is too short: it must be at least 100ms");
    }
    RedlockConfig config =
        connection.build(
            settings,
            settings
                .builder()
                .ttl(leaseTtl)
                .retryCount(noWait ? 0 : Integer.MAX_VALUE)
                .maxWait(noWait ? Duration.ZERO : wait)
                .fencing(fencing));

    Thread hook = new Thread(this::onSignal, "redlock-exec-signal");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      try {
        redlock = Redlock.create(config);
      } catch (RedlockConfigException e) {
        return fail(ExitCodes.FAILURE, "cannot use the nodes: " + e.getMessage());
      }
      try {
        lease = redlock.acquire(resource, leaseTtl);
      } catch (LockUnavailableException e) {
        return notAcquired(e, config);
      } catch (IllegalArgumentException e) {
        throw invalid("parameter 'RESOURCE'", e.getMessage());
      }
      return run(words);
    } catch (RuntimeException | InterruptedException e) {
      if (shuttingDown) {
        return ExitCodes.FAILURE; // the shutdown hook decides the exit code
      }
      throw e;
    } finally {
      if (!shuttingDown) {
        close();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
          // the hook runs and halts with the right exit code
        }
      }
    }
  }

  private int run(List<String> words) throws InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(words).inheritIO();
    builder.environment().put("REDLOCK_TOKEN", lease.token());
    builder.environment().put("REDLOCK_RESOURCE", resource);
    if (fencing) {
      builder.environment().put("REDLOCK_FENCING_TOKEN", Long.toString(lease.fencingToken()));
    }
    Process process;
    synchronized (this) {
      if (shuttingDown) {
        return ExitCodes.FAILURE;
      }
      try {
        process = builder.start();
      } catch (IOException e) {
        boolean denied = String.valueOf(e.getMessage()).contains("error=13");
        return fail(
            denied ? ExitCodes.CANNOT_EXECUTE : ExitCodes.NOT_FOUND,
            words.get(0) + ": " + (denied ? "permission denied" : "command not found"));
      }
      child = process;
    }
    lease.autoExtend();
    lease.onLost(this::onLost);
    int status = process.waitFor();
    if (shuttingDown) {
      return status; // the shutdown hook decides the exit code
    }
    if (!lease.isValid()) {
      lost.set(true);
    }
    if (lost.get()) {
      err()
          .println(
              "redlock exec: "
                  + words.get(0)
                  + " exited with status "
                  + status
                  + " after the lease was lost; exit code "
                  + ExitCodes.LEASE_LOST);
      err().flush();
      return ExitCodes.LEASE_LOST;
    }
    return status;
  }

  /** On a library callback thread: the lease is lost while the command may still run. */
  private void onLost(LeaseLostException e) {
    Process process = child;
    if (shuttingDown || process == null || !lost.compareAndSet(false, true)) {
      return;
    }
    String what = "redlock exec: " + e.getMessage();
    if (onLost == OnLost.ignore || !process.isAlive()) {
      err()
          .println(
              what
                  + (process.isAlive()
                      ? "; --on-lost=ignore: the command keeps running" + " without the lock"
                      : ""));
      err().flush();
      return;
    }
    err().println(what + "; sending SIGTERM to pid " + process.pid());
    err().flush();
    process.destroy();
    if (onLost == OnLost.kill) {
      killAfterGrace(process);
    }
  }

  /** The JVM shutdown hook: runs on SIGTERM, SIGINT and SIGHUP (and on System.exit). */
  private void onSignal() {
    Process process;
    synchronized (this) {
      shuttingDown = true;
      process = child;
    }
    if (process != null && process.isAlive()) {
      err().println("redlock exec: signal received; sending SIGTERM to pid " + process.pid());
      err().flush();
      process.destroy();
      killAfterGrace(process);
    }
    close();
    if (process != null) {
      err().flush();
      int status = lost.get() ? ExitCodes.LEASE_LOST : waitQuietly(process);
      Runtime.getRuntime().halt(status);
    }
  }

  /** Waits up to {@code --grace} for the process to end, then sends SIGKILL. */
  private void killAfterGrace(Process process) {
    try {
      if (!process.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
        err()
            .println(
                "redlock exec: pid "
                    + process.pid()
                    + " still runs after "
                    + DurationConverter.format(grace)
                    + "; sending SIGKILL");
        err().flush();
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private static int waitQuietly(Process process) {
    try {
      return process.waitFor();
    } catch (InterruptedException e) {
      return ExitCodes.FAILURE;
    }
  }

  /** Releases the lease and closes the connections; safe to call twice. */
  private synchronized void close() {
    Lease held = lease;
    if (held != null) {
      held.release();
    }
    Redlock open = redlock;
    if (open != null) {
      open.close();
    }
  }

  private int notAcquired(LockUnavailableException e, RedlockConfig config) {
    int nodes = config.nodes().size();
    int answered = 0;
    int taken = 0;
    for (NodeOutcome outcome : e.lastOutcomes()) {
      if (outcome.vote() == NodeOutcome.Vote.TAKEN) {
        taken++;
      }
      if (outcome.vote() == NodeOutcome.Vote.TAKEN || outcome.vote() == NodeOutcome.Vote.GRANTED) {
        answered++;
      }
    }
    int quorum = config.quorum();
    String after = noWait ? "at once (--no-wait)" : "within " + DurationConverter.format(wait);
    if (answered < quorum) {
      return fail(
          ExitCodes.FAILURE,
          "could not acquire '"
              + resource
              + "' "
              + after
              + ": only "
              + answered
              + " of "
              + nodes
              + " nodes answered, "
              + quorum
              + " are needed; last attempt: "
              + e.lastOutcomes());
    }
    return fail(
        ExitCodes.NOT_ACQUIRED,
        "could not acquire '"
            + resource
            + "' "
            + after
            + ": held by another client ("
            + taken
            + " of "
            + nodes
            + " nodes answered that it is"
            + " taken)");
  }

  private void checkArguments() {
    if (noWait && spec.commandLine().getParseResult().hasMatchedOption("--wait")) {
      throw invalid("option '--no-wait'", "it cannot be used together with --wait");
    }
    if (ttl != null && ttl.compareTo(MIN_TTL) < 0) {
      throw invalid(
          "option '--ttl'",
          DurationConverter.format(ttl) + " is too short: it must be at least 100ms");
    }
  }

  /** The command words; a leading "--" is dropped should picocli pass it through. */
  private List<String> commandWords() {
    List<String> words = command;
    if (!words.isEmpty() && words.get(0).equals("--")) {
      words = words.subList(1, words.size());
    }
    if (words.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "Missing required parameter: 'COMMAND'");
    }
    return words;
  }

  private int fail(int code, String message) {
    err().println("redlock exec: " + message);
    err().flush();
    return code;
  }

  private PrintWriter err() {
    return spec.commandLine().getErr();
  }

  private ParameterException invalid(String where, String message) {
    return new ParameterException(
        spec.commandLine(), "Invalid value for " + where + ": " + message);
  }
}
