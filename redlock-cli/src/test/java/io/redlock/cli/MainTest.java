package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** The top-level command: help, version and the bash completion script, without Redis. */
class MainTest {

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine commandLine = Main.commandLine(args);
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    return commandLine.execute(args);
  }

  @Test
  void aSubcommandByNameIsTheOnlyOneBuiltAndEverythingElseGetsThemAll() {
    assertThat(Main.commandLine(new String[] {"exec", "r1", "true"}).getSubcommands())
        .containsOnlyKeys("exec");
    assertThat(Main.commandLine(new String[] {"status", "r1"}).getSubcommands())
        .containsOnlyKeys("status");
    String[] all = {"exec", "status", "init", "doctor", "demo", "torture", "generate-completion"};
    for (String[] args :
        new String[][] {{}, {"--help"}, {"--version"}, {"exce"}, {"generate-completion"}}) {
      assertThat(Main.commandLine(args).getSubcommands().keySet())
          .as(String.join(" ", args))
          .containsExactly(all);
    }
  }

  @Test
  void aOneShotRunStartsWithoutNettysPoolAndLettucesJfrEventsUnlessTheUserChose() {
    for (String[] args :
        new String[][] {{"exec", "r1", "true"}, {"status", "r1"}, {"init"}, {"doctor"}, {}}) {
      Properties properties = new Properties();
      Main.oneShotDefaults(args, properties);
      assertThat(properties)
          .as(String.join(" ", args))
          .containsOnly(
              entry("io.netty.allocator.type", "unpooled"), entry("io.lettuce.core.jfr", "false"));
    }
    for (String command : new String[] {"demo", "torture"}) {
      Properties properties = new Properties();
      Main.oneShotDefaults(new String[] {command}, properties);
      assertThat(properties).as(command).isEmpty();
    }
    Properties chosen = new Properties();
    chosen.setProperty("io.netty.allocator.type", "pooled");
    chosen.setProperty("io.lettuce.core.jfr", "true");
    Main.oneShotDefaults(new String[] {"exec", "r1", "true"}, chosen);
    assertThat(chosen)
        .containsOnly(
            entry("io.netty.allocator.type", "pooled"), entry("io.lettuce.core.jfr", "true"));
  }

  @Test
  void generateCompletionPrintsABashScriptForEveryCommand() {
    assertThat(run("generate-completion")).isZero();
    String script = out.toString();
    assertThat(script).contains("complete -F").contains("redlock");
    assertThat(script).contains("exec", "status", "demo", "torture", "generate-completion");
    assertThat(script).contains("--duration", "--report");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "exec", "status", "demo", "torture", "generate-completion"})
  void everyCommandHasHelpWithItsExitCodes(String command) {
    String[] args = command.isEmpty() ? new String[] {"--help"} : new String[] {command, "--help"};
    assertThat(run(args)).isZero();
    assertThat(out.toString()).contains("Usage:").containsPattern("(?m)^Exit codes:\\R  \\d");
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void helpDocumentsTheCompletionScript() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString())
        .contains("generate-completion")
        .contains("./redlock generate-completion > redlock_completion")
        .contains("source redlock_completion");
  }

  @Test
  void versionIsRedlocks() {
    assertThat(run("--version")).isZero();
    assertThat(out.toString()).startsWith("redlock ");
    out.getBuffer().setLength(0);
    assertThat(run("generate-completion", "--version")).isZero();
    assertThat(out.toString()).startsWith("redlock ");
  }

  @Test
  void demoRefusesValuesItsReportCannotShow() {
    assertThat(run("demo", "--ttl", "100ms")).isEqualTo(ExitCodes.USAGE);
    assertThat(err.toString()).contains("--ttl").contains("200ms");
    assertThat(run("demo", "--workers", "65")).isEqualTo(ExitCodes.USAGE);
  }
}
