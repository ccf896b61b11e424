package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a failed warm-up tells the user (the warm-up itself runs in every exec IT's process). */
class WarmUpTest {

  @Test
  void aFailedStaticInitializerIsReportedByItsOwnError() {
    IllegalStateException e =
        WarmUp.startFailure(
            new ExceptionInInitializerError(new IllegalArgumentException("no epoll for you")));
    assertThat(e.getMessage())
        .isEqualTo(
            "the logging or Redis client libraries could not start:"
                + " java.lang.IllegalArgumentException: no epoll for you");
    assertThat(e.getCause()).isInstanceOf(IllegalArgumentException.class);

    LinkageError other = new NoClassDefFoundError("io/netty/Missing");
    assertThat(WarmUp.startFailure(other).getCause()).isSameAs(other);
    assertThat(WarmUp.startFailure(other).getMessage()).endsWith("io/netty/Missing");
  }
}
