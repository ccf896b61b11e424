package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.internal.AttemptVerdict.Obstacle;
import io.redlock.internal.AttemptVerdict.Outcome;
import org.junit.jupiter.api.Test;

class AttemptVerdictTest {
  private static final long[] ORIGINS = {0L, Long.MAX_VALUE - 1, Long.MIN_VALUE, -1};

  @Test
  void aLeaseIsOursOnlyWithAMajorityWhileValidityIsLeft() {
    for (long origin : ORIGINS) {
      for (long left = -3; left <= 3; left++) {
        long validUntil = origin + left;
        String as = "origin=" + origin + " left=" + left;
        assertThat(AttemptVerdict.outcome(false, validUntil, origin))
            .as(as)
            .isEqualTo(Outcome.NO_MAJORITY);
        assertThat(AttemptVerdict.outcome(true, validUntil, origin))
            .as(as)
            .isEqualTo(left > 0 ? Outcome.ACQUIRED : Outcome.TOO_LATE);
      }
    }
  }

  @Test
  void retriesStayWithinCountAndWait() {
    for (int retryCount = 0; retryCount <= 4; retryCount++) {
      for (int attempts = 1; attempts <= 6; attempts++) {
        for (long elapsed = 0; elapsed <= 4; elapsed++) {
          long maxWait = 2;
          String as = "retryCount=" + retryCount + " attempts=" + attempts + " elapsed=" + elapsed;
          boolean expected = attempts <= retryCount && elapsed <= maxWait;
          assertThat(AttemptVerdict.mayRetry(true, attempts, retryCount, elapsed, maxWait))
              .as(as)
              .isEqualTo(expected);
          assertThat(AttemptVerdict.mayRetry(false, attempts, retryCount, elapsed, maxWait))
              .as("no retries asked: " + as)
              .isFalse();
        }
      }
    }
  }

  @Test
  void theObstacleIsWhatStoodBetweenTheGrantsAndAMajority() {
    for (int n = 1; n <= 9; n++) {
      int q = Quorum.of(n);
      for (int granted = 0; granted < q; granted++) {
        for (int failed = 0; granted + failed <= n; failed++) {
          for (int heldBack = 0; granted + failed + heldBack <= n; heldBack++) {
            int taken = n - granted - failed - heldBack;
            Obstacle o = AttemptVerdict.obstacle(q, granted, failed, heldBack);
            String as = String.format("n=%d g=%d f=%d h=%d", n, granted, failed, heldBack);
            switch (o) {
              // had the failing nodes granted, a majority was possible
              case NODE_FAILURES -> assertThat(granted + failed).as(as).isGreaterThanOrEqualTo(q);
              // only with the held-back nodes was a majority possible
              case RESTART_GUARD -> {
                assertThat(granted + failed).as(as).isLessThan(q);
                assertThat(granted + failed + heldBack).as(as).isGreaterThanOrEqualTo(q);
              }
              // other holders alone kept a majority out of reach
              case CONTENTION -> assertThat(n - taken).as(as).isLessThan(q);
            }
          }
        }
      }
    }
  }
}
