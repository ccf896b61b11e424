package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a harness keeps of {@code docs/performance.md} when it writes its part: {@link
 * LoadHarness} every marked section (the notes written by hand among them), {@link
 * PathsHarness} the parts of its section that a run with {@code --parts} did not measure.
 */
class ReportSectionsTest {

  @Test
  void theLoadHarnessKeepsEveryMarkedSectionTheNotesIncluded() {
    String text =
        "# Performance\n\nold generated report\n\n"
            + section(MarkedSection.STALL, "stall")
            + "\nloose text between sections\n\n"
            + section(MarkedSection.HELD, "held")
            + section(MarkedSection.NOTES, "### Reading the figures\n\nby hand")
            + section(MarkedSection.PATHS, "paths");

    String kept = MarkedSection.keptIn(text);

    assertThat(kept)
        .doesNotContain("old generated report")
        .doesNotContain("loose text between sections")
        .contains("### Reading the figures\n\nby hand")
        .containsSubsequence("stall", "paths", "held", "Reading the figures");
  }

  @Test
  void aPathsRunOfSomePartsKeepsTheOthersAsTheyWere() {
    String previous =
        section(MarkedSection.PATHS, "")
            .replace(
                "\n\n" + MarkedSection.PATHS.end(),
                "\n"
                    + section(MarkedSection.pathsPart("fenced"), "### Fenced\n\nold fenced")
                    + section(MarkedSection.pathsPart("threads"), "### Threads\n\nold threads")
                    + section(MarkedSection.pathsPart("cli"), "### Cli\n\nold cli")
                    + MarkedSection.PATHS.end());

    String parts =
        PathsHarness.parts(
            previous, Map.of("fenced", "### Fenced\n\nnew fenced\n\n"), "Made on a day.\n\n");

    assertThat(parts)
        .contains("### Fenced\n\nMade on a day.\n\nnew fenced")
        .doesNotContain("old fenced")
        .contains("### Threads\n\nold threads")
        .contains("### Cli\n\nold cli")
        .containsSubsequence("new fenced", "old threads", "old cli");
    assertThat(PathsHarness.parts("", Map.of("cli", "### Cli\n\nnew\n\n"), ""))
        .isEqualTo(
            MarkedSection.pathsPart("cli").begin()
                + "\n### Cli\n\nnew\n\n"
                + MarkedSection.pathsPart("cli").end()
                + "\n\n");
  }

  @Test
  void partsNamesWhatItAccepts() {
    assertThat(PathsHarness.Options.parts("cli,fenced")).containsExactly("cli", "fenced");
    assertThatThrownBy(() -> PathsHarness.Options.parts("fenced,cl"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--parts fenced,cl: accepted are one or more of fenced,threads,cli");
    assertThatThrownBy(() -> PathsHarness.Options.parts(""))
        .hasMessageContaining("accepted are one or more of");
  }

  @Test
  void theCommandLineNamesNoFolderOfTheMachine() {
    assertThat(
            PathsHarness.absolutePathsShortened(
                "--baseline-jar /tmp/x/bench-main.jar --threads-java /usr/lib/jvm/jdk-25/bin/java"
                    + " --out /tmp/paths.md --launcher /work/main/redlock"
                    + " --cli-jar redlock-cli/target/redlock.jar"))
        .isEqualTo(
            "--baseline-jar …/bench-main.jar --threads-java …/bin/java --out …/paths.md"
                + " --launcher …/redlock --cli-jar redlock-cli/target/redlock.jar");
  }

  @Test
  void aRunOfSomePartsRefusesASectionWhosePartsAreNotMarked() {
    String unmarked =
        section(MarkedSection.PATHS, "### Fenced\n\nold\n\n### Threads\n\nold\n\n### Cli\n\nold");
    assertThat(PathsHarness.unkeptParts(unmarked, Set.of("fenced")))
        .startsWith("--parts fenced: the paths section of the report has no marked parts");
    assertThat(PathsHarness.unkeptParts(unmarked, Set.copyOf(PathsHarness.PARTS))).isEmpty();
    assertThat(PathsHarness.unkeptParts("", Set.of("cli"))).isEmpty();
    String marked = section(MarkedSection.PATHS, section(MarkedSection.pathsPart("cli"), "old"));
    assertThat(PathsHarness.unkeptParts(marked, Set.of("fenced"))).isEmpty();
  }

  private static String section(MarkedSection marked, String body) {
    return marked.begin() + "\n" + body + "\n\n" + marked.end() + "\n";
  }
}
