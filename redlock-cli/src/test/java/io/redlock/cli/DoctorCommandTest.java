package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.FreshMarker;
import io.redlock.NodeHistory;
import io.redlock.RedlockConfig;
import io.redlock.spi.NodeInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The judgement of {@code redlock doctor}, without Redis. */
class DoctorCommandTest {
  private static final RedlockConfig CONFIG =
      RedlockConfig.builder().nodes("redis://a:1", "redis://b:1", "redis://c:1").build();

  private static DoctorCommand.NodeFacts healthy(String node, String runId) {
    return new DoctorCommand.NodeFacts(
        node,
        null,
        "master",
        "7.2.4",
        runId,
        3_600L,
        "no",
        "everysec",
        false,
        0L,
        "noeviction",
        null,
        3L,
        0.0001,
        0.0005,
        200L,
        List.of(),
        null);
  }

  private static DoctorCommand.NodeFacts with(
      DoctorCommand.NodeFacts f,
      String policy,
      long maxmemory,
      Double rate,
      List<String> refused,
      String role) {
    return new DoctorCommand.NodeFacts(
        f.node(),
        null,
        role,
        f.version(),
        f.runId(),
        f.uptimeSeconds(),
        f.appendonly(),
        f.appendfsync(),
        false,
        maxmemory,
        policy,
        f.marker(),
        f.offsetMillis(),
        rate,
        f.rateUncertainty(),
        f.roundTripMicros(),
        refused,
        null);
  }

  private static DoctorCommand.NodeFacts withRegister(
      DoctorCommand.NodeFacts f, io.redlock.spi.MaxTtlRegister register) {
    return new DoctorCommand.NodeFacts(
        f.node(),
        null,
        f.role(),
        f.version(),
        f.runId(),
        f.uptimeSeconds(),
        f.appendonly(),
        f.appendfsync(),
        false,
        f.maxmemory(),
        f.maxmemoryPolicy(),
        f.marker(),
        f.offsetMillis(),
        f.rateExcess(),
        f.rateUncertainty(),
        f.roundTripMicros(),
        f.refused(),
        register);
  }

  @Test
  void theRegisterIsShownWithItsTimeLeftAndALongerValueIsAWarning() {
    DoctorCommand.NodeFacts own =
        withRegister(healthy("a", "1"), new io.redlock.spi.MaxTtlRegister(60_000, 65_612));
    DoctorCommand.NodeFacts longer =
        withRegister(healthy("b", "2"), new io.redlock.spi.MaxTtlRegister(21_600_000, 21_605_100));
    DoctorCommand.NodeFacts none = healthy("c", "3");
    assertThat(DoctorCommand.register(own)).isEqualTo("60s (lapses in 65.6s)");
    assertThat(DoctorCommand.register(longer)).isEqualTo("21600s (lapses in 21605.1s)");
    assertThat(DoctorCommand.register(none)).isEqualTo("-");
    DoctorCommand.Verdict verdict = DoctorCommand.assess(List.of(own, longer, none), CONFIG);
    assertThat(verdict.exitCode()).as("a warning, not a safety problem").isEqualTo(ExitCodes.OK);
    assertThat(verdict.findings())
        .singleElement()
        .satisfies(
            finding -> {
              assertThat(finding.node()).isEqualTo("b");
              assertThat(finding.check()).isEqualTo("register");
              assertThat(finding.text()).contains("maxTtl 21600s, longer than 60s");
            });
    assertThat(DoctorCommand.toJson(List.of(own, longer, none), verdict))
        .contains("\"maxTtlRegister\":{\"maxTtlMillis\":60000,\"remainingMillis\":65612}")
        .contains("\"maxTtlRegister\":null");
  }

  @Test
  void aHealthyClusterExitsZero() {
    DoctorCommand.Verdict verdict =
        DoctorCommand.assess(
            List.of(healthy("a", "1"), healthy("b", "2"), healthy("c", "3")), CONFIG);
    assertThat(verdict.exitCode()).isEqualTo(ExitCodes.OK);
    assertThat(verdict.findings()).isEmpty();
  }

