package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PrintableTest {

  @Test
  void controlCharactersCannotForgeALineOrReachTheTerminal() {
    assertThat(Printable.of("orders:42")).isEqualTo("orders:42");
    assertThat(Printable.of("a\r\nverdict: free")).isEqualTo("a\\r\\nverdict: free");
    assertThat(Printable.of("x\u001b[2Jy")).isEqualTo("x\\e[2Jy");
    assertThat(Printable.of("\u0000\u007f\u009b\u2028")).isEqualTo("\\u0000\\u007f\\u009b\\u2028");
    assertThat(Printable.of("back\\slash")).isEqualTo("back\\\\slash");
    assertThat(Printable.of("über 日本")).isEqualTo("über 日本");
    assertThat(Printable.of(null)).isEqualTo("null");
  }

  @Test
  void nodeStringsAreShownEscapedAndWithoutCredentials() {
    assertThat(StatusCommand.displayName("redis://u:pw@h:1/0\r\nverdict: free"))
        .isEqualTo("redis://h:1/0\\r\\nverdict: free");
    assertThat(StatusCommand.displayName("redis://h:1\u001b[2J")).isEqualTo("redis://h:1\\e[2J");
  }
}
