package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The harness's side of a held-lease client: a child that never answers does not hang it. */
class HeldClientTest {

  @Test
  void aChildThatGivesNoAnswerIsStoppedAndNamed() throws Exception {
    Process silent = new ProcessBuilder("sleep", "600").start();
    HeldClient client = new HeldClient("silent", silent);

    assertThatThrownBy(() -> client.awaitAnswer("held ", Duration.ofSeconds(1)))
        .isInstanceOf(IOException.class)
        .hasMessage("silent gave no answer held within 1 s: stopped");
    silent.waitFor(); // destroyed, not left to sleep
    assertThat(silent.exitValue()).isNotZero();
  }

  @Test
  void aChildThatAnswersInTimeIsRead() throws Exception {
    Process answering = new ProcessBuilder("sh", "-c", "echo starting; echo 'held 1 2 3'").start();
    HeldClient client = new HeldClient("answering", answering);

    assertThat(client.awaitAnswer("held ", Duration.ofMinutes(1))).isEqualTo("1 2 3");
    answering.waitFor();
  }
}