  @Test
  void everySafetyProblemFailsWithExitOne() {
    DoctorCommand.NodeFacts a = healthy("a", "1");
    DoctorCommand.NodeFacts b = healthy("b", "2");
    List<List<DoctorCommand.NodeFacts>> broken =
        List.of(
            List.of(a, b, healthy("c", "1")), // one server twice
            List.of(a, b, with(healthy("c", "3"), "volatile-lru", 1_000, 0.0, List.of(), "master")),
            List.of(a, b, with(healthy("c", "3"), "noeviction", 0, 0.05, List.of(), "master")),
            List.of(a, b, with(healthy("c", "3"), "noeviction", 0, 0.0, List.of(), "slave")));
    for (List<DoctorCommand.NodeFacts> facts : broken) {
      DoctorCommand.Verdict verdict = DoctorCommand.assess(facts, CONFIG);
      assertThat(verdict.exitCode())
          .as(verdict.findings().toString())
          .isEqualTo(ExitCodes.VIOLATION);
      assertThat(verdict.findings())
          .anyMatch(f -> f.severity() == DoctorCommand.Severity.PROBLEM && f.node().equals("c"));
    }
  }

  @Test
  void anAllkeysPolicyIsNamedAsAThreatToFencingCountersToo() {
    DoctorCommand.NodeFacts allkeys =
        with(healthy("c", "3"), "allkeys-lru", 1_000, 0.0, List.of(), "master");
    DoctorCommand.NodeFacts volatileOnly =
        with(healthy("c", "3"), "volatile-lru", 1_000, 0.0, List.of(), "master");
    assertThat(
            DoctorCommand.assess(List.of(healthy("a", "1"), healthy("b", "2"), allkeys), CONFIG)
                .findings())
        .anyMatch(f -> f.text().contains("fencing counters"));
    assertThat(
            DoctorCommand.assess(
                    List.of(healthy("a", "1"), healthy("b", "2"), volatileOnly), CONFIG)
                .findings())
        .noneMatch(f -> f.text().contains("fencing counters"));
  }

