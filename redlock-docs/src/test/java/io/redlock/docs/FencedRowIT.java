package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.RedisServers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two processes guard one row of an embedded SQL database (H2) with fenced leases; the first
 * is stopped (SIGSTOP) until its lease has run out and the second has written, then resumed,
 * and its write is refused by the row: {@code UPDATE ... WHERE fence < ?} updates nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FencedRowIT {
  private static final long TTL_MILLIS = 1_000;

  @TempDir Path dir;
  private RedisServers servers;
  private String jdbcUrl;
  private final List<Holder> holders = new ArrayList<>();

  /** One {@link FencedRowExample} process, driven through its standard streams. */
  private static final class Holder {
    final Process process;
    final PrintStream commands;
    final BufferedReader answers;

    Holder(Process process) {
      this.process = process;
      this.commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
      this.answers =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** The next line that starts with {@code prefix}, without the prefix. */
    long next(String prefix) throws IOException {
      for (String line = answers.readLine(); line != null; line = answers.readLine()) {
        if (line.startsWith(prefix)) {
          return Long.parseLong(line.substring(prefix.length()));
        }
      }
      throw new AssertionError("the holder ended before printing '" + prefix + "'");
    }

    long write(String status) throws IOException {
      commands.println("write " + status);
      return next("updated ");
    }
  }

  @AfterEach
  void stop() throws Exception {
    for (Holder holder : holders) {
      signal("-CONT", holder.process.pid());
      holder.process.destroyForcibly();
    }
    for (Holder holder : holders) {
      holder.process.waitFor(30, TimeUnit.SECONDS);
    }
    if (jdbcUrl != null) {
      // This JVM opened the file first and serves it (AUTO_SERVER): the database stays open
      // while the killed holders' sessions wind down on its threads, and its lock file's
      // watchdog writes the file again if it is deleted. Closed now, before @TempDir deletes
      // the folder; else the watchdog can put a file back in the middle of the deletion.
      try (Connection db = DriverManager.getConnection(jdbcUrl)) {
        db.createStatement().execute("SHUTDOWN");
      }
    }
    if (servers != null) {
      servers.close();
    }
  }

  private Holder start(String jdbcUrl) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                FencedRowExample.class.getName(),
                jdbcUrl,
                Long.toString(TTL_MILLIS)));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().put(FencedRowExample.NODES_ENV, String.join(",", servers.uris()));
    Holder holder = new Holder(builder.start());
    holders.add(holder);
    return holder;
  }

  private static void signal(String signal, long pid) {
    try {
      Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).start();
      kill.waitFor(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new IllegalStateException("could not send " + signal + " to " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void theRowRefusesTheWriteOfAHolderPausedPastItsLease() throws Exception {
    servers = RedisServers.startFresh(3);
    jdbcUrl = "jdbc:h2:" + dir.resolve("invoices") + ";AUTO_SERVER=TRUE";
    FencedRowExample.createTable(jdbcUrl);
    // The first process to open the file serves it to the others: this one, which is never
    // stopped, rather than a holder.
    try (Connection server = DriverManager.getConnection(jdbcUrl)) {
      pauseTheFirstHolderPastItsLease(jdbcUrl);
    }
  }

  private void pauseTheFirstHolderPastItsLease(String jdbcUrl) throws Exception {
    Holder first = start(jdbcUrl);
    long firstToken = first.next("token ");
    signal("-STOP", first.process.pid()); // a GC pause, a stopped VM

    // The second holder waits (retrying) until the first one's lease has run out.
    Holder second = start(jdbcUrl);
    long secondToken = second.next("token ");
    assertThat(secondToken).isGreaterThan(firstToken);
    assertThat(second.write("refunded")).isEqualTo(1);

    signal("-CONT", first.process.pid());
    assertThat(first.write("paid")).as("rows the stale holder updated").isZero();

    try (Connection db = DriverManager.getConnection(jdbcUrl);
        ResultSet row =
            db.createStatement().executeQuery("SELECT status, fence FROM invoices WHERE id = 42")) {
      assertThat(row.next()).isTrue();
      assertThat(row.getString(1)).isEqualTo("refunded");
      assertThat(row.getLong(2)).isEqualTo(secondToken);
    }
  }
}
