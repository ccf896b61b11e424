package io.redlock.docs;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * The example of docs/fencing.md as a process of its own: it takes a fenced lease on an
 * invoice, and on each {@code write STATUS} line of its standard input writes the invoice's
 * row of an H2 database, guarded by its fencing token. {@link FencedRowIT} runs two of them
 * against one database and pauses one past its lease.
 *
 * <p>Arguments: the JDBC URL and the lease's ttl in milliseconds; the node URIs come in
 * {@value #NODES_ENV}. It prints {@code token N} once it holds the lease, and
 * {@code updated K} (rows) after each write.
 */
public final class FencedRowExample {
  private FencedRowExample() {}

  /** Creates the invoices table with one unpaid invoice, number 42. */
  static void createTable(String jdbcUrl) throws SQLException {
    try (Connection db = DriverManager.getConnection(jdbcUrl);
        var create = db.createStatement()) {
      create.execute(
          "CREATE TABLE invoices (id INT PRIMARY KEY, status VARCHAR(20), fence BIGINT)");
      create.execute("INSERT INTO invoices VALUES (42, 'unpaid', 0)");
    }
  }

  /**
   * Writes the invoice's status with the lease's token: the row takes the write only if no
   * larger or equal token has written it before.
   *
   * @return the rows updated: 1, or 0 for a stale token
   */
  static int write(Connection db, String status, long token) throws SQLException {
    try (PreparedStatement update =
        db.prepareStatement(
            "UPDATE invoices SET status = ?, fence = ? WHERE id = ? AND fence < ?")) {
      update.setString(1, status);
      update.setLong(2, token);
      update.setInt(3, 42);
      update.setLong(4, token);
      return update.executeUpdate();
    }
  }

  /** The environment variable with the node URIs, comma-separated. */
  static final String NODES_ENV = "FENCED_ROW_NODES";

  public static void main(String[] args) throws Exception {
    String jdbcUrl = args[0];
    Duration ttl = Duration.ofMillis(Long.parseLong(args[1]));
    // The node URIs carry the test servers' password: from the environment, which only this
    // user can read, not from the command line, which ps shows everyone.
    List<String> nodes = List.of(System.getenv(NODES_ENV).split(","));
    RedlockConfig config = RedlockConfig.builder().nodes(nodes).fencing(true).build();
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("invoice:42", ttl);
        Connection db = DriverManager.getConnection(jdbcUrl)) {
      System.out.println("token " + lease.fencingToken());
      BufferedReader commands =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = commands.readLine(); line != null; line = commands.readLine()) {
        if (line.startsWith("write ")) {
          // No lease.ensureValid() here: a holder paused past its lease writes anyway, as a
          // process stopped between its check and its write would. The row decides.
          System.out.println("updated " + write(db, line.substring(6), lease.fencingToken()));
        }
      }
    }
  }
}
