package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.FreshMarker;
import io.redlock.NodeHistory;
import io.redlock.RedlockConfig;
import io.redlock.spi.NodeInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

class ConnectionOptionsTest {

  @TempDir Path dir;

  /** Parses {@code status ARGS r} and returns the mixin, with the given environment. */
  private static ConnectionOptions parse(Map<String, String> env, String... args) {
    CommandLine cl = Main.commandLine();
    String[] all = new String[args.length + 2];
    all[0] = "status";
    System.arraycopy(args, 0, all, 1, args.length);
    all[all.length - 1] = "r";
    cl.parseArgs(all);
    StatusCommand status = cl.getSubcommands().get("status").getCommand();
    status.connection.env = env;
    return status.connection;
  }

  @Test
  void commandLineBeatsEnvironmentBeatsConfigFile() throws IOException {
    Path secret = Files.writeString(dir.resolve("secret"), "s3cret\n");
    Path config =
        Files.writeString(
            dir.resolve("redlock.properties"),
            String.join(
                "\n",
                "# comment",
                "nodes=redis://f1:1, redis://f2:2",
                "username=alice",
                "password-file=secret",
                "ttl=45s",
                "node-timeout=PT0.1S",
                "key-prefix=locks:"));

    ConnectionOptions.Settings fromFile = parse(Map.of(), "--config", config.toString()).resolve();
    assertThat(fromFile.nodes()).containsExactly("redis://f1:1", "redis://f2:2");
    assertThat(fromFile.username()).isEqualTo("alice");
    assertThat(fromFile.password()).isEqualTo("s3cret");
    assertThat(fromFile.ttl()).contains(Duration.ofSeconds(45));
    assertThat(fromFile.nodeTimeout()).isEqualTo(Duration.ofMillis(100));
    assertThat(fromFile.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(fromFile.key("job")).isEqualTo("locks:job");

    ConnectionOptions.Settings fromEnv =
        parse(
                Map.of(
                    "REDLOCK_NODES",
                    "redis://e:1",
                    "REDLOCK_PASSWORD",
                    "envpw",
                    "REDLOCK_CONFIG",
                    config.toString()))
            .resolve();
    assertThat(fromEnv.nodes()).containsExactly("redis://e:1");
    assertThat(fromEnv.password()).isEqualTo("envpw");
    assertThat(fromEnv.username()).isEqualTo("alice");

    Path other = Files.writeString(dir.resolve("other"), "cli-pw");
    ConnectionOptions.Settings fromCli =
        parse(
                Map.of("REDLOCK_NODES", "redis://e:1", "REDLOCK_PASSWORD", "envpw"),
                "--nodes",
                "redis://c1:1,redis://c2:2",
                "--password-file",
                other.toString(),
                "--config",
                config.toString())
            .resolve();
    assertThat(fromCli.nodes()).containsExactly("redis://c1:1", "redis://c2:2");
    assertThat(fromCli.password()).isEqualTo("cli-pw");
  }

  @Test
  void maxTtlComesFromTheOptionOrTheConfigFileAndATtlAboveItNamesTheOption() throws IOException {
    Path config =
        Files.writeString(
            dir.resolve("max.properties"), "nodes=redis://f1:1\nmax-ttl=2m\nttl=90s\n");
    ConnectionOptions options = parse(Map.of(), "--config", config.toString());
    ConnectionOptions.Settings fromFile = options.resolve();
    assertThat(fromFile.maxTtl()).contains(Duration.ofMinutes(2));
    assertThat(options.build(fromFile, fromFile.builder().ttl(fromFile.ttl().get())).maxTtl())
        .isEqualTo(Duration.ofMinutes(2));

    ConnectionOptions tight = parse(Map.of(), "--config", config.toString(), "--max-ttl", "30s");
    ConnectionOptions.Settings fromCli = tight.resolve();
    assertThat(fromCli.maxTtl()).contains(Duration.ofSeconds(30));
    assertThatThrownBy(() -> tight.build(fromCli, fromCli.builder().ttl(fromCli.ttl().get())))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("option '--ttl'")
        .hasMessageContaining("maxTtl (30 s)");
  }

  @Test
  void refusalsNameTheCulprit() throws IOException {
    Path unknown = Files.writeString(dir.resolve("u.properties"), "nodes=redis://a:1\nfoo=1\n");
    assertThatThrownBy(() -> parse(Map.of(), "--config", unknown.toString()).resolve())
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("unknown key 'foo'");

    Path password = Files.writeString(dir.resolve("p.properties"), "password=x\n");
    assertThatThrownBy(() -> parse(Map.of(), "--config", password.toString()).resolve())
        .hasMessageContaining("unknown key 'password'")
        .hasMessageContaining("password-file");

    Path badTtl = Files.writeString(dir.resolve("t.properties"), "nodes=redis://a:1\nttl=5x\n");
    assertThatThrownBy(() -> parse(Map.of(), "--config", badTtl.toString()).resolve())
        .hasMessageContaining("invalid value for key 'ttl'");

    assertThatThrownBy(() -> parse(Map.of(), "--config", dir.resolve("none").toString()).resolve())
        .hasMessageContaining("option '--config'")
        .hasMessageContaining("no such");

    assertThatThrownBy(
            () ->
                parse(
                        Map.of(),
                        "--nodes",
                        "redis://a:1",
                        "--password-file",
                        dir.resolve("none").toString())
                    .resolve())
        .hasMessageContaining("option '--password-file'");

    assertThatThrownBy(() -> parse(Map.of("REDLOCK_NODES", "redis://a:1,,")).resolve())
        .hasMessageContaining("REDLOCK_NODES");

    assertThatThrownBy(() -> parse(Map.of()).resolve()).hasMessageContaining("Missing nodes");

    ConnectionOptions options = parse(Map.of(), "--nodes", "redis://a:1,redis://a:1");
    ConnectionOptions.Settings settings = options.resolve();
    assertThatThrownBy(() -> options.build(settings, settings.builder()))
        .hasMessageContaining("option '--nodes'")
        .hasMessageContaining("nodes[1]");
  }

  @Test
  void badArgumentsGetOneLineAndExitCode2() {
    String[][] cases = {
      {"exec", "--wait", "5x", "r", "true"},
      {"exec", "--on-lost", "maybe", "r", "true"},
      {"exec", "--no-wait", "--wait", "1s", "--nodes", "redis://a:1", "r", "true"},
      {"exec", "--ttl", "10ms", "--nodes", "redis://a:1", "r", "true"},
      {"exec", "--nodes", "redis://a:1", "r"},
      {"exec", "--nodes", "redis://a:1,,redis://b:2", "r", "true"},
      {"status", "--node-timeout", "0s", "r"},
      {"status", "--nodes", "not a uri", "r"},
    };
    String[] named = {
      "'--wait'",
      "'--on-lost'",
      "'--no-wait'",
      "'--ttl'",
      "'COMMAND'",
      "'--nodes'",
      "'--node-timeout'",
      "'--nodes'"
    };
    for (int i = 0; i < cases.length; i++) {
      StringWriter err = new StringWriter();
      int code = Main.commandLine().setErr(new PrintWriter(err)).execute(cases[i]);
      assertThat(code).as(String.join(" ", cases[i])).isEqualTo(ExitCodes.USAGE);
      assertThat(err.toString().lines().count()).as(err.toString()).isEqualTo(1);
      assertThat(err.toString()).as(String.join(" ", cases[i])).contains(named[i]);
    }
  }

  @Test
  void execTakesEverythingAfterTheResourceAsTheCommand() {
    for (String[] args :
        List.of(
            new String[] {"exec", "--ttl", "5s", "r", "--", "ls", "-l", "--help"},
            new String[] {"exec", "--ttl", "5s", "r", "ls", "-l", "--help"})) {
      CommandLine cl = Main.commandLine();
      cl.parseArgs(args);
      ExecCommand exec = cl.getSubcommands().get("exec").getCommand();
      assertThat(exec.resource).isEqualTo("r");
      assertThat(exec.command).endsWith("ls", "-l", "--help");
      assertThat(exec.ttl).isEqualTo(Duration.ofSeconds(5));
    }
  }

  @Test
  void statusVerdict() {
    StatusCommand.NodeState a = state("A");
    StatusCommand.NodeState b = state("B");
    StatusCommand.NodeState free = state(null);
    StatusCommand.NodeState down =
        new StatusCommand.NodeState("n", "refused", null, null, null, null);
    assertThat(StatusCommand.verdict(List.of(a, a, free), 2)).isEqualTo(StatusCommand.Verdict.held);
    assertThat(StatusCommand.verdict(List.of(a, a, down), 2)).isEqualTo(StatusCommand.Verdict.held);
    assertThat(StatusCommand.verdict(List.of(free, free, a), 2))
        .isEqualTo(StatusCommand.Verdict.free);
    assertThat(StatusCommand.verdict(List.of(free, free, down), 2))
        .isEqualTo(StatusCommand.Verdict.free);
    assertThat(StatusCommand.verdict(List.of(a, b, free), 2))
        .isEqualTo(StatusCommand.Verdict.unknown);
    assertThat(StatusCommand.verdict(List.of(free, down, down), 2))
        .isEqualTo(StatusCommand.Verdict.unknown);
  }

  /** A node's state as status reads it, with the record a client wrote {@code seen} ago. */
  private static StatusCommand.NodeState seen(String role, long uptimeSeconds, String marker) {
    NodeInfo info =
        new NodeInfo("r1", role, uptimeSeconds, 100_000_000_000L, marker, null, null, null, 0);
    return new StatusCommand.NodeState(
        "n", null, role, uptimeSeconds, null, -2L, NodeHistory.of(info));
  }

  private static String record(long sinceMillis) {
    return "redlock-node/2 run=r1 since="
        + sinceMillis
        + " seq=1 evicted=0 admitted=- prev=- loaded=-1 why=first-seen clock=ok";
  }

  @Test
  void statusShowsWhatTheRestartGuardMakesOfEachNode() {
    Duration holdBack = Duration.ofMillis(30_302);
    long now = 100_000_000L; // the node's clock, in ms
    StatusCommand.NodeState young = seen("master", 900, record(now - 12_000));
    StatusCommand.NodeState old = seen("master", 900, record(now - 31_000));
    StatusCommand.NodeState unseen = seen("master", 900, null);
    StatusCommand.NodeState fresh = seen("master", 5, FreshMarker.value("r1"));
    StatusCommand.NodeState replica = seen("slave", 900, null);
    assertThat(StatusCommand.guard(young, holdBack))
        .as("an uptime of 900 s says nothing: seen for 12 s")
        .startsWith("held back (seen for 12");
    assertThat(StatusCommand.guard(old, holdBack)).startsWith("counts (seen for 31");
    assertThat(StatusCommand.guard(unseen, holdBack)).startsWith("held back (not seen");
    assertThat(StatusCommand.guard(fresh, holdBack)).isEqualTo("counts (data known complete)");
    assertThat(StatusCommand.guard(replica, holdBack)).startsWith("excluded");
    assertThat(StatusCommand.guard(young, null)).isEqualTo("off");
  }

  @Test
  void statusHoldsNodesBackForTheConfiguredDriftFactorNotTheDefault() {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes("redis://a:1")
            .maxTtl(Duration.ofSeconds(60))
            .driftFactor(0.1)
            .build();
    // The restart guard's window: maxTtl plus 60 s x 0.1 + 2 ms of drift.
    assertThat(StatusCommand.holdBack(config)).isEqualTo(Duration.ofMillis(66_002));
    StatusCommand.NodeState seenSixtyThreeSeconds =
        seen("master", 900, record(100_000_000L - 63_000));
    assertThat(StatusCommand.guard(seenSixtyThreeSeconds, StatusCommand.holdBack(config)))
        .startsWith("held back");
    assertThat(
            StatusCommand.holdBack(
                RedlockConfig.builder().nodes("redis://a:1").restartGuard(false).build()))
        .isNull();
  }

  private static StatusCommand.NodeState state(String value) {
    return new StatusCommand.NodeState("n", null, "master", 1L, value, value == null ? -2L : 1000L);
  }

  /** Parses {@code status ARGS r} with stderr captured into {@code err}. */
  private static ConnectionOptions parseCapturing(StringWriter err, String... args) {
    CommandLine cl = Main.commandLine().setErr(new PrintWriter(err));
    String[] all = new String[args.length + 2];
    all[0] = "status";
    System.arraycopy(args, 0, all, 1, args.length);
    all[all.length - 1] = "r";
    cl.parseArgs(all);
    StatusCommand status = cl.getSubcommands().get("status").getCommand();
    status.connection.env = Map.of();
    return status.connection;
  }

  @Test
  void aPasswordInNodesIsWarnedAboutWithoutShowingIt() {
    StringWriter err = new StringWriter();
    parseCapturing(err, "--nodes", "redis://a:1,redis://locker:s3cret-pw@b:2").resolve();
    assertThat(err.toString())
        .contains("warning: a node in --nodes carries credentials (redis://b:2)")
        .contains("ps and in shell history")
        .doesNotContain("s3cret-pw")
        .doesNotContain("read as a password");

    StringWriter lone = new StringWriter();
    parseCapturing(lone, "--nodes", "redis://locker@b:2").resolve();
    assertThat(lone.toString()).contains("a lone 'name@' before the host is read as a password");

    StringWriter none = new StringWriter();
    parseCapturing(none, "--nodes", "redis://a:1,rediss://b:2/3").resolve();
    assertThat(none.toString()).isEmpty();
  }

  @Test
  void passwordAndConfigFilesReadableByOthersAreWarnedAbout() throws IOException {
    Path secret = Files.writeString(dir.resolve("secret"), "s3cret\n");
    Path config =
        Files.writeString(
            dir.resolve("redlock.properties"), "nodes=redis://a:1\npassword-file=secret\n");
    Files.setPosixFilePermissions(
        secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    Files.setPosixFilePermissions(
        config, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
    StringWriter err = new StringWriter();
    parseCapturing(err, "--config", config.toString()).resolve();
    assertThat(err.toString())
        .contains("warning: config file " + config + " can be read by its group (mode rw-r-----)")
        .contains(
            "warning: password file " + secret + " can be read by every user (mode rw-r--r--)")
        .contains("chmod 600")
        .doesNotContain("s3cret");

    Files.setPosixFilePermissions(
        secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    Files.setPosixFilePermissions(
        config, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    StringWriter quiet = new StringWriter();
    parseCapturing(quiet, "--config", config.toString()).resolve();
    assertThat(quiet.toString()).isEmpty();
  }

  @Test
  void tlsFilesComeFromOptionsOrTheConfigFileAndVerifyPeerNoneNeedsConsent() throws IOException {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "pem");
    Path cert = Files.writeString(dir.resolve("client.pem"), "pem");
    Path key = Files.writeString(dir.resolve("client.key"), "pem");
    Files.setPosixFilePermissions(
        key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    Path config =
        Files.writeString(
            dir.resolve("tls.properties"),
            "nodes=rediss://a:1\ntls-ca=ca.pem\ntls-cert=client.pem\ntls-key=client.key\n");
    StringWriter err = new StringWriter();
    ConnectionOptions.Settings fromFile =
        parseCapturing(err, "--config", config.toString()).resolve();
    assertThat(fromFile.tls().trustedCertificates()).isEqualTo(ca);
    assertThat(fromFile.tls().clientCertificateChain()).isEqualTo(cert);
    assertThat(fromFile.tls().clientPrivateKey()).isEqualTo(key);
    assertThat(fromFile.builder().build().tls()).isEqualTo(fromFile.tls());

    ConnectionOptions.Settings fromOptions =
        parse(Map.of(), "--nodes", "rediss://a:1", "--tls-ca", ca.toString()).resolve();
    assertThat(fromOptions.tls().trustedCertificates()).isEqualTo(ca);
    assertThat(fromOptions.tls().clientCertificateChain()).isNull();

    assertThatThrownBy(
            () ->
                parse(Map.of(), "--nodes", "rediss://a:1", "--tls-cert", cert.toString()).resolve())
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("needs both --tls-cert and --tls-key");
    assertThatThrownBy(
            () ->
                parse(
                        Map.of(),
                        "--nodes",
                        "rediss://a:1",
                        "--tls-ca",
                        dir.resolve("nope.pem").toString())
                    .resolve())
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--tls-ca (or tls-ca=) is " + dir.resolve("nope.pem"));

    assertThatThrownBy(
            () -> parse(Map.of(), "--nodes", "rediss://:pw@a:1?verifyPeer=NONE").resolve())
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("rediss://a:1?verifyPeer=NONE has verifyPeer=NONE")
        .hasMessageContaining("--tls-allow-unverified")
        .hasMessageNotContaining("pw@");
    assertThat(
            parse(Map.of(), "--nodes", "rediss://a:1?verifyPeer=NONE", "--tls-allow-unverified")
                .resolve()
                .tls()
                .allowUnverified())
        .isTrue();
  }
}
