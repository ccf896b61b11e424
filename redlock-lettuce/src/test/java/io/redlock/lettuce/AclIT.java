package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ACL users and passwords: from the URI, from the configuration, and a wrong one; the least
 * privileges the README gives, with the restart guard on; and a user that lacks one of
 * them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AclIT {
  private static final String USER = "locker";
  private static final String PASSWORD = "pa55-w0rd-never-shown";
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.builder().count(3).aclUser(USER, PASSWORD).fresh(true).start();
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static List<String> urisWith(String userInfo) {
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      uris.add("redis://" + userInfo + "@" + servers.host() + ":" + servers.port(i));
    }
    return uris;
  }

  /**
   * Waits until node {@code node} holds {@code expected} under {@code key}: acquire returns at
   * a majority, and the last node's SET may still be on its way.
   */
  private static void awaitNodeHolding(int node, String key, String expected)
      throws InterruptedException {
    Timing.await(
        "node " + node + " to hold " + key,
        Duration.ofSeconds(5),
        () -> expected.equals(servers.command(node, "GET", key)));
  }

  @Test
  void credentialsInTheUriAreUsed() throws Exception {
    RedlockConfig config = RedlockConfig.builder().nodes(urisWith(USER + ":" + PASSWORD)).build();
    assertThat(config.toString()).doesNotContain(PASSWORD);
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("acl:uri", Duration.ofSeconds(10))) {
      awaitNodeHolding(0, "acl:uri", lease.token());
      assertThat(redlock.nodes()).allSatisfy(node -> assertThat(node).doesNotContain(PASSWORD));
    }
  }

  @Test
  void credentialsFromTheConfigurationAreUsed() throws Exception {
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).username(USER).password(PASSWORD).build();
    assertThat(config.toString()).doesNotContain(PASSWORD).contains("password=****");
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("acl:config", Duration.ofSeconds(10))) {
      awaitNodeHolding(1, "acl:config", lease.token());
    }
  }

  /**
   * The ACL of the README's "Running in production", word for word (the user name, password
   * and key pattern aside: the README's {@code ~app:*} goes with a key prefix, these tests use
   * none): what the library needs, and nothing more. The CLI's CliAclIT runs the README's
   * users themselves, as they are written.
   */
  static final String[] LEAST_PRIVILEGE = {
    "resetkeys",
    "~*",
    "resetchannels",
    "-@all",
    "+set",
    "+get",
    "+del",
    "+exists",
    "+pexpire",
    "+pttl",
    "+eval",
    "+evalsha",
    "+script|load",
    "+info",
    "+time",
    "+hello",
    "+ping"
  };

  /** Creates {@code user} on every node, with the password {@code user + "-pw-1"}. */
  private static void createUser(String user, String... rules) {
    String password = user + "-pw-1";
    for (int i = 0; i < servers.size(); i++) {
      java.util.List<String> args =
          new java.util.ArrayList<>(
              java.util.List.of("ACL", "SETUSER", user, "reset", "on", ">" + password));
      args.addAll(java.util.List.of(rules));
      servers.command(i, args.toArray(String[]::new));
    }
  }

  /** The least-privilege rules ({@link #LEAST_PRIVILEGE}) without {@code rule}. */
  private static String[] leastPrivilegeWithout(String rule) {
    List<String> rules = new ArrayList<>(List.of(LEAST_PRIVILEGE));
    assertThat(rules.remove(rule)).as("%s is a least-privilege rule", rule).isTrue();
    return rules.toArray(String[]::new);
  }

  /** A configuration over every node as {@code user}, whose password {@link #createUser} set. */
  private static RedlockConfig.Builder configAs(String user) {
    return RedlockConfig.builder().nodes(servers.uris()).username(user).password(user + "-pw-1");
  }

  @Test
  void theLeastPrivilegesOfTheReadmeLockExtendAndReleaseWithTheGuardOn() throws Exception {
    createUser("least", LEAST_PRIVILEGE);
    RedlockConfig config = configAs("least").build();
    assertThat(config.restartGuard()).isTrue();
    try (Redlock redlock = Redlock.create(config)) {
      try (Lease lease = redlock.acquire("acl:least", Duration.ofSeconds(10))) {
        assertThat(lease.extend(Duration.ofSeconds(10))).isTrue();
        // granted by a majority; node 2 may be the one answering last
        assertThat(servers.holding("acl:least", lease.token())).isGreaterThanOrEqualTo(2);
        awaitNodeHolding(2, "acl:least", lease.token());
      }
      try (Lease both = redlock.acquire(List.of("acl:a", "acl:b"), Duration.ofSeconds(10))) {
        assertThat(both.extend(Duration.ofSeconds(10))).isTrue();
      }
      // release() returns once a majority answered; node 0 may be the one answering last
      Timing.await(
          "node 0 to free acl:least",
          Duration.ofSeconds(5),
          () -> servers.command(0, "GET", "acl:least") == null);
    }
  }

  @Test
  void aUserLackingOneCommandIsNamedOnceAtWarnPerNodeWhenCreateRuns() throws Exception {
    createUser("no-evalsha", leastPrivilegeWithout("+evalsha"));
    RedlockConfig config = configAs("no-evalsha").build();
    // slf4j-simple (the tests' binding) writes to whatever System.err is at each line
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    java.io.PrintStream original = System.err;
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    String text;
    try (Redlock redlock = Redlock.create(config)) {
      Timing.await(
          "a WARN naming evalsha on each node",
          () -> warnings(captured, "refuses commands the library needs").size() == servers.size());
    } finally {
      System.setErr(original);
    }
    List<String> named = warnings(captured, "refuses commands the library needs");
    assertThat(named)
        .as("once per node, naming the node and only the refused command")
        .hasSize(servers.size())
        .allSatisfy(line -> assertThat(line).contains("WARN").contains("needs: evalsha;"));
    for (int i = 0; i < servers.size(); i++) {
      String port = ":" + servers.port(i);
      assertThat(named).anySatisfy(line -> assertThat(line).contains(port));
    }
    assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8))
        .doesNotContain("no-evalsha-pw-1");
  }

  private static List<String> warnings(java.io.ByteArrayOutputStream captured, String what) {
    return captured
        .toString(java.nio.charset.StandardCharsets.UTF_8)
        .lines()
        .filter(line -> line.contains(what))
        .toList();
  }

  @Test
  void aNodeThatRefusesInfoIsNamedInTheErrorNotSilentlyHeldBack() {
    createUser("no-info", "resetkeys", "~*", "+@all", "-info");
    RedlockConfig config = configAs("no-info").retryCount(0).build();
    try (Redlock redlock = Redlock.create(config)) {
      assertThatThrownBy(() -> redlock.acquire("acl:no-info", Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(
              io.redlock.LockUnavailableException.class,
              e -> {
                assertThat(e.lastOutcomes())
                    .allSatisfy(
                        outcome -> {
                          assertThat(outcome.vote())
                              .isEqualTo(io.redlock.NodeOutcome.Vote.HELD_BACK);
                          assertThat(outcome.detail()).contains("refused").contains("NOPERM");
                        });
                assertThat(e.getMessage()).contains("NOPERM").contains("INFO");
              });
    }
  }

  /**
   * Runs {@code body} with System.err captured (slf4j-simple writes each line to whatever it is
   * then) and returns what was written.
   */
  private static String capturingErr(Capturing body) throws Exception {
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    java.io.PrintStream original = System.err;
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      body.run(captured);
    } finally {
      System.setErr(original);
    }
    return captured.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  private interface Capturing {
    void run(java.io.ByteArrayOutputStream captured) throws Exception;
  }

  /**
   * A user without TIME: the probe is refused with NOPERM, and the register's script with the
   * words the server uses for an ACL denial inside a script (an ERR, not a NOPERM, worded
   * differently by Redis 6.2 and by Redis 7.2 and Valkey). Both are refusals, named once per
   * node at WARN.
   */
  @Test
  void anAclDenialInsideTheRegistersScriptIsARefusal() throws Exception {
    createUser("no-time", leastPrivilegeWithout("+time"));
    RedlockConfig config = configAs("no-time").build();
    String text =
        capturingErr(
            captured -> {
              try (Redlock redlock = Redlock.create(config)) {
                Timing.await(
                    "a WARN for the refused raise on each node",
                    () ->
                        warnings(captured, "refused the raise of the max-ttl register").size()
                            == servers.size());
              }
            });
    List<String> raise =
        text.lines().filter(line -> line.contains("refused the raise of the max-ttl")).toList();
    assertThat(raise)
        .hasSize(servers.size())
        .allSatisfy(
            line ->
                assertThat(line)
                    .contains("WARN")
                    // Redis 6.2 and 7.0 say "... can't run this command or subcommand"; Redis 7.2
                    // and Valkey "ERR ACL failure in script: ... no permissions to run the
                    // 'time' command"
                    .containsAnyOf("can't run this command", "ACL failure in script"));
    assertThat(text.lines().filter(line -> line.contains("refused the restart guard's probe")))
        .hasSize(servers.size())
        .allSatisfy(line -> assertThat(line).contains("WARN").contains("NOPERM"));
  }

  /**
   * Out of memory, the register's script fails with an ERR that is no refusal: the nodes are
   * held back with the error in their votes' detail, and nobody is told to grant a command.
   */
  @Test
  void anOutOfMemoryRaiseIsAFailedProbeNotARefusal() throws Exception {
    createUser("least-oom", LEAST_PRIVILEGE);
    RedlockConfig config = configAs("least-oom").retryCount(0).build();
    for (int i = 0; i < servers.size(); i++) {
      servers.command(i, "CONFIG", "SET", "maxmemory", "1");
    }
    String text;
    try {
      text =
          capturingErr(
              captured -> {
                try (Redlock redlock = Redlock.create(config)) {
                  // held back by the failed raise (so its log lines are written): on every node
                  Timing.await(
                      "every node held back by its failed raise",
                      () -> {
                        try {
                          redlock.acquire("acl:oom", Duration.ofSeconds(10)).close();
                          return false;
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                          throw new AssertionError("interrupted", e);
                        } catch (io.redlock.LockUnavailableException e) {
                          return e.lastOutcomes().size() == servers.size()
                              && e.lastOutcomes().stream()
                                  .allMatch(
                                      o ->
                                          o.vote() == io.redlock.NodeOutcome.Vote.HELD_BACK
                                              && o.detail().contains("max-ttl register")
                                              && o.detail().contains("OOM"));
                        }
                      });
                }
              });
    } finally {
      for (int i = 0; i < servers.size(); i++) {
        servers.command(i, "CONFIG", "SET", "maxmemory", "0");
      }
    }
    assertThat(text).doesNotContain("refused the raise").doesNotContain("refused the restart");
  }

  @Test
  void aWrongPasswordIsAClearErrorNamingTheNodeWithoutThePassword() {
    String wrong = "wrong-secret-123";
    RedlockConfig config = RedlockConfig.builder().nodes(urisWith(USER + ":" + wrong)).build();
    assertThatThrownBy(() -> Redlock.create(config))
        .isInstanceOf(RedlockConfigException.class)
        // every node refuses; whichever answered first is named
        .satisfies(e -> assertThat(servers.uris()).anyMatch(e.getMessage()::contains))
        .hasMessageContaining("refused")
        .satisfies(
            e -> {
              assertThat(e.getMessage()).doesNotContain(wrong).doesNotContain(PASSWORD);
              assertThat(String.valueOf(e.getCause())).doesNotContain(wrong);
            });
  }

  @Test
  void noCredentialsAtAllIsRefusedToo() {
    RedlockConfig config =
        RedlockConfig.builder().nodes(servers.uris()).connectTimeout(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> Redlock.create(config))
        .isInstanceOf(RedlockConfigException.class)
        .satisfies(e -> assertThat(servers.uris()).anyMatch(e.getMessage()::contains));
  }
}
