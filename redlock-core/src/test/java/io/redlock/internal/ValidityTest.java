package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ValidityTest {

  @Test
  void driftIsTtlTimesFactorPlusTwoMillis() {
    assertThat(Validity.driftNanos(10_000, 0.01)).isEqualTo(100_000_000L + 2_000_000L);
    assertThat(Validity.driftNanos(10_000, 0.0)).isEqualTo(2_000_000L);
    // rounded up, never down: the margin must not shrink by truncation
    assertThat(Validity.driftNanos(1, 0.0000001)).isEqualTo(1L + 2_000_000L);
  }

  @Test
  void validityRunsFromTheStartOfTheRequestsMinusDrift() {
    long t0 = 5_000_000_000L;
    assertThat(Validity.validUntil(t0, 10_000, 0.01))
        .isEqualTo(t0 + 10_000_000_000L - 102_000_000L);
  }

  @Test
  void validityComparesLikeNanoTimeAcrossOverflow() {
    long deadline = Long.MIN_VALUE + 10; // nanoTime may wrap: compare by subtraction
    assertThat(Validity.isValidAt(deadline, Long.MAX_VALUE - 10)).isTrue();
    assertThat(Validity.isValidAt(deadline, deadline)).isFalse();
    assertThat(Validity.isValidAt(deadline, deadline + 1)).isFalse();
  }

  @Test
  void tokensAre160RandomBitsInHex() {
    Tokens tokens = new Tokens();
    String a = tokens.next();
    String b = tokens.next();
    assertThat(a).hasSize(40).matches("[0-9a-f]{40}");
    assertThat(a).isNotEqualTo(b);
  }
}
