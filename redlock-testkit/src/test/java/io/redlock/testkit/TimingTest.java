package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TimingTest {

  @AfterEach
  void clearProperty() {
    System.clearProperty(Timing.MULTIPLIER_PROPERTY);
  }

  @Test
  void deadlinesAreScaledByTheProperty() {
    assertThat(Timing.multiplier()).isEqualTo(1.0);
    assertThat(Timing.scaled(Duration.ofSeconds(4))).isEqualTo(Duration.ofSeconds(4));

    System.setProperty(Timing.MULTIPLIER_PROPERTY, "2.5");
    assertThat(Timing.scaled(Duration.ofSeconds(4))).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aMultiplierThatIsNotAPositiveNumberIsNamed() {
    for (String bad : new String[] {"0", "-1", "fast", "NaN", "Infinity"}) {
      System.setProperty(Timing.MULTIPLIER_PROPERTY, bad);
      assertThatThrownBy(Timing::multiplier)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(Timing.MULTIPLIER_PROPERTY)
          .hasMessageContaining("'" + bad + "'")
          .hasMessageContaining("positive number");
    }
  }

  @Test
  void awaitReturnsOnceTheConditionHolds() throws InterruptedException {
    AtomicInteger checks = new AtomicInteger();
    Timing.await("the third check", () -> checks.incrementAndGet() == 3);
    assertThat(checks).hasValue(3);
  }

  @Test
  void awaitFailsAtTheDeadlineNamingWhatItWaitedFor() {
    System.setProperty(Timing.MULTIPLIER_PROPERTY, "2");
    AtomicInteger checks = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Timing.await(
                    "the impossible", Duration.ofMillis(20), () -> checks.incrementAndGet() < 0))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("the impossible")
        .hasMessageContaining("PT0.04S");
    assertThat(checks.get()).isGreaterThanOrEqualTo(2); // at once, and at the deadline
  }

  @Test
  void awaitValueReturnsTheFirstResultOfAnAttempt() throws InterruptedException {
    AtomicInteger attempts = new AtomicInteger();
    String value =
        Timing.awaitValue(
            "the second attempt",
            Duration.ofSeconds(10),
            () -> attempts.incrementAndGet() == 2 ? Optional.of("second") : Optional.empty());
    assertThat(value).isEqualTo("second");
    assertThat(attempts).hasValue(2);
  }

  @Test
  void awaitValueFailsAtTheDeadlineNamingWhatItWaitedFor() {
    AtomicInteger attempts = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Timing.awaitValue(
                    "a lease",
                    Duration.ofMillis(20),
                    () -> {
                      attempts.incrementAndGet();
                      return Optional.empty();
                    }))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("a lease")
        .hasMessageContaining("PT0.02S");
    assertThat(attempts.get()).isGreaterThanOrEqualTo(2); // at once, and at the deadline
  }
}
