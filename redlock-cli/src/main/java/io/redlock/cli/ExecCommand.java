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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code redlock exec RESOURCE -- COMMAND [ARGS]}: runs a command while holding a lock, for as
 * long as any process of the command runs.
 *
 * <p>Acquires the resource (retrying up to {@code --wait}), arms auto-extension and the loss
 * watch, then starts the command in a session of its own ({@link CommandTree}, through
 * {@code setsid(1)}) with inherited stdin, stdout and stderr, {@code REDLOCK_TOKEN} and
 * {@code REDLOCK_RESOURCE} (with {@code --fencing}, {@code REDLOCK_FENCING_TOKEN}) in its
 * environment and redlock's own connection variables ({@link #WITHHELD}) removed from it. The
 * lock is held until the command and every process of its session ended, background jobs
 * included (as {@code flock(1)} holds its lock while any process holds the descriptor), and is
 * released only then. If the lease is lost the processes are signalled as {@code --on-lost}
 * says; SIGTERM, SIGINT and SIGHUP sent to {@code redlock} send SIGTERM to each of them, then
 * SIGKILL after {@code --grace}, and the lock is released once none is left.
 *
 * <p>Not covered: a process that leaves the session itself (a daemon's double fork,
 * {@code setsid}) runs on without the lock.
 */
