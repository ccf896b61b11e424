package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The report's time axis: round steps, labels that never overlap, for any run length. */
class TimeAxisTest {

  /** The plot width of the report. */
  private static final double PLOT = 1240;

  @ParameterizedTest
  @ValueSource(
      longs = {
        1,
        300,
        1_000,
        3_000,
        15_000,
        59_000,
        61_000,
        300_000,
        600_000,
        3_600_000,
        5_400_000,
        7_199_000,
        36_000_000,
        259_200_000,
        8_640_000_000L
      })
  void labelsNeverOverlapAndTheAxisCoversTheRun(long spanMillis) {
    long span = Duration.ofMillis(spanMillis).toNanos();
    List<TimeAxis.Tick> ticks = TimeAxis.ticks(span, PLOT);
    assertThat(ticks).isNotEmpty();
    assertThat(ticks.get(0).nanos()).isZero();
    long step = ticks.size() > 1 ? ticks.get(1).nanos() : span;
    assertThat(span - ticks.get(ticks.size() - 1).nanos()).isLessThan(step + 1);
    for (int i = 1; i < ticks.size(); i++) {
      TimeAxis.Tick left = ticks.get(i - 1);
      TimeAxis.Tick right = ticks.get(i);
      double apart = (right.nanos() - left.nanos()) * PLOT / span;
      double halfWidths = (left.label().length() + right.label().length()) * 8 / 2.0;
      assertThat(apart)
          .as("%s and %s on a %d ms axis", left.label(), right.label(), spanMillis)
          .isGreaterThanOrEqualTo(halfWidths + 12);
      assertThat(right.nanos() - left.nanos()).isEqualTo(step);
    }
    assertThat(ticks.stream().map(TimeAxis.Tick::label).distinct()).hasSameSizeAs(ticks);
  }

  @Test
  void aSixtyMinuteRunIsMarkedEveryFiveMinutes() {
    List<TimeAxis.Tick> ticks = TimeAxis.ticks(Duration.ofMinutes(60).toNanos(), PLOT);
    assertThat(ticks)
        .extracting(TimeAxis.Tick::label)
        .containsExactly(
            "0 min", "5 min", "10 min", "15 min", "20 min", "25 min", "30 min", "35 min", "40 min",
            "45 min", "50 min", "55 min", "60 min");
  }

  @Test
  void aShortRunIsMarkedInSecondsAndAnEveningInHours() {
    assertThat(TimeAxis.ticks(Duration.ofSeconds(30).toNanos(), PLOT))
        .extracting(TimeAxis.Tick::label)
        .startsWith("0 s", "2 s", "4 s")
        .endsWith("30 s");
    assertThat(TimeAxis.ticks(Duration.ofMillis(800).toNanos(), PLOT))
        .extracting(TimeAxis.Tick::label)
        .startsWith("0.0 s", "0.1 s");
    assertThat(TimeAxis.ticks(Duration.ofHours(10).toNanos(), PLOT))
        .extracting(TimeAxis.Tick::label)
        .contains("0 h", "1 h", "10 h");
  }
}
