package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each {@code redlock} command run as exactly the user the README's "Running in production"
 * gives it, read from the README itself: {@code init} as {@code redlock-init}, {@code exec}
 * and {@code status} as {@code locker}, {@code doctor} as {@code redlock-doctor}, all under the
 * key prefix {@code app:}. Each succeeds, and no node's {@code ACL LOG} records a refusal but
 * the optional {@code CONFIG GET} of the library's restart guard (docs/production.md, section
 * 1), which {@code redlock-doctor} is granted.
 */
class CliAclIT {

  private static final Path README = Path.of("..", "README.md");

  private static RedisServers redis;
  private static String nodes;

  @TempDir static Path dir;

  @BeforeAll
  static void startRedis() throws Exception {
    // An owner user, the default user off: nothing gets in without the users below.
    redis = RedisServers.builder().count(3).aclUser("owner", "owner-pw-cli-acl").start();
    nodes = String.join(",", redis.uris());
    for (String user : List.of("locker", "redlock-doctor", "redlock-init")) {
      List<String> rules = documentedRules(user);
      for (int i = 0; i < redis.size(); i++) {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user));
        command.addAll(rules);
        command.add(">" + user + "-test-pw");
        redis.command(i, command.toArray(String[]::new));
      }
      Files.writeString(dir.resolve(user + ".password"), user + "-test-pw\n");
      Files.setPosixFilePermissions(
          dir.resolve(user + ".password"),
          java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  /** The rules of {@code ACL SETUSER user ...} as the README writes them, password left out. */
  static List<String> documentedRules(String user) throws Exception {
    String prefix = "ACL SETUSER " + user + " ";
    List<String> lines =
        Files.readAllLines(README).stream().filter(line -> line.startsWith(prefix)).toList();
    assertThat(lines).as("the README's ACL line for " + user).hasSize(1);
    return Arrays.stream(lines.get(0).substring(prefix.length()).split(" "))
        .filter(rule -> !rule.startsWith(">"))
        .toList();
  }

  @Test
  void everyCommandRunsAsItsDocumentedUserAndNothingIsRefused() throws Exception {
    resetAclLogs();
    StringWriter init = new StringWriter();
    assertThat(run(init, "init", "redlock-init")).isEqualTo(ExitCodes.OK);
    assertThat(init.toString()).contains("every node is declared fresh");
    assertThat(refusalsBut("config|get")).as("refused to redlock-init").isEmpty();

    Path ran = dir.resolve("ran");
    assertThat(
            run(
                new StringWriter(),
                "exec",
                "locker",
                "acl-job",
                "sh",
                "-c",
                "echo \"$REDLOCK_RESOURCE\" > '" + ran + "'"))
        .isZero();
    assertThat(Files.readString(ran).trim()).isEqualTo("acl-job");
    // released once a majority answered: the last node may answer later
    Timing.await("every node free of app:acl-job", () -> redis.holding("app:acl-job") == 0);

    // fencing as the same user: counters, the record check inside the lock script, INFO memory
    Path token = dir.resolve("token");
    assertThat(
            run(
                new StringWriter(),
                "exec",
                "locker",
                "--fencing",
                "acl-fenced",
                "sh",
                "-c",
                "echo \"$REDLOCK_FENCING_TOKEN\" > '" + token + "'"))
        .isZero();
    assertThat(Long.parseLong(Files.readString(token).trim())).isPositive();

    redis.command(0, "SET", "app:held", "cccccccccc", "PX", "60000");
    redis.command(1, "SET", "app:held", "cccccccccc", "PX", "60000");
    StringWriter status = new StringWriter();
    assertThat(run(status, "status", "locker", "held")).isEqualTo(ExitCodes.OK);
    assertThat(status.toString()).contains("verdict: held").doesNotContain("NOPERM");
    assertThat(status.toString().lines().filter(l -> l.startsWith("redis://")))
        .hasSize(3)
        .allMatch(l -> l.matches("\\S+\\s+yes\\s+master\\s.*"));
    assertThat(refusalsBut("config|get")).as("refused to locker").isEmpty();

    resetAclLogs();
    StringWriter doctor = new StringWriter();
    assertThat(run(doctor, "doctor", "redlock-doctor")).isEqualTo(ExitCodes.OK);
    assertThat(doctor.toString()).contains("verdict: healthy").doesNotContain(" acl ");
    assertThat(refusals()).as("refused to redlock-doctor").isEmpty();
  }

  private static void resetAclLogs() {
    for (int i = 0; i < redis.size(); i++) {
      redis.command(i, "ACL", "LOG", "RESET");
    }
  }

  /** What each node's ACL LOG recorded: "user object reason" per entry. */
  private static List<String> refusals() {
    return refusalsBut(null);
  }

  /** As {@link #refusals()}, without those of {@code allowed} ({@code "config|get"}). */
  private static List<String> refusalsBut(String allowed) {
    List<String> seen = new ArrayList<>();
    for (int i = 0; i < redis.size(); i++) {
      for (Object entry : (List<?>) redis.command(i, "ACL", "LOG")) {
        List<?> fields = (List<?>) entry;
        String user = null;
        String object = null;
        String reason = null;
        for (int f = 0; f + 1 < fields.size(); f += 2) {
          switch (String.valueOf(fields.get(f))) {
            case "username" -> user = String.valueOf(fields.get(f + 1));
            case "object" -> object = String.valueOf(fields.get(f + 1));
            case "reason" -> reason = String.valueOf(fields.get(f + 1));
            default -> {}
          }
        }
        // Redis 6.2 logs a refused subcommand by its command ("config"), Redis 7 and Valkey
        // by both ("config|get")
        boolean isAllowed =
            allowed != null && (allowed.equals(object) || allowed.startsWith(object + "|"));
        if (!isAllowed) {
          seen.add("node " + i + ": " + user + " " + object + " " + reason);
        }
      }
    }
    return seen;
  }

  /**
   * Runs {@code redlock COMMAND} connected as {@code user} (with the README's key prefix),
   * followed by {@code rest}.
   */
  private static int run(StringWriter out, String command, String user, String... rest) {
    List<String> words =
        new ArrayList<>(
            List.of(
                command,
                "--nodes",
                nodes,
                "--username",
                user,
                "--password-file",
                dir.resolve(user + ".password").toString(),
                "--key-prefix",
                "app:"));
    words.addAll(List.of(rest));
    StringWriter err = new StringWriter();
    int code =
        Main.commandLine()
            .setOut(new PrintWriter(out))
            .setErr(new PrintWriter(err))
            .execute(words.toArray(String[]::new));
    System.err.print(err);
    out.append(err.toString());
    return code;
  }
}
