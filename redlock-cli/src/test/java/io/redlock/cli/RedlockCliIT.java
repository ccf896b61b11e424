package io.redlock.cli;

import static io.redlock.cli.RedlockProcess.exitOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisBinary;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code redlock exec} and {@code status} commands against three real redis-server
 * processes: in process through picocli where the exit code is all that matters, and as
 * separate {@code redlock} processes (the shaded jar when the build made it) for overlap,
 * lease loss and signals.
 */
class RedlockCliIT {

  /** How long a child process or a node may take to show what is awaited, before scaling. */
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static RedisServers redis;
  private static String nodes;

  @TempDir Path dir;

  @BeforeAll
  static void startRedis() {
    redis = RedisServers.start(3);
    nodes = String.join(",", redis.uris());
    // A brand-new cluster: declared fresh as an operator would, so that the restart guard
    // (on, as in production) counts its nodes at once.
    StringWriter out = new StringWriter();
    assertThat(run(out, "init", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
    assertThat(out.toString()).contains("every node is declared fresh");
  }

  /**
   * The server version doctor shows: the number for Redis; for Valkey, which reports the Redis
   * version it is compatible with beside its own, its name and own version ("valkey 8.0.1").
   */
  static String shownVersion() {
    String version = RedisBinary.version().orElseThrow();
    return RedisBinary.serverName().orElseThrow().equals("valkey") ? "valkey " + version : version;
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @Test
  void twoExecsOnOneResourceRunOneAfterTheOther() throws Exception {
    Path log = dir.resolve("log");
    String script = "echo start >> '" + log + "'; sleep 1; echo end >> '" + log + "'";
    Process first = redlock("exec", "--wait", "20s", "overlap", "--", "sh", "-c", script);
    Process second = redlock("exec", "--wait", "20s", "overlap", "--", "sh", "-c", script);
    assertThat(exitOf(first)).isZero();
    assertThat(exitOf(second)).isZero();
    assertThat(Files.readAllLines(log)).containsExactly("start", "end", "start", "end");
    assertFree("overlap");
  }

  @Test
  void execWithFencingGivesEachRunALargerToken() throws Exception {
    Path log = dir.resolve("tokens");
    String script = "echo \"$REDLOCK_FENCING_TOKEN\" >> '" + log + "'";
    for (int i = 0; i < 3; i++) {
      assertThat(run("exec", "--nodes", nodes, "--fencing", "fenced-job", "sh", "-c", script))
          .isZero();
    }
    // Strictly increasing, not gap-free: an attempt that fails its confirmation round (a vote
    // timed out under load) uses up its number, and the retry that succeeds gets a larger one.
    List<String> tokens = Files.readAllLines(log);
    assertThat(tokens).hasSize(3);
    long previous = 0;
    for (String token : tokens) {
      assertThat(token).as("token of run after %d", previous).matches("[1-9][0-9]*");
      assertThat(Long.parseLong(token)).isGreaterThan(previous);
      previous = Long.parseLong(token);
    }
    assertThat(run("exec", "--nodes", nodes, "unfenced-job", "sh", "-c", script)).isZero();
    assertThat(Files.readAllLines(log)).hasSize(4).endsWith("");
  }

  @Test
  void exitCodes() throws Exception {
    assertThat(run("exec", "--nodes", nodes, "codes", "--", "sh", "-c", "exit 7")).isEqualTo(7);
    assertThat(run("exec", "--nodes", nodes, "codes", "true")).isZero();
    assertThat(run("exec", "--nodes", nodes, "codes", "no-such-command-redlock-it"))
        .isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(run("exec", "--nodes", nodes, "codes", "sh", "-c", "kill -KILL $$"))
        .isEqualTo(ExitCodes.SIGNAL_BASE + 9);
    assertFree("codes");

    for (int i = 0; i < 3; i++) {
      redis.command(i, "SET", "held", "someone-else", "PX", "60000");
    }
    try {
      assertThat(run("exec", "--nodes", nodes, "--no-wait", "held", "true"))
          .isEqualTo(ExitCodes.NOT_ACQUIRED);
      long start = System.nanoTime();
      assertThat(run("exec", "--nodes", nodes, "--wait", "500ms", "held", "true"))
          .isEqualTo(ExitCodes.NOT_ACQUIRED);
      // It retried (a 200ms +- 100ms delay between attempts), and gave up by --wait: the
      // library starts no attempt that could not finish within it, so it may stop a little early.
      assertThat(System.nanoTime() - start)
          .isBetween(TimeUnit.MILLISECONDS.toNanos(100), TimeUnit.SECONDS.toNanos(5));
    } finally {
      for (int i = 0; i < 3; i++) {
        redis.command(i, "DEL", "held");
      }
    }

    String unreachable;
    try (RedisServers gone = RedisServers.start(1)) {
      unreachable = gone.uri(0);
    }
    assertThat(
            run(
                "exec",
                "--nodes",
                unreachable,
                "--connect-timeout",
                "200ms",
                "--wait",
                "300ms",
                "nowhere",
                "true"))
        .isEqualTo(ExitCodes.FAILURE);
    assertThat(run("exec", "--nodes", nodes, "--wait", "nonsense", "x", "true"))
        .isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void lostLeaseKillsTheChild() throws Exception {
    Path marker = dir.resolve("marker");
    Process exec =
        redlock(
            "exec",
            "--ttl",
            "1s",
            "--grace",
            "1s",
            "lost",
            "--",
            "sh",
            "-c",
            "trap 'echo term >> \""
                + marker
                + "\"' TERM; echo started >> '"
                + marker
                + "';"
                + " while true; do sleep 0.1; done");
    Timing.await("the child to start", WAIT, () -> Files.exists(marker));
    for (int i = 0; i < 3; i++) {
      redis.command(i, "SET", "lost", "someone-else", "PX", "60000");
    }
    assertThat(exitOf(exec)).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readAllLines(marker)).containsExactly("started", "term");
    for (int i = 0; i < 3; i++) {
      assertThat(redis.command(i, "GET", "lost")).isEqualTo("someone-else");
      redis.command(i, "DEL", "lost");
    }
  }

  @Test
  void signalToRedlockReachesTheChildAndReleasesTheLock() throws Exception {
    Path marker = dir.resolve("marker");
    Process exec =
        redlock(
            "exec",
            "sig",
            "--",
            "sh",
            "-c",
            "trap 'echo term >> \""
                + marker
                + "\"; exit 42' TERM;"
                + " echo \"$REDLOCK_RESOURCE $REDLOCK_TOKEN\" >> '"
                + marker
                + "';"
                + " while true; do sleep 0.1; done");
    Timing.await(
        "the child to start", WAIT, () -> Files.exists(marker) && !readQuietly(marker).isEmpty());
    String[] env = Files.readAllLines(marker).get(0).split(" ");
    assertThat(env[0]).isEqualTo("sig");
    assertThat(env[1]).matches("[0-9a-f]{40}");
    // the lock was decided by a majority: a node whose vote timed out may never hold it
    assertThat(redis.holding("sig", env[1]))
        .as("nodes holding the token")
        .isGreaterThanOrEqualTo(2);

    StringWriter status = new StringWriter();
    assertThat(run(status, "status", "--nodes", nodes, "sig")).isEqualTo(ExitCodes.OK);
    assertThat(status.toString()).contains("verdict: held").contains(env[1].substring(0, 8));

    exec.destroy(); // SIGTERM to redlock
    assertThat(exitOf(exec)).isEqualTo(42);
    assertThat(Files.readAllLines(marker)).hasSize(2).last().isEqualTo("term");
    assertFree("sig");
  }

  @Test
  void statusOnFreeHeldAndSplitResources() {
    StringWriter free = new StringWriter();
    assertThat(run(free, "status", "--nodes", nodes, "nobody")).isEqualTo(ExitCodes.OK);
    assertThat(free.toString()).contains("verdict: free").contains("master");
    assertThat(free.toString().lines().filter(l -> l.startsWith("redis://")))
        .hasSize(3)
        // NODE REACHABLE ROLE UPTIME GUARD HELD TTL TOKEN (declared fresh by init)
        .allMatch(
            l ->
                l.matches(
                    "\\S+\\s+yes\\s+master\\s+\\S+\\s+counts \\(data known complete\\)\\s+no\\s+-\\s+-.*"));

    redis.command(0, "SET", "split", "aaaaaaaaaa", "PX", "60000");
    redis.command(1, "SET", "split", "bbbbbbbbbb", "PX", "60000");
    StringWriter split = new StringWriter();
    assertThat(run(split, "status", "--nodes", nodes, "split")).isEqualTo(ExitCodes.FAILURE);
    assertThat(split.toString()).contains("verdict: unknown");

    redis.command(2, "SET", "split", "aaaaaaaaaa", "PX", "60000");
    StringWriter held = new StringWriter();
    assertThat(run(held, "status", "--nodes", nodes, "split")).isEqualTo(ExitCodes.OK);
    assertThat(held.toString()).contains("verdict: held").contains("aaaaaaaa");
    for (int i = 0; i < 3; i++) {
      redis.command(i, "DEL", "split");
    }
  }

  /**
   * With no node answering, the verdict is unknown and the exit code says so: a script that
   * checks a lock with 'redlock status' must not read an outage as success.
   */
  @Test
  void statusExitsWithFailureWhenNoNodeAnswers() {
    String stopped;
    try (RedisServers gone = RedisServers.start(3)) {
      stopped = String.join(",", gone.uris());
    }
    StringWriter out = new StringWriter();
    assertThat(run(out, "status", "--nodes", stopped, "--connect-timeout", "200ms", "nobody"))
        .isEqualTo(ExitCodes.FAILURE);
    assertThat(out.toString())
        .contains("verdict: unknown (0 of 3 node(s) answered, 0 hold the key");
    assertThat(out.toString().lines().filter(l -> l.startsWith("redis://")))
        .hasSize(3)
        .allMatch(l -> l.matches("\\S+\\s+no\\s+-.*"));
  }

  @Test
  void initRefusesAClusterWithLockKeysNamingTheNodeAndForceWritesAnyway() {
    try (RedisServers used = RedisServers.start(3)) {
      String usedNodes = String.join(",", used.uris());
      used.command(1, "SET", "orders:42", "someone", "PX", "60000");
      StringWriter out = new StringWriter();
      assertThat(run(out, "init", "--nodes", usedNodes)).isEqualTo(ExitCodes.VIOLATION);
      assertThat(out.toString())
          .contains(used.address(1) + "  refused: holds 1 key(s)")
          .contains("orders:42");
      assertThat(used.command(0, "GET", "__redlock__:fresh")).isNull();
      assertThat(run("init", "--nodes", usedNodes, "--force")).isEqualTo(ExitCodes.OK);
      assertThat((String) used.command(1, "GET", "__redlock__:fresh"))
          .startsWith("redlock-node/2 run=")
          .contains(" why=init ")
          .containsPattern(" cluster=[0-9a-f]{12}/3$");
    }
  }

  @Test
  void doctorIsHealthyOnAGoodClusterAndFailsOnEvictionAndOnOneServerTwice() {
    StringWriter healthy = new StringWriter();
    assertThat(run(healthy, "doctor", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
    assertThat(healthy.toString())
        .contains("verdict: healthy")
        .contains("counts (data known complete)")
        .contains(" " + shownVersion() + " "); // the VERSION column

    redis.command(2, "CONFIG", "SET", "maxmemory", "100mb");
    redis.command(2, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
    try {
      StringWriter evicting = new StringWriter();
      // the output goes with a failure: once in five Valkey runs this found no problem, cause
      // not known yet
      assertThat(run(evicting, "doctor", "--nodes", nodes))
          .as("doctor's exit code; its output:%n%s", evicting)
          .isEqualTo(ExitCodes.VIOLATION);
      assertThat(evicting.toString())
          .contains("PROBLEM " + redis.address(2) + " eviction")
          .contains("allkeys-lru")
          .contains("verdict: safety problem");
      StringWriter json = new StringWriter();
      assertThat(run(json, "doctor", "--json", "--nodes", nodes)).isEqualTo(ExitCodes.VIOLATION);
      assertThat(json.toString())
          .startsWith("{\"verdict\":\"safety problem\"")
          .contains("\"maxmemoryPolicy\":\"allkeys-lru\"");
    } finally {
      redis.command(2, "CONFIG", "SET", "maxmemory", "0");
      redis.command(2, "CONFIG", "SET", "maxmemory-policy", "noeviction");
    }

    String twice = nodes + ",redis://:" + redis.password() + "@localhost:" + redis.port(0);
    StringWriter duplicate = new StringWriter();
    assertThat(run(duplicate, "doctor", "--nodes", twice)).isEqualTo(ExitCodes.VIOLATION);
    assertThat(duplicate.toString()).contains("the same server as " + redis.address(0));
  }

  @Test
  void doctorShowsTheMaxTtlRegisterAndDelResetsIt() {
    // A client with a longer maxTtl raises its value on every node with its first probes.
    try (io.redlock.Redlock longer =
        io.redlock.Redlock.create(
            io.redlock.RedlockConfig.builder()
                .nodes(List.of(nodes.split(",")))
                .maxTtl(Duration.ofMinutes(2))
                .build())) {
      StringWriter table = new StringWriter();
      assertThat(run(table, "doctor", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
      assertThat(table.toString())
          .contains("REGISTER")
          .containsPattern("120s \\(lapses in 1[12]\\d\\.\\ds\\)")
          .contains("WARN " + redis.address(0) + " register")
          .contains("longer than 60s");
      StringWriter json = new StringWriter();
      assertThat(run(json, "doctor", "--json", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
      assertThat(json.toString()).contains("\"maxTtlRegister\":{\"maxTtlMillis\":120000,");
    } finally {
      // the reset docs/production.md gives, once the longer client is gone
      for (int i = 0; i < redis.size(); i++) {
        redis.command(i, "DEL", "__redlock__:max-ttl");
      }
    }
    StringWriter after = new StringWriter();
    assertThat(run(after, "doctor", "--nodes", nodes)).isEqualTo(ExitCodes.OK);
    assertThat(after.toString()).doesNotContain("lapses in").doesNotContain(" register:");
  }

  /**
   * A command the library runs only inside its scripts, refused by the ACL: the server says so
   * in the script's error, worded differently by Redis 6.2 and by Redis 7.2 and Valkey; doctor
   * names the command either way.
   */
  @Test
  void doctorNamesACommandTheAclRefusesInsideAScript() {
    String user = "doctor-no-pexpire";
    redis.command(
        1, "ACL", "SETUSER", user, "on", ">no-pexpire-pw", "~*", "&*", "+@all", "-pexpire");
    try {
      String noPexpire = "redis://" + user + ":no-pexpire-pw@127.0.0.1:" + redis.port(1);
      String shown = StatusCommand.displayName(noPexpire);
      StringWriter out = new StringWriter();
      run(out, "doctor", "--nodes", redis.uri(0) + "," + noPexpire + "," + redis.uri(2));
      assertThat(out.toString())
          .containsPattern(
              "WARN " + java.util.regex.Pattern.quote(shown) + " acl: refuses pexpire \\(")
          .doesNotContain("refuses eval");
    } finally {
      redis.command(1, "ACL", "DELUSER", user);
    }
  }

  @Test
  void doctorShowsWhatItReadOfANodeThatRefusesOnlyTime() {
    // Node 2 reached as a user that may run everything but TIME: the restart guard's read
    // (INFO and TIME) fails, but INFO alone still says what the node is.
    String user = "doctor-no-time";
    redis.command(2, "ACL", "SETUSER", user, "on", ">no-time-pw", "~*", "&*", "+@all", "-time");
    try {
      String noTime = "redis://" + user + ":no-time-pw@127.0.0.1:" + redis.port(2);
      String shown = StatusCommand.displayName(noTime);
      String withNoTime = redis.uri(0) + "," + redis.uri(1) + "," + noTime;
      StringWriter out = new StringWriter();
      run(out, "doctor", "--nodes", withNoTime);
      String version = shownVersion();
      assertThat(out.toString())
          .containsPattern(
              java.util.regex.Pattern.quote(shown)
                  + "\\s+yes\\s+master\\s+"
                  + java.util.regex.Pattern.quote(version)
                  + "\\s+\\d+s\\s+never \\(probe refused\\)\\s+\\S+\\s+\\?\\s+maxmemory 0"
                  + " noeviction\\s")
          .contains("WARN " + shown + " acl")
          .contains("time (")
          .doesNotContain("PROBLEM " + shown + " role")
          .doesNotContain(shown + " eviction")
          .doesNotContain(shown + " guard");
      StringWriter json = new StringWriter();
      run(json, "doctor", "--json", "--nodes", withNoTime);
      assertThat(json.toString())
          .contains("\"role\":\"master\",\"version\":\"" + version + "\"")
          .doesNotContain("\"role\":\"?\"");
    } finally {
      redis.command(2, "ACL", "DELUSER", user);
    }
  }

  @Test
  void statusCountsTheKeyOfANodeThatRefusesOnlyTime() {
    // Node 2 reached as a user without TIME: the guard's read fails there, but GET and PTTL
    // still say who holds the key, so the verdict stands on all three nodes.
    String user = "status-no-time";
    redis.command(2, "ACL", "SETUSER", user, "on", ">no-time-pw", "~*", "&*", "+@all", "-time");
    try {
      for (int i = 0; i < 3; i++) {
        redis.command(i, "SET", "no-time", "cccccccccc", "PX", "60000");
      }
      String noTime = "redis://" + user + ":no-time-pw@127.0.0.1:" + redis.port(2);
      StringWriter out = new StringWriter();
      assertThat(
              run(
                  out,
                  "status",
                  "--nodes",
                  redis.uri(0) + "," + redis.uri(1) + "," + noTime,
                  "no-time"))
          .isEqualTo(ExitCodes.OK);
      assertThat(out.toString())
          .contains("verdict: held")
          .containsPattern(
              java.util.regex.Pattern.quote(StatusCommand.displayName(noTime))
                  + "\\s+yes\\s+\\?\\s+");
    } finally {
      redis.command(2, "ACL", "DELUSER", user);
      for (int i = 0; i < 3; i++) {
        redis.command(i, "DEL", "no-time");
      }
    }
  }

  @Test
  void doctorShowsAnUnreachableNodeAsARowNotAStackTrace() throws Exception {
    int closedPort;
    try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
      closedPort = probe.getLocalPort();
    }
    String unreachable = "redis://127.0.0.1:" + closedPort;
    // the cluster's three nodes with one of them unreachable: a fourth listed would contradict
    // the node count 'redlock init' declared
    String withUnreachable = redis.uri(0) + "," + redis.uri(1) + "," + unreachable;
    StringWriter out = new StringWriter();
    assertThat(run(out, "doctor", "--nodes", withUnreachable, "--connect-timeout", "500ms"))
        .as("doctor's output:%n%s", out)
        .isEqualTo(ExitCodes.OK);
    assertThat(out.toString())
        .containsPattern(java.util.regex.Pattern.quote(unreachable) + "\\s+no: ")
        .contains("WARN " + unreachable + " reachable")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
    StringWriter none = new StringWriter();
    assertThat(run(none, "doctor", "--nodes", unreachable, "--connect-timeout", "500ms"))
        .isEqualTo(ExitCodes.FAILURE);
  }

  @Test
  void execAndStatusTrustAPrivateCaGivenWithTlsCa() {
    try (RedisServers tls = RedisServers.builder().count(3).tls(true).fresh(true).start()) {
      List<String> uris = new ArrayList<>();
      for (int i = 0; i < tls.size(); i++) {
        uris.add(tls.tlsUri(i));
      }
      String tlsNodes = String.join(",", uris);
      String ca = tls.tlsCertificate().toString();
      assertThat(run("exec", "--nodes", tlsNodes, "--tls-ca", ca, "tls-job", "true")).isZero();
      StringWriter status = new StringWriter();
      assertThat(run(status, "status", "--nodes", tlsNodes, "--tls-ca", ca, "tls-job"))
          .isEqualTo(ExitCodes.OK);
      assertThat(status.toString().lines().filter(l -> l.startsWith("rediss://")))
          .hasSize(3)
          .allMatch(l -> l.matches("\\S+\\s+yes\\s+master\\s.*"));
      // Without it the JVM's trust store is used, which does not know the nodes' CA.
      assertThat(
              run(
                  "exec",
                  "--nodes",
                  tlsNodes,
                  "--connect-timeout",
                  "1s",
                  "--wait",
                  "500ms",
                  "tls-job",
                  "true"))
          .isEqualTo(ExitCodes.FAILURE);
    }
  }

  // --- helpers ---

  private static int run(String... args) {
    return run(new StringWriter(), args);
  }

  private static int run(StringWriter out, String... args) {
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
    System.err.print(err);
    return code;
  }

  /** Starts {@code redlock ARGS} as a process with REDLOCK_NODES set. */
  private static Process redlock(String... args) throws IOException {
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
    return builder.start();
  }

  /**
   * Waits for every node to be free of {@code key}: redlock exits once its release is decided,
   * and a node that timed out on a busy machine may still run it after that.
   */
  private static void assertFree(String key) throws InterruptedException {
    Timing.await("every node free of " + key, () -> redis.holding(key) == 0);
  }

  private static String readQuietly(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "";
    }
  }
}
