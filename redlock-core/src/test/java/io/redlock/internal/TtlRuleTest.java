package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.RedlockConfigException;
import io.redlock.RedlockException;
import io.redlock.internal.TtlRule.Problem;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TtlRuleTest {
  private static final Duration MAX_TTL = Duration.ofSeconds(60);
  private static final Duration NODE_TIMEOUT = Duration.ofMillis(50);

  /** The rule restated from its Javadoc, one clause per problem, in the order they are checked. */
  private static Problem expected(
      long ttlMicros, long maxTtlMillis, long nodeTimeoutMicros, double driftFactor) {
    if (ttlMicros < 1_000) {
      return Problem.UNDER_ONE_MILLISECOND;
    }
    if (ttlMicros > maxTtlMillis * 1_000) {
      return Problem.OVER_MAX_TTL;
    }
    if (ttlMicros <= nodeTimeoutMicros) {
      return Problem.NOT_OVER_NODE_TIMEOUT;
    }
    long millis = ttlMicros / 1_000;
    double validityNanos = millis * 1e6 - Math.ceil(millis * 1e6 * driftFactor) - 2_000_000;
    return validityNanos > 0 ? null : Problem.NO_VALIDITY;
  }

  @Test
  void everyTtlAroundEveryBoundaryGetsTheProblemTheRuleStates() {
    long[] maxTtls = {1, 2, 3, 5, 10, 60_000};
    long[] nodeTimeoutsMicros = {1, 500, 999, 1_000, 1_001, 2_000, 4_000};
    double[] driftFactors = {0.0, 0.01, 0.1, 0.3, 0.49};
    int checked = 0;
    for (long maxTtl : maxTtls) {
      for (long nodeTimeout : nodeTimeoutsMicros) {
        for (double drift : driftFactors) {
          for (long ttl = -1_000; ttl <= 12_000; ttl += 250) {
            Problem got =
                TtlRule.check(
                    Duration.ofNanos(ttl * 1_000),
                    Duration.ofMillis(maxTtl),
                    Duration.ofNanos(nodeTimeout * 1_000),
                    drift);
            assertThat(got)
                .as(
                    "ttl=%dµs maxTtl=%dms nodeTimeout=%dµs drift=%s",
                    ttl, maxTtl, nodeTimeout, drift)
                .isEqualTo(expected(ttl, maxTtl, nodeTimeout, drift));
            checked++;
          }
        }
      }
    }
    assertThat(checked).isGreaterThan(10_000);
  }

  @Test
  void eachProblemIsReachedAndNamedInItsOrder() {
    assertThat(TtlRule.check(Duration.ZERO, MAX_TTL, NODE_TIMEOUT, 0.01))
        .isEqualTo(Problem.UNDER_ONE_MILLISECOND);
    assertThat(TtlRule.check(Duration.ofNanos(999_999), MAX_TTL, NODE_TIMEOUT, 0.01))
        .isEqualTo(Problem.UNDER_ONE_MILLISECOND);
    assertThat(TtlRule.check(Duration.ofMillis(60_001), MAX_TTL, NODE_TIMEOUT, 0.01))
        .isEqualTo(Problem.OVER_MAX_TTL);
    assertThat(TtlRule.check(NODE_TIMEOUT, MAX_TTL, NODE_TIMEOUT, 0.01))
        .isEqualTo(Problem.NOT_OVER_NODE_TIMEOUT);
    // 3 ms with a drift of 0.4: 1.2 ms + 2 ms of margin leave nothing.
    assertThat(TtlRule.check(Duration.ofMillis(3), MAX_TTL, Duration.ofMillis(1), 0.4))
        .isEqualTo(Problem.NO_VALIDITY);
    assertThat(TtlRule.check(MAX_TTL, MAX_TTL, NODE_TIMEOUT, 0.01)).isNull();
    assertThat(TtlRule.check(Duration.ofMillis(51), MAX_TTL, NODE_TIMEOUT, 0.01)).isNull();
  }

  @Test
  void aRefusalIsAConfigExceptionNamingTheTtlAndWhatIsAccepted() {
    for (Problem problem : Problem.values()) {
      RedlockConfigException e =
          TtlRule.refused(Duration.ofMillis(70_000), problem, MAX_TTL, NODE_TIMEOUT);
      assertThat(e).isInstanceOf(RedlockException.class);
      assertThat(e.getMessage())
          .startsWith("ttl 70 s is not accepted: it must be ")
          .endsWith(problem.accepted(MAX_TTL, NODE_TIMEOUT));
    }
    assertThat(
            TtlRule.refused(Duration.ofMillis(70_000), Problem.OVER_MAX_TTL, MAX_TTL, NODE_TIMEOUT)
                .getMessage())
        .contains("maxTtl (60 s)");
  }
}
