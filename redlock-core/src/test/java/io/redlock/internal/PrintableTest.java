package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PrintableTest {

  @Test
  void controlCharactersAreEscapedAndOtherTextKept() {
    assertThat(Printable.of("orders:42")).isEqualTo("orders:42");
    assertThat(Printable.of("a\r\nWARN forged")).isEqualTo("a\\r\\nWARN forged");
    assertThat(Printable.of("\u001b[31m\u0000\u0085")).isEqualTo("\\e[31m\\u0000\\u0085");
    assertThat(Printable.of("c:\\x")).isEqualTo("c:\\\\x");
    assertThat(Printable.of("日本")).isEqualTo("日本");
  }

  @Test
  void resourceNamesInExceptionMessagesCannotForgeALine() {
    assertThat(new LeaseLostException(List.of("job\nWARN all clear"), "expired").getMessage())
        .isEqualTo("lease on job\\nWARN all clear is lost: expired")
        .doesNotContain("\n");
    assertThat(
            new LockUnavailableException(
                    List.of("job\r\n"), 1, Duration.ofMillis(5), "held", List.of())
                .getMessage())
        .doesNotContain("\n")
        .doesNotContain("\r")
        .contains("job\\r\\n");
  }
}
