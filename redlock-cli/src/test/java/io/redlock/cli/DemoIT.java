package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code redlock demo --duration 10s}, in process: it ends with 0 violations, writes its
 * timeline report, and leaves none of the redis-server processes it started running.
 */
class DemoIT {

  private static final Pattern VIOLATIONS = Pattern.compile("(?m)^\\s+violations\\s+(\\d+)\\s*$");
  private static final Pattern PID = Pattern.compile("\\bpid (\\d+)\\b");

  @TempDir Path dir;

  @Test
  void tenSecondDemoEndsWithoutViolationsAndStopsItsServers() throws Exception {
    Path report = dir.resolve("demo.html");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));

    int exit = commandLine.execute("demo", "--duration", "10s", "--report", report.toString());

    String output = out.toString();
    assertThat(exit).as("exit code; output:%n%s%nerrors:%n%s", output, err).isZero();
    Matcher violations = VIOLATIONS.matcher(output);
    assertThat(violations.find()).as("a violations row in:%n%s", output).isTrue();
    assertThat(violations.group(1)).isEqualTo("0");
    assertThat(output)
        .contains("faults injected")
        .contains("acquire latency p99")
        .contains("restart guard: node 0 is held back until it has been seen for");
    assertThat(output).contains("Timeline report: " + report.toAbsolutePath().normalize());

    assertThat(report).exists();
    String html = Files.readString(report);
    assertThat(html).contains("<svg").contains("Redlock demo run").contains("0 violations");

    DemoCommand demo = commandLine.getSubcommands().get("demo").getCommand();
    List<Long> pids = new ArrayList<>(demo.startedPids);
    // 5 nodes and node 0 once more after its empty restart.
    assertThat(pids).hasSize(6);
    List<Long> printed = new ArrayList<>();
    Matcher pid = PID.matcher(output);
    while (pid.find()) {
      printed.add(Long.parseLong(pid.group(1)));
    }
    assertThat(new HashSet<>(printed)).isEqualTo(new HashSet<>(pids));
    for (long started : pids) {
      Optional<ProcessHandle> process = ProcessHandle.of(started);
      assertThat(process.map(ProcessHandle::isAlive).orElse(false))
          .as("redis-server pid %d is still alive", started)
          .isFalse();
    }
  }

  @Test
  void aFencedDemoShowsTheStaleWritesTheStoreRefused() throws Exception {
    StringWriter out = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(new StringWriter(), true));

    int exit =
        commandLine.execute(
            "demo",
            "--fencing",
            "--duration",
            "8s",
            "--resources",
            "1",
            "--ttl",
            "1s",
            "--report",
            dir.resolve("fenced.html").toString());

    String output = out.toString();
    assertThat(exit).as("exit code; output:%n%s", output).isZero();
    Matcher refused =
        Pattern.compile("(?m)^\\s+stale writes refused\\s+(\\d+)\\s*$").matcher(output);
    assertThat(refused.find()).as("a refusals row in:%n%s", output).isTrue();
    assertThat(Long.parseLong(refused.group(1))).as("stale writes refused").isPositive();
    assertThat(output).containsPattern("(?m)^\\s+lost updates\\s+0\\s*$");
    // the paused workers did overlap their successors, and every overtaken write was refused
    // (one taken would be a violation of the fencing checker)
    Matcher overtaken = Pattern.compile("(?m)^\\s+overtaken writes\\s+(\\d+)\\s*$").matcher(output);
    assertThat(overtaken.find()).as("an overtaken row in:%n%s", output).isTrue();
    assertThat(Long.parseLong(overtaken.group(1))).as("overtaken writes").isPositive();
    assertThat(output).doesNotContain("VIOLATION");
    Matcher violations = VIOLATIONS.matcher(output);
    assertThat(violations.find()).isTrue();
    assertThat(violations.group(1)).isEqualTo("0");
    // the timeline marks each refusal on the lane of the worker that tried
    assertThat(Files.readString(dir.resolve("fenced.html")))
        .contains("<th>stale writes refused</th>")
        .contains("<title>refused: worker-");
  }
}