@Command(
    name = "exec",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Runs a command while holding a lock; exits with its status.",
    // Everything after RESOURCE belongs to the command, even words that look like options:
    // Main.commandLine() sets stopAtPositional for this command (see commandWords() for "--").
    description = {
      "Acquires RESOURCE, runs COMMAND with inherited stdin/stdout/stderr in a session of its"
          + " own (setsid(1)) while keeping the lease extended, and releases the lock once"
          + " COMMAND and every process it started ended. Exits with COMMAND's status.",
      "Background jobs keep the lock: a COMMAND that exits while a job it started still runs"
          + " holds the lock until that job ends too (like flock(1), whose lock lasts while any"
          + " process holds the file). A process that leaves the session itself (a daemon's"
          + " double fork, setsid) is not covered.",
      "COMMAND sees REDLOCK_TOKEN (the lease's token) and REDLOCK_RESOURCE in its"
          + " environment, and with --fencing REDLOCK_FENCING_TOKEN; REDLOCK_PASSWORD,"
          + " REDLOCK_NODES and REDLOCK_CONFIG are removed from it. Options go before"
          + " RESOURCE; everything after it (or after --) is the command.",
      "",
      "If the lease is lost while COMMAND runs (a majority of the nodes no longer hold it),"
          + " --on-lost decides: kill = SIGTERM to every process of the session, then SIGKILL"
          + " after --grace; term = SIGTERM only; ignore = a warning only. Either way redlock"
          + " exits 74 once they all ended.",
      "SIGTERM, SIGINT and SIGHUP sent to redlock send SIGTERM to every process of the"
          + " session (SIGKILL after --grace); the lock is released once none is left and"
          + " redlock exits with COMMAND's status. SIGKILL to redlock cannot be passed on:"
          + " COMMAND then runs on unlocked once the ttl expires.",
      "",
      "Whenever the exit code is redlock's own (2, 3, 73, 74, 126, 127) and not COMMAND's,"
          + " redlock writes one line starting with 'redlock exec:' to stderr first.",
      "Needs setsid(1) on PATH (Linux: util-linux; macOS: brew install util-linux)."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0..255:COMMAND's own exit status",
      "2:bad arguments, settings or config file",
      "3:could not run: no majority of the nodes answered, credentials refused, setsid"
          + " missing, internal error",
      "73:the lock was not acquired within --wait (at once with --no-wait)",
      "74:the lease was lost (COMMAND was signalled per --on-lost, or not started)",
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

  /** Why the command's processes are being stopped. */
  private enum Stop {
    LOST,
    SIGNAL
  }

  /** How often the tree is looked at once the command exited or is being stopped. */
  private static final long POLL_MILLIS = 50;

  /** Variables of redlock's own connection settings, never passed to the command. */
  static final List<String> WITHHELD =
      List.of(
          ConnectionOptions.ENV_PASSWORD,
          ConnectionOptions.ENV_NODES,
          ConnectionOptions.ENV_CONFIG);

  private volatile Redlock redlock;
  private volatile Lease lease;
  private volatile CommandTree tree;
  private volatile boolean shuttingDown;
  private volatile Stop stop;
  private volatile int exitStatus = ExitCodes.FAILURE;
  private final CountDownLatch finished = new CountDownLatch(1);
  private final Object wake = new Object();
  private final AtomicBoolean lost = new AtomicBoolean();

  @Override
  public Integer call() throws InterruptedException {
    WarmUp.await(); // before the libraries are touched: see WarmUp
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
    String path = System.getenv("PATH");
    Path setsid = CommandTree.findSetsid(path).orElse(null);
    if (setsid == null) {
      return fail(
          ExitCodes.FAILURE,
          "setsid(1) was not found on PATH; exec needs it to run the command in a session of"
              + " its own, so that every process it starts ends before the lock is released"
              + " (Linux: util-linux; macOS: 'brew install util-linux')");
    }
    Optional<Path> executable = CommandTree.findExecutable(words.get(0), path);
    if (executable.isEmpty()) {
      return fail(ExitCodes.NOT_FOUND, Printable.of(words.get(0)) + ": command not found");
    }
    if (!Files.isExecutable(executable.get())) {
      return fail(ExitCodes.CANNOT_EXECUTE, Printable.of(words.get(0)) + ": permission denied");
    }

    Thread hook = new Thread(this::onSignal, "redlock-exec-signal");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      try {
        redlock = Redlock.create(config);
        LauncherArchive.connected();
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
      exitStatus = run(setsid, words);
      return exitStatus;
    } catch (RuntimeException | InterruptedException e) {
      if (shuttingDown) {
        return ExitCodes.FAILURE; // the shutdown hook decides the exit code
      }
      throw e;
    } finally {
      // The lock is released only here, after every process of the command has ended.
      close();
      finished.countDown();
      if (!shuttingDown) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
          // the hook runs and halts with the right exit code
        }
      }
    }
  }

  private int run(Path setsid, List<String> words) throws InterruptedException {
    // Armed before the command starts: a lease lost in the meantime stops it from starting.
    lease.onLost(this::onLost);
    try {
      lease.autoExtend();
    } catch (LeaseLostException e) {
      lost.set(true);
    }
    Map<String, String> environment = new HashMap<>(System.getenv());
    WITHHELD.forEach(environment::remove);
    environment.put("REDLOCK_TOKEN", lease.token());
    environment.put("REDLOCK_RESOURCE", resource);
    if (fencing) {
      environment.put("REDLOCK_FENCING_TOKEN", Long.toString(lease.fencingToken()));
    } else {
      environment.remove("REDLOCK_FENCING_TOKEN");
    }
    CommandTree started;
    synchronized (this) {
      if (shuttingDown) {
        return ExitCodes.FAILURE;
      }
      if (lost.get() || !lease.isValid()) {
        lost.set(true);
        return fail(
            ExitCodes.LEASE_LOST,
            "the lease on '"
                + Printable.of(resource)
                + "' was lost before "
                + Printable.of(words.get(0))
                + " started; it was not run");
      }
      try {
        started = CommandTree.start(setsid, words, environment);
      } catch (IOException e) {
        return fail(
            ExitCodes.CANNOT_EXECUTE,
            Printable.of(words.get(0)) + ": cannot execute (" + e.getMessage() + ")");
      }
      tree = started;
    }
    started.leader().onExit().thenRun(this::wakeUp);
    int status = supervise(started);
    if (!lease.isValid()) {
      lost.set(true);
    }
    if (lost.get()) {
      err()
          .println(
              "redlock exec: "
                  + Printable.of(words.get(0))
                  + " exited with status "
                  + status
                  + " after the lease was lost; exit code "
                  + ExitCodes.LEASE_LOST);
      err().flush();
      return ExitCodes.LEASE_LOST;
    }
    return status;
  }

  /**
   * Waits until the command and every process of its session ended (background jobs
   * included: the lock is held while any of them runs, as flock(1)'s is while any holds the
   * descriptor), stopping them when the lease is lost or redlock is signalled: SIGTERM to
   * each, then SIGKILL after {@code --grace}. Returns the command's own exit status.
   */
  private int supervise(CommandTree started) throws InterruptedException {
    Process leader = started.leader();
    Set<Long> termed = new HashSet<>();
    long stopAt = 0;
    boolean stopping = false;
    boolean killing = false;
    while (true) {
      boolean leaderRan = leader.isAlive();
      List<ProcessHandle> members = started.members();
      if (members.isEmpty() && !leader.isAlive()) {
        return leader.waitFor(); // reaped by the JDK: the exit status is known
      }
      Stop reason = stop;
      if (reason != null) {
        boolean mayKill = reason == Stop.SIGNAL || onLost == OnLost.kill;
        if (!stopping) {
          stopping = true;
          stopAt = System.nanoTime();
          err()
              .println(
                  "redlock exec: "
                      + (reason == Stop.SIGNAL ? "signal received" : "the lease was lost")
                      + "; sending SIGTERM to the "
                      + members.size()
                      + " process(es) of session "
                      + started.id());
          err().flush();
        }
        if (!killing && mayKill && System.nanoTime() - stopAt >= grace.toNanos()) {
          killing = true;
          err()
              .println(
                  "redlock exec: "
                      + members.size()
                      + " process(es) of session "
                      + started.id()
                      + " still run after "
                      + DurationConverter.format(grace)
                      + "; sending SIGKILL");
          err().flush();
        }
        for (ProcessHandle member : members) {
          if (killing) {
            member.destroyForcibly();
          } else if (termed.add(member.pid())) {
            member.destroy();
          }
        }
      }
      synchronized (wake) {
        // A command that exited during the scan woke nobody: look again at once, rather than
        // after a poll period (a short command such as `true` always ends there).
        if (stop == reason && !(leaderRan && !leader.isAlive())) {
          // Woken by the command's exit or a stop; polled once it exited (its background
          // jobs are not our children) or while stopping.
          wake.wait(leader.isAlive() && reason == null ? 1000 : POLL_MILLIS);
        }
      }
    }
  }

  private void requestStop(Stop reason) {
    synchronized (wake) {
      if (stop == null || reason == Stop.SIGNAL) {
        stop = reason;
      }
      wake.notifyAll();
    }
  }

  private void wakeUp() {
    synchronized (wake) {
      wake.notifyAll();
    }
  }

  /** On a library callback thread: the lease is lost, maybe while the command runs. */
  private void onLost(LeaseLostException e) {
    if (shuttingDown || !lost.compareAndSet(false, true)) {
      return;
    }
    CommandTree running;
    synchronized (this) {
      running = tree;
    }
    if (running == null) {
      return; // not started: run() sees the loss and does not start it
    }
    String what = "redlock exec: " + Printable.of(e.getMessage());
    if (onLost == OnLost.ignore) {
      err().println(what + "; --on-lost=ignore: the command keeps running without the lock");
      err().flush();
      return;
    }
    err().println(what);
    err().flush();
    requestStop(Stop.LOST);
  }

  /**
   * The JVM shutdown hook: runs on SIGTERM, SIGINT and SIGHUP (and on System.exit). Stops
   * the command's processes and lets the main thread release the lock once they all ended.
   */
  private void onSignal() {
    CommandTree running;
    synchronized (this) {
      shuttingDown = true;
      running = tree;
    }
    if (running == null) {
      close(); // acquiring, or never started: nothing runs under the lock
      return;
    }
    requestStop(Stop.SIGNAL);
    try {
      finished.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    err().flush();
    Runtime.getRuntime().halt(lost.get() ? ExitCodes.LEASE_LOST : exitStatus);
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
              + Printable.of(resource)
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
            + Printable.of(resource)
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
