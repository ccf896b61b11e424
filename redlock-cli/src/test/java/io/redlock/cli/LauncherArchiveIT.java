package io.redlock.cli;

import static io.redlock.cli.RedlockProcess.exitOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher ({@code ./redlock}) keeps a class-data sharing archive for one-shot commands: the
 * first {@code exec} writes one as it exits, a later run checks it in a JVM of its own before
 * it renames it into place, and runs after that map it. A truncated archive crashes the JVM that
 * maps it (SIGBUS), so one left by a run that died while writing it must be thrown away, never
 * mapped. The launcher and the shaded jar are copied to a folder of their own, laid out as in
 * the repository, and run against three real redis-server processes.
 */
class LauncherArchiveIT {

  private static RedisServers redis;
  private static String nodes;

  @TempDir Path root;
  private Path archives;

  @BeforeAll
  static void startRedis() {
    redis = RedisServers.start(3);
    nodes = String.join(",", redis.uris());
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine()
            .setOut(new PrintWriter(new StringWriter()))
            .setErr(new PrintWriter(err))
            .execute("init", "--nodes", nodes);
    assertThat(code).as(err.toString()).isEqualTo(ExitCodes.OK);
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @BeforeEach
  void layOut() throws IOException {
    Path target = Files.createDirectories(root.resolve("redlock-cli/target"));
    Files.copy(Path.of(System.getProperty("redlock.jar")), target.resolve("redlock.jar"));
    Path launcher = root.resolve("redlock");
    Files.copy(Path.of(System.getProperty("redlock.launcher")), launcher);
    assertThat(launcher.toFile().setExecutable(true)).isTrue();
    archives = target.resolve("cds");
  }

  @Test
  void theFirstExecWritesAnArchiveALaterRunChecksAndKeepsAndTheNextMaps() throws Exception {
    assertThat(exec(Map.of(), "arch-1")).isZero();
    assertThat(files(".tmp")).as("written by the first exec, named by its pid").hasSize(1);
    assertThat(files(".jsa")).isEmpty();

    assertThat(exec(Map.of(), "arch-1")).isZero();
    assertThat(files(".tmp")).isEmpty();
    assertThat(files(".jsa")).as("checked and renamed into place").hasSize(1);

    // -Xshare:on: the JVM refuses to start unless it maps the archive it is given.
    assertThat(exec(Map.of("JAVA_TOOL_OPTIONS", "-Xshare:on"), "arch-1")).isZero();
  }

  @Test
  void theArchiveOfARunThatNeverConnectedIsThrownAwayAndALaterExecWritesAnother() throws Exception {
    assertThat(exitOf(launch(Map.of(), "exec", "--help"))).isZero();
    List<Path> help = files(".tmp");
    assertThat(help).as("written, not marked").hasSize(1);
    assertThat(files(".connected")).isEmpty();

    assertThat(exitOf(launch(Map.of(), "exec", "--no-such-option", "r", "true")))
        .isEqualTo(ExitCodes.USAGE);
    assertThat(help.get(0)).as("thrown away by the next run").doesNotExist();
    assertThat(files(".tmp")).as("the bad run's own, not marked").hasSize(1);
    assertThat(files(".connected")).isEmpty();

    assertThat(exec(Map.of(), "arch-4")).isZero();
    assertThat(files(".jsa")).as("neither kept").isEmpty();
    assertThat(files(".tmp")).as("this run's own").hasSize(1);
    assertThat(files(".connected")).as("this run connected").hasSize(1);

    assertThat(exec(Map.of(), "arch-4")).isZero();
    assertThat(files(".jsa")).hasSize(1);
    assertThat(files(".tmp")).isEmpty();
    assertThat(files(".connected")).isEmpty();
    assertThat(exec(Map.of("JAVA_TOOL_OPTIONS", "-Xshare:on"), "arch-4")).isZero();
  }

  @Test
  void aTruncatedArchiveLeftByADeadRunIsThrownAwayNotMapped() throws Exception {
    assertThat(exec(Map.of(), "arch-2")).isZero();
    Path written = files(".tmp").get(0);
    String name = written.getFileName().toString();
    String base = name.substring(0, name.indexOf(".jsa.") + ".jsa".length());
    Path truncated = archives.resolve(base + "." + deadPid() + ".tmp");
    byte[] bytes = Files.readAllBytes(written);
    Files.write(truncated, Arrays.copyOf(bytes, bytes.length / 4));
    // marked as a run that connected: only the check in a JVM of its own can tell
    Files.move(
        archives.resolve(name + ".connected"),
        archives.resolve(truncated.getFileName() + ".connected"));
    Files.delete(written);

    assertThat(exec(Map.of(), "arch-2")).as("a run after the dead one").isZero();
    assertThat(truncated).doesNotExist();
    assertThat(files(".jsa")).isEmpty();
    assertThat(files(".tmp")).as("the later run's own").hasSize(1);
  }

  @Test
  void execsStartedTogetherEachWriteTheirOwnAndOneArchiveIsKept() throws Exception {
    List<Process> runs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      runs.add(start(Map.of(), "arch-3-" + i));
    }
    for (Process run : runs) {
      assertThat(exitOf(run)).isZero();
    }
    assertThat(files(".tmp")).hasSize(3);

    assertThat(exec(Map.of(), "arch-3")).isZero();
    assertThat(files(".tmp")).isEmpty();
    assertThat(files(".jsa")).hasSize(1);
    assertThat(exec(Map.of("JAVA_TOOL_OPTIONS", "-Xshare:on"), "arch-3")).isZero();
  }

  private List<Path> files(String suffix) throws IOException {
    if (!Files.isDirectory(archives)) {
      return List.of();
    }
    try (Stream<Path> all = Files.list(archives)) {
      return all.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
    }
  }

  /** The pid of a process that has ended: a run that died while it wrote its archive. */
  private static long deadPid() throws Exception {
    Process gone = new ProcessBuilder("true").start();
    assertThat(gone.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return gone.pid();
  }

  private int exec(Map<String, String> env, String resource) throws Exception {
    return exitOf(start(env, resource));
  }

  private Process start(Map<String, String> env, String resource) throws IOException {
    return launch(env, "exec", "--no-wait", resource, "true");
  }

  private Process launch(Map<String, String> env, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(root.resolve("redlock").toString());
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(root.toFile())
            .redirectOutput(ProcessBuilder.Redirect.INHERIT)
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    Map<String, String> environment = builder.environment();
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    environment.put("PATH", javaBin + ":" + environment.getOrDefault("PATH", "/usr/bin:/bin"));
    environment.put("REDLOCK_NODES", nodes);
    environment.remove("REDLOCK_CONFIG");
    environment.remove("REDLOCK_PASSWORD");
    environment.remove("JAVA_TOOL_OPTIONS");
    environment.putAll(env);
    return builder.start();
  }
}
