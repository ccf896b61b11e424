package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.internal.Quorum.Decision;
import org.junit.jupiter.api.Test;

class QuorumTest {

  @Test
  void quorumIsAStrictMajorityForOddAndEvenN() {
    assertThat(Quorum.of(1)).isEqualTo(1);
    assertThat(Quorum.of(2)).isEqualTo(2);
    assertThat(Quorum.of(3)).isEqualTo(2);
    assertThat(Quorum.of(4)).isEqualTo(3);
    assertThat(Quorum.of(5)).isEqualTo(3);
    assertThat(Quorum.of(9)).isEqualTo(5);
    for (int n = 1; n <= 50; n++) {
      // Two quorums always share a node: that is the whole safety argument.
      assertThat(2 * Quorum.of(n)).isGreaterThan(n);
      assertThat(2 * (Quorum.of(n) - 1)).isLessThanOrEqualTo(n);
    }
    assertThatThrownBy(() -> Quorum.of(0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void decisionIsKnownExactlyWhenTheOutcomeIsCertain() {
    for (int n = 1; n <= 12; n++) {
      int q = Quorum.of(n);
      for (int granted = 0; granted <= n; granted++) {
        for (int failed = 0; granted + failed <= n; failed++) {
          int pending = n - granted - failed;
          Decision d = Quorum.decide(n, q, granted, failed);
          boolean mustSucceed = granted >= q;
          boolean canSucceed = granted + pending >= q;
          if (mustSucceed) {
            assertThat(d).as("n=%d g=%d f=%d", n, granted, failed).isEqualTo(Decision.REACHED);
          } else if (!canSucceed) {
            assertThat(d).as("n=%d g=%d f=%d", n, granted, failed).isEqualTo(Decision.UNREACHABLE);
          } else {
            assertThat(d).as("n=%d g=%d f=%d", n, granted, failed).isEqualTo(Decision.PENDING);
          }
        }
      }
    }
  }
}