  @Test
  void warningsDoNotFailButAMajorityUnreachableCannotRun() {
    DoctorCommand.NodeFacts refusing =
        with(healthy("c", "3"), "noeviction", 0, 0.0, List.of("info"), "master");
    DoctorCommand.Verdict warned =
        DoctorCommand.assess(List.of(healthy("a", "1"), healthy("b", "2"), refusing), CONFIG);
    assertThat(warned.exitCode()).isEqualTo(ExitCodes.OK);
    assertThat(warned.findings())
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.check()).isEqualTo("acl");
              assertThat(f.text()).contains("info (restart guard").contains("never count");
            });
    DoctorCommand.NodeFacts down =
        new DoctorCommand.NodeFacts(
            "b",
            "connection refused",
            null,
            null,
            null,
            null,
            null,
            null,
            false,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            List.of(),
            null);
    assertThat(DoctorCommand.assess(List.of(healthy("a", "1"), down, down), CONFIG).exitCode())
        .isEqualTo(ExitCodes.FAILURE);
  }

  /** Healthy facts with the history a probe would read: {@code marker} at node time now. */
  private static DoctorCommand.NodeFacts withHistory(String runId, long uptime, String marker) {
    DoctorCommand.NodeFacts f = healthy("a", runId);
    NodeInfo info =
        new NodeInfo(
            runId,
            "master",
            uptime,
            100_000_000_000L,
            marker,
            null,
            new NodeInfo.Memory(0, "noeviction"),
            "7",
            0);
    return new DoctorCommand.NodeFacts(
        f.node(),
        null,
        f.role(),
        f.version(),
        runId,
        uptime,
        f.appendonly(),
        f.appendfsync(),
        false,
        f.maxmemory(),
        f.maxmemoryPolicy(),
        marker,
        f.offsetMillis(),
        f.rateExcess(),
        f.rateUncertainty(),
        f.roundTripMicros(),
        List.of(),
        null,
        NodeHistory.of(info));
  }

  private static String record(String runId, long secondsAgo, String admitted) {
    return "redlock-node/2 run="
        + runId
        + " since="
        + (100_000_000L - secondsAgo * 1_000)
        + " seq=4 evicted=0 admitted="
        + admitted
        + " prev=- loaded=-1 why=restarted clock=ok";
  }

  @Test
  void aRoleThatCouldNotBeReadIsAWarningNotAProblem() {
    DoctorCommand.NodeFacts unread =
        with(healthy("a", "1"), "noeviction", 0, 0.0001, List.of(), "?");
    DoctorCommand.Verdict verdict =
        DoctorCommand.assess(List.of(unread, healthy("b", "2"), healthy("c", "3")), CONFIG);
    assertThat(verdict.exitCode()).isEqualTo(ExitCodes.OK);
    assertThat(verdict.findings())
        .anyMatch(f -> f.check().equals("role") && f.severity() == DoctorCommand.Severity.WARN);
    DoctorCommand.NodeFacts replica =
        with(healthy("a", "1"), "noeviction", 0, 0.0001, List.of(), "slave");
    assertThat(
            DoctorCommand.assess(List.of(replica, healthy("b", "2"), healthy("c", "3")), CONFIG)
                .exitCode())
        .isEqualTo(ExitCodes.VIOLATION);
  }

  @Test
  void theGuardStateIsTheLibrarysJudgementOfTheNodesHistoryNeverItsUptime() {
    // a node up for an hour that a client first saw 5 s ago: held back, whatever its uptime
    DoctorCommand.NodeFacts young = withHistory("r1", 3_600, record("r1", 5, "-"));
    assertThat(DoctorCommand.guardState(young, CONFIG)).startsWith("held back (seen for 5");
    assertThat(DoctorCommand.guardState(withHistory("r1", 3_600, null), CONFIG))
        .isEqualTo("held back (not seen by a client yet)");
    assertThat(DoctorCommand.guardState(withHistory("r1", 5, FreshMarker.value("r1")), CONFIG))
        .isEqualTo("counts (data known complete)");
    // a marker of an earlier process, AOF always: not trusted without a watching client's word
    assertThat(DoctorCommand.guardState(withHistory("r2", 5, FreshMarker.value("r1")), CONFIG))
        .startsWith("held back (not seen");
    assertThat(DoctorCommand.guardState(withHistory("r1", 5, record("r1", 120, "-")), CONFIG))
        .isEqualTo("counts (seen for 2m; out of fencing)");
    assertThat(
            DoctorCommand.assess(List.of(young, healthy("b", "2"), healthy("c", "3")), CONFIG)
                .findings())
        .anyMatch(
            f ->
                f.check().equals("guard")
                    && f.text().contains("counts again by itself")
                    && f.text().contains("never run 'redlock init' after a restart"));
  }

  /** A refusal of a one-command script names that command, in every server's words. */
  @Test
  void aScriptRefusalNamesTheCommandTheScriptRan() {
    // Redis 6.2.11: the words do not name the command
    assertThat(
            DoctorCommand.refusedByScript(
                "pexpire",
                new RuntimeException(
                    "ERR Error running script (call to f_4e6d8fc8bb01276962cce5371fa795a7763657ae):"
                        + " @user_script:1: @user_script: 1: The user executing the script can't"
                        + " run this command or subcommand")))
        .isEqualTo("pexpire");
    // Valkey 8.0.1 (and Redis 7.2)
    assertThat(
            DoctorCommand.refusedByScript(
                "get",
                new RuntimeException(
                    "ERR ACL failure in script: User u has no permissions to run the 'get'"
                        + " command script: 4e6d8fc8bb01276962cce5371fa795a7763657ae, on"
                        + " @user_script:1.")))
        .isEqualTo("get");
    // EVAL itself refused
    assertThat(
            DoctorCommand.refusedByScript(
                "get",
                new RuntimeException(
                    "NOPERM this user has no permissions to run the 'eval' command or its"
                        + " subcommand")))
        .isEqualTo("eval");
    // not a refusal: out of memory inside the script
    assertThat(
            DoctorCommand.refusedByScript(
                "pexpire",
                new RuntimeException(
                    "ERR Error running script (call to f_0): @user_script:1: -OOM command not"
                        + " allowed when used memory > 'maxmemory'.")))
        .isNull();
  }
}
