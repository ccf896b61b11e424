package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.History;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The summary of a fenced run: each figure under a label that says what it counts. */
class TortureResultTest {

  private static TortureResult fencedRun(TortureResult.Fenced fenced) {
    return new TortureResult(
        TortureOptions.builder().fencing(true).build(),
        Duration.ofSeconds(1),
        10,
        8,
        0,
        Map.of(),
        List.of(),
        new History(),
        List.of(),
        fenced,
        null);
  }

  @Test
  void theRefusedCountIsTheRefusalsAndEachFigureIsLabelledForWhatItCounts() {
    List<TortureResult.Refusal> refusals =
        List.of(
            new TortureResult.Refusal(1, "client-1", "r0", 3, 4),
            new TortureResult.Refusal(2, "client-2", "r0", 4, 5));
    TortureResult.Fenced fenced = new TortureResult.Fenced(7, 5, 1, 0, refusals);

    assertThat(fenced.refused()).isEqualTo(refusals.size());
    assertThat(fencedRun(fenced).summary())
        .containsPattern("(?m)^fenced writes committed\\s+7$")
        .containsPattern("(?m)^stale writes refused\\s+2$")
        // overtaken counts the reads as well as the writes of a holder a successor overtook
        .containsPattern("(?m)^reads/writes after successor read\\s+5$")
        .containsPattern("(?m)^late writes, no successor yet\\s+1$")
        .doesNotContain("writes after a successor read");
  }
}
