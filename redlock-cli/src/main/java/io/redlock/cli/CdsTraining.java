package io.redlock.cli;

import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The training run behind the class-data sharing archive that the {@code redlock} launcher
 * makes once per build: run under {@code -XX:ArchiveClassesAtExit}, it loads the classes of a
 * one-shot {@code exec} (picocli's model, the configuration, Lettuce and Netty, the connection
 * handshake, the restart guard's first probe, an acquisition, a command run under the lock, the
 * release and the close) and of {@code status}, so that later runs map them from the archive
 * instead of reading, verifying and linking them from the jar.
 *
 * <p>It runs the real commands, through {@link Main#commandLine()}, against three local
 * {@code redis-server} processes of the test kit on free loopback ports (declared fresh, with
 * a random password), which it stops before it returns; nothing of it is reachable from the
 * command line. Exit code 0 when every command did what it should, 1 otherwise (the launcher
 * then makes no archive from it).
 */
final class CdsTraining {
  private CdsTraining() {}

  public static void main(String[] args) throws IOException {
    int failures = 0;
    Path passwordFile = Files.createTempFile("redlock-cds", ".pw");
    try (RedisServers servers = RedisServers.startFresh(3)) {
      Files.writeString(passwordFile, servers.password() + "\n", StandardCharsets.UTF_8);
      List<String> connection = new ArrayList<>();
      connection.add("--nodes");
      List<String> addresses = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        addresses.add("redis://" + servers.address(i));
      }
      connection.add(String.join(",", addresses));
      connection.add("--password-file");
      connection.add(passwordFile.toString());
      failures += run(0, "--version");
      failures += run(0, with("exec", connection, "--no-wait", "redlock:cds-training", "true"));
      failures += run(0, with("status", connection, "redlock:cds-training"));
    } finally {
      Files.deleteIfExists(passwordFile);
    }
    System.exit(failures == 0 ? 0 : 1);
  }

  private static String[] with(String command, List<String> connection, String... rest) {
    List<String> words = new ArrayList<>();
    words.add(command);
    words.addAll(connection);
    words.addAll(List.of(rest));
    return words.toArray(String[]::new);
  }

  /** Runs one command line with its output captured; 0 if it exited {@code expected}. */
  private static int run(int expected, String... words) {
    StringWriter out = new StringWriter();
    int code =
        Main.commandLine()
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(out, true))
            .execute(words);
    if (code != expected) {
      System.err.println(
          "redlock CDS training: '" + words[0] + "' exited " + code + ": " + out.toString().trim());
      return 1;
    }
    return 0;
  }
}
