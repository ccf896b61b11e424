package io.redlock.cli;

import static io.redlock.cli.RedlockProcess.exitOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code redlock exec} holds the lock for the command's whole process tree, against three real
 * redis-server processes: the command is a shell script that starts children, and every one of
 * them ends before the lock is free, whether the script exits by itself, the lease is lost or
 * {@code redlock} gets SIGTERM. Each {@code redlock} runs as a process of its own.
 */
class ExecTreeIT {

  private static final Duration WAIT = Duration.ofSeconds(30);

  private static RedisServers redis;
  private static String nodes;

  @TempDir Path dir;

  @BeforeAll
  static void startRedis() {
    redis = RedisServers.start(3);
    nodes = String.join(",", redis.uris());
    StringWriter out = new StringWriter();
    assertThat(run(out, "init", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @Test
  void sigtermToRedlockEndsTheScriptsChildBeforeTheLockIsFree() throws Exception {
    Path log = dir.resolve("log");
    Path started = dir.resolve("started");
    // The script's child traps SIGTERM and logs before it exits; the script itself only waits.
    String child =
        "trap 'echo child-ended >> \""
            + log
            + "\"; exit 0' TERM;"
            + " echo $$ > '"
            + started
            + "'; while :; do sleep 0.1; done";
    Process first = redlock("exec", "tree-sig", "--", "sh", "-c", "sh -c \"$0\" & wait", child);
    Timing.await("the script's child to start", WAIT, () -> hasText(started));
    long childPid = Long.parseLong(Files.readString(started).trim());
    Process second =
        redlock(
            "exec", "--wait", "60s", "tree-sig", "--", "sh", "-c", "echo second >> '" + log + "'");
    awaitHeld("tree-sig");

    try {
      first.destroy(); // SIGTERM to redlock only: systemd KillMode=process, kill PID
      exitOf(first);
      assertThat(ended(childPid)).as("the child of the script ended with redlock").isTrue();
      assertThat(exitOf(second)).isZero();
      assertThat(Files.readAllLines(log)).containsExactly("child-ended", "second");
      assertFree("tree-sig");
    } finally {
      ProcessHandle.of(childPid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void aLostLeaseEndsTheScriptsChildEvenIfItIgnoresSigterm() throws Exception {
    Path started = dir.resolve("started");
    String child = "trap '' TERM; echo $$ > '" + started + "'; while :; do sleep 0.1; done";
    Process exec =
        redlock(
            "exec",
            "--ttl",
            "1s",
            "--grace",
            "500ms",
            "tree-lost",
            "--",
            "sh",
            "-c",
            "sh -c \"$0\" & wait",
            child);
    Timing.await("the script's child to start", WAIT, () -> hasText(started));
    long childPid = Long.parseLong(Files.readString(started).trim());
    for (int i = 0; i < 3; i++) {
      redis.command(i, "SET", "tree-lost", "someone-else", "PX", "60000");
    }
    try {
      assertThat(exitOf(exec)).isEqualTo(ExitCodes.LEASE_LOST);
      assertThat(ended(childPid)).as("the child that ignored SIGTERM got SIGKILL").isTrue();
    } finally {
      ProcessHandle.of(childPid).ifPresent(ProcessHandle::destroyForcibly);
    }
    for (int i = 0; i < 3; i++) {
      assertThat(redis.command(i, "GET", "tree-lost")).isEqualTo("someone-else");
      redis.command(i, "DEL", "tree-lost");
    }
  }

  @Test
  void aBackgroundJobKeepsTheLockAfterTheCommandExited() throws Exception {
    Path go = dir.resolve("go");
    Path leader = dir.resolve("leader");
    Path job = dir.resolve("job");
    String script =
        "echo $$ > '"
            + leader
            + "';"
            + " (echo started > '"
            + job
            + "';"
            + " while [ ! -e '"
            + go
            + "' ]; do sleep 0.05; done) &"
            + " exit 0";
    Process exec = redlock("exec", "tree-bg", "--", "sh", "-c", script);
    Timing.await("the script to start its job", WAIT, () -> hasText(leader) && hasText(job));
    long leaderPid = Long.parseLong(Files.readString(leader).trim());
    Timing.await("the script to exit", WAIT, () -> ended(leaderPid));

    // The script is gone, its job runs: the lock is still held.
    assertHeldUntilGo(exec, "tree-bg", go);
  }

  @Test
  void aProcessWhoseMainThreadExitedKeepsTheLockWhileItsOtherThreadRuns() throws Exception {
    // A program may end its main thread with pthread_exit and go on in another: /proc shows
    // the process as a zombie (Z) while that thread runs. python3 with ctypes makes one.
    Optional<Path> python = CommandTree.findExecutable("python3", System.getenv("PATH"));
    assumeTrue(python.isPresent(), "python3 on PATH makes the program");
    Path program = dir.resolve("main-exits.py");
    Files.writeString(
        program,
        String.join(
            "\n",
            "import ctypes, os, sys, threading, time",
            "def worker():",
            "    while not os.path.exists(sys.argv[1]):",
            "        time.sleep(0.05)",
            "    os._exit(0)",
            "threading.Thread(target=worker).start()",
            "with open(sys.argv[2], 'w') as f:",
            "    f.write(str(os.getpid()))",
            "ctypes.CDLL(None).pthread_exit(None)",
            ""));
    Path go = dir.resolve("go");
    Path started = dir.resolve("started");
    String script =
        "'" + python.get() + "' '" + program + "' '" + go + "' '" + started + "' & exit 0";
    Process exec = redlock("exec", "tree-thread", "--", "sh", "-c", script);
    Timing.await("the program to start", WAIT, () -> hasText(started));
    long pid = Long.parseLong(Files.readString(started).trim());
    try {
      Timing.await("the program's main thread to exit", WAIT, () -> ended(pid));

      // Its main thread is gone, another thread runs: the lock is still held.
      assertHeldUntilGo(exec, "tree-thread", go);
    } finally {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void theCommandSeesItsLeaseButNotTheConnectionSettings() throws Exception {
    Path env = dir.resolve("env");
    Path config = dir.resolve("redlock.conf");
    Files.writeString(config, "ttl=5s\n");
    // A password given to redlock for nodes whose URI holds none: the test nodes' URIs hold
    // theirs, so it is not used, only offered to the child.
    Process exec =
        redlock(
            Map.of("REDLOCK_PASSWORD", "not-for-the-child", "REDLOCK_CONFIG", config.toString()),
            "exec",
            "--nodes",
            nodes,
            "--fencing",
            "tree-env",
            "--",
            "sh",
            "-c",
            "env > '" + env + "'");
    assertThat(exitOf(exec)).isZero();
    String seen = Files.readString(env, StandardCharsets.UTF_8);
    assertThat(seen)
        .containsPattern("(?m)^REDLOCK_TOKEN=[0-9a-f]{40}$")
        .containsPattern("(?m)^REDLOCK_RESOURCE=tree-env$")
        .containsPattern("(?m)^REDLOCK_FENCING_TOKEN=[1-9][0-9]*$")
        .doesNotContain("REDLOCK_PASSWORD")
        .doesNotContain("not-for-the-child")
        .doesNotContain("REDLOCK_NODES")
        .doesNotContain("REDLOCK_CONFIG");
  }

  // --- helpers ---

  /**
   * The lock on {@code resource} is held and {@code exec} runs; once {@code go} exists, exec
   * exits 0 and every node is free of it.
   */
  private static void assertHeldUntilGo(Process exec, String resource, Path go) throws Exception {
    StringWriter status = new StringWriter();
    assertThat(run(status, "status", "--nodes", nodes, resource)).isEqualTo(ExitCodes.OK);
    assertThat(status.toString()).contains("verdict: held");
    assertThat(exec.isAlive()).isTrue();

    Files.writeString(go, "");
    assertThat(exitOf(exec)).isZero();
    assertFree(resource);
  }

  private static int run(StringWriter out, String... args) {
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
    System.err.print(err);
    return code;
  }

  private static Process redlock(String... args) throws IOException {
    return redlock(Map.of(), args);
  }

  /** Starts {@code redlock ARGS} as a process with REDLOCK_NODES and {@code env} set. */
  private static Process redlock(Map<String, String> env, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    String jar = System.getProperty("redlock.jar");
    if (jar != null && new File(jar).isFile()) {
      command.add("-jar");
      command.add(jar);
    } else {
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(Main.class.getName());
    }
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.INHERIT)
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    builder.environment().put("REDLOCK_NODES", nodes);
    builder.environment().remove("REDLOCK_CONFIG");
    builder.environment().remove("REDLOCK_PASSWORD");
    builder.environment().putAll(env);
    return builder.start();
  }

  /** Until a majority of the nodes hold a key named {@code key}. */
  private static void awaitHeld(String key) throws InterruptedException {
    Timing.await(
        key + " to be held",
        WAIT,
        () -> {
          int held = 0;
          for (int i = 0; i < 3; i++) {
            held += redis.command(i, "GET", key) != null ? 1 : 0;
          }
          return held >= 2;
        });
  }

  /** Whether the process is gone or has exited (a zombie waiting for init runs no code). */
  private static boolean ended(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    try {
      String text = Files.readString(stat);
      return text.substring(text.lastIndexOf(')') + 2).startsWith("Z");
    } catch (IOException gone) {
      return true;
    }
  }

  private static boolean hasText(Path file) {
    try {
      return Files.exists(file) && !Files.readString(file).isBlank();
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Waits for every node to be free of {@code key}: redlock exits once its release is decided,
   * and a node that timed out on a busy machine may still run it after that.
   */
  private static void assertFree(String key) throws InterruptedException {
    Timing.await("every node free of " + key, () -> redis.holding(key) == 0);
  }
}
