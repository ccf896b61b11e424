package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {

  private final DurationConverter converter = new DurationConverter();

  @Test
  void readsAmountsWithUnits() {
    assertThat(converter.convert("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(converter.convert("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(converter.convert("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(converter.convert("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(converter.convert(" 2S ")).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void readsIso8601() {
    assertThat(converter.convert("PT30S")).isEqualTo(Duration.ofSeconds(30));
    assertThat(converter.convert("pt1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(converter.convert("PT0.25S")).isEqualTo(Duration.ofMillis(250));
  }

  @Test
  void refusesWhatIsNotADuration() {
    for (String bad : new String[] {"nonsense", "", "30", "30x", "s", "-5s", "1.5s", "PTxS"}) {
      assertThatThrownBy(() -> converter.convert(bad))
          .as(bad)
          .isInstanceOf(TypeConversionException.class)
          .hasMessage(
              "'"
                  + bad
                  + "' is not a duration; use e.g. 500ms, 30s, 5m or ISO-8601"
                  + " such as PT30S");
    }
  }

  @Test
  void refusesZeroAndNegative() {
    assertThatThrownBy(() -> converter.convert("0s"))
        .isInstanceOf(TypeConversionException.class)
        .hasMessage("'0s' is not accepted: it must be more than 0");
    assertThatThrownBy(() -> converter.convert("PT-1S"))
        .isInstanceOf(TypeConversionException.class)
        .hasMessage("'PT-1S' is not accepted: it must be more than 0");
  }

  @Test
  void errorOnTheCommandLineNamesTheOption() {
    assertThatThrownBy(() -> Main.commandLine().parseArgs("demo", "--duration", "nonsense"))
        .isInstanceOf(ParameterException.class)
        .hasMessage(
            "Invalid value for option '--duration': 'nonsense' is not a duration;"
                + " use e.g. 500ms, 30s, 5m or ISO-8601 such as PT30S");
  }
}
