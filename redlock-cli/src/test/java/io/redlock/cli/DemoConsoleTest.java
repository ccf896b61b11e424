package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.Violation;
import io.redlock.torture.TortureOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo's in-process check: which overlaps of holders it reports. */
class DemoConsoleTest {
  private static final long SECOND = 1_000_000_000L;

  private static DemoConsole console(boolean fencing, StringWriter out) {
    TortureOptions options =
        TortureOptions.builder()
            .nodes(3)
            .clients(2)
            .resources(1)
            .fencing(fencing)
            .pauseBetweenCheckAndWrite(fencing)
            .build();
    return new DemoConsole(
        new PrintWriter(out, true), false, options, List.of(), Duration.ZERO, new ArrayList<>());
  }

  @Test
  void withFencingTwoValidLeasesAtOnceAreStillAViolation() {
    StringWriter out = new StringWriter();
    DemoConsole console = console(true, out);
    long now = System.nanoTime();
    console.holding("worker-0", "r", now + 60 * SECOND);
    console.holding("worker-1", "r", now + 60 * SECOND);
    assertThat(console.occupancyViolations())
        .extracting(Violation::kind)
        .containsExactly(Violation.Kind.OVERLAPPING_WORK);
    assertThat(out.toString()).contains("VIOLATION");
  }

  @Test
  void withFencingAPausedHolderWhoseLeaseEndedIsAnExpectedOverlap() {
    StringWriter out = new StringWriter();
    DemoConsole console = console(true, out);
    long now = System.nanoTime();
    console.holding("worker-0", "r", now - SECOND); // paused past its validity
    console.holding("worker-1", "r", now + 60 * SECOND);
    assertThat(console.occupancyViolations()).isEmpty();
    assertThat(out.toString()).contains("overlap: worker-1 holds r").doesNotContain("VIOLATION");
  }

  @Test
  void withoutFencingEveryOverlapOfHoldersIsAViolation() {
    DemoConsole console = console(false, new StringWriter());
    long now = System.nanoTime();
    console.holding("worker-0", "r", now - SECOND);
    console.holding("worker-1", "r", now + 60 * SECOND);
    assertThat(console.occupancyViolations()).hasSize(1);
  }

  @Test
  void aReleasedHolderDoesNotOverlapItsSuccessor() {
    DemoConsole console = console(true, new StringWriter());
    long now = System.nanoTime();
    console.holding("worker-0", "r", now + 60 * SECOND);
    console.holding("worker-0", null);
    console.holding("worker-1", "r", now + 60 * SECOND);
    assertThat(console.occupancyViolations()).isEmpty();
  }
}
