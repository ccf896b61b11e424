package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.spi.NodeInfo;
import org.junit.jupiter.api.Test;

/** The restart guard's pure decisions, case by case. */
class GuardRulesTest {
  @Test
  void ranAheadGivesTheNodeTheUncertaintyAndTheAllowance() {
    long second = 1_000_000_000L;
    long ms = 1_000_000L;
    // 12 ms ahead in 1 s with 1 ms uncertainty and 10 ms allowance: not certainly beyond
    assertThat(GuardRules.ranAhead(second + 12 * ms, second, 2 * ms, 10 * ms)).isFalse();
    assertThat(GuardRules.ranAhead(second + 13 * ms, second, 2 * ms, 10 * ms)).isTrue();
    // a slow clock is never "ahead"
    assertThat(GuardRules.ranAhead(second - 500 * ms, second, 0, 0)).isFalse();
    // a perfect clock with no uncertainty is not flagged with no allowance
    assertThat(GuardRules.ranAhead(second, second, 0, 0)).isFalse();
  }

  @Test
  void leastStepMeasuresAStepAgainstTheNodesOwnRate() {
    long second = 1_000_000_000L;
    long ms = 1_000_000L;
    long us = 1_000L;
    // a perfect clock over a 60 s baseline, then 8 ms more than 1 s in 1 s: a step of 8 ms,
    // less the TIME resolution and the rate's uncertainty (1 µs in 60 s)
    long step = leastStep(60 * second, 60 * second, 0, second + 8 * ms, second, 0);
    assertThat(step).isBetween(8 * ms - 3 * us, 8 * ms);
    // 5 % fast all along: no step, however far beyond driftFactor the rate is
    assertThat(leastStep(63 * second, 60 * second, 0, second + 50 * ms, second, 0))
        .isLessThanOrEqualTo(0);
    // 0.5 % slow, then 1 s gains 1.004 s: 9 ms beyond its own rate
    assertThat(leastStep(60 * second - 300 * ms, 60 * second, 0, second + 4 * ms, second, 0))
        .isBetween(9 * ms - 3 * us, 9 * ms);
  }

  @Test
  void leastStepGivesTheNodeTheRoundTripsAndTheRatesUncertainty() {
    long second = 1_000_000_000L;
    long ms = 1_000_000L;
    // 10 ms of round trip across the interval hide an 8 ms step
    assertThat(leastStep(60 * second, 60 * second, 10 * ms, second + 8 * ms, second, 10 * ms))
        .isLessThanOrEqualTo(0);
    // over a 1 s baseline, 10 ms of uncertainty make the rate up to 1 % faster: 10 ms more
    assertThat(leastStep(second, second, 10 * ms, second + 20 * ms, second, 0))
        .isLessThan(10 * ms)
        .isGreaterThan(9 * ms);
    // a baseline no longer than its uncertainty says nothing of the rate
    assertThat(leastStep(5 * ms, 5 * ms, 5 * ms, second + 100 * ms, second, 0))
        .isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void fastestRateIsTheLargestRateTheBaselineAllows() {
    long second = 1_000_000_000L;
    long ms = 1_000_000L;
    long us = 1_000L;
    // a perfect clock over 60 s with no round trip: the TIME resolution only
    assertThat(GuardRules.fastestRate(60 * second, 60 * second, 0))
        .isEqualTo((60.0 * second + us) / (60 * second));
    // 1 % fast over 1 s, 10 ms of uncertainty: up to 1.02 (1.01 s in 0.99 s)
    assertThat(GuardRules.fastestRate(second + 10 * ms, second, 10 * ms))
        .isEqualTo((double) (second + 10 * ms + us) / (second - 10 * ms));
    // no longer than its uncertainty, or no time at all: no rate
    assertThat(GuardRules.fastestRate(5 * ms, 5 * ms, 5 * ms)).isNaN();
    assertThat(GuardRules.fastestRate(5 * ms, 5 * ms, 5 * ms + 1)).isNaN();
    assertThat(GuardRules.fastestRate(0, 0, 0)).isNaN();
    assertThat(GuardRules.fastestRate(5 * ms, 5 * ms, 5 * ms - 1)).isPositive();
  }

  @Test
  void leastStepAtRateGivesTheNodeTheRateTheRoundTripsAndTheResolution() {
    long second = 1_000_000_000L;
    long ms = 1_000_000L;
    long us = 1_000L;
    // at a rate of exactly 1: 8 ms gained beyond 1 s is a step of 8 ms less the resolution
    assertThat(GuardRules.leastStepAtRate(1.0, second + 8 * ms, second, 0)).isEqualTo(8 * ms - us);
    // at 1.01, a clock at exactly that rate shows none, and the resolution is spare
    assertThat(GuardRules.leastStepAtRate(1.01, second + 10 * ms, second, 0)).isEqualTo(-us);
    assertThat(GuardRules.leastStepAtRate(1.01, second + 10 * ms + us, second, 0)).isZero();
    // the round trips lengthen the interval, at the rate: 5 ms at 1.01 is 5.05 ms
    assertThat(GuardRules.leastStepAtRate(1.01, second + 20 * ms, second, 5 * ms))
        .isEqualTo(20 * ms - us - 10 * ms - 5_050 * us);
    // no rate, or no time passed: nothing is said
    assertThat(GuardRules.leastStepAtRate(Double.NaN, second + 100 * ms, second, 0))
        .isEqualTo(Long.MIN_VALUE);
    assertThat(GuardRules.leastStepAtRate(1.0, 100 * ms, 0, 0)).isEqualTo(Long.MIN_VALUE);
    // leastStep is fastestRate then leastStepAtRate
    assertThat(leastStep(60 * second, 60 * second, 0, second + 8 * ms, second, 0))
        .isEqualTo(
            GuardRules.leastStepAtRate(
                GuardRules.fastestRate(60 * second, 60 * second, 0), second + 8 * ms, second, 0));
  }

  @Test
  void refusalsAreAclDenialsAndMissingCommandsAsRedisWordsThem() {
    String[] refusals = {
      // Redis 6.2, a command or a key outside the user's ACL
      "NOPERM this user has no permissions to run the 'info' command or its subcommand",
      "NOPERM this user has no permissions to access one of the keys used as arguments",
      // Redis 7.2
      "NOPERM User locker has no permissions to run the 'time' command",
      // inside a script: 6.2, 7.0 and 7.2 words
      "ERR Error running script (call to f_db8d8f63): @user_script:1: @user_script: 1: The user"
          + " executing the script can't run this command or subcommand",
      "ERR The user executing the script can't run this command or subcommand script: 104a, on"
          + " @user_script:1.",
      "ERR The user executing the script can't access at least one of the keys mentioned in"
          + " the command arguments script: 104a, on @user_script:1.",
      "ERR ACL failure in script: User locker has no permissions to run the 'time' command"
          + " script: 8a2f, on @user_script:4.",
      // renamed or disabled (rename-command), or missing behind a proxy
      "ERR unknown command `TIME`, with args beginning with: ",
      "ERR unknown command 'INFO', with args beginning with: 'server' ",
      "ERR Error running script (call to f_104ae65d): @user_script:1: @user_script: 1: Unknown"
          + " Redis command called from Lua script",
    };
    for (String message : refusals) {
      assertThat(io.redlock.spi.Refusals.isRefusal(new RuntimeException(message)))
          .as(message)
          .isTrue();
    }
    assertThat(
            io.redlock.spi.Refusals.isRefusal(
                new UnsupportedOperationException("no max-ttl register")))
        .isTrue();
  }

  @Test
  void passingErrorsAndUnreachableNodesAreNoRefusal() {
    String[] failures = {
      "OOM command not allowed when used memory > 'maxmemory'.",
      "ERR Error running script (call to f_5e1f): @user_script:1: @user_script: 1: -OOM command"
          + " not allowed when used memory > 'maxmemory'.",
      "LOADING Redis is loading the dataset in memory",
      "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
      "ERR Error running script (call to f_5e1f): @user_script:3: user_script:3: attempt to"
          + " compare nil with number",
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
      "ERR max number of clients reached",
    };
    for (String message : failures) {
      assertThat(io.redlock.spi.Refusals.isRefusal(new RuntimeException(message)))
          .as(message)
          .isFalse();
    }
    assertThat(
            io.redlock.spi.Refusals.isRefusal(new java.net.ConnectException("connection refused")))
        .isFalse();
    assertThat(io.redlock.spi.Refusals.isRefusal(new java.io.IOException("NOPERM-looking reset")))
        .isFalse();
    assertThat(
            io.redlock.spi.Refusals.isRefusal(
                new java.util.concurrent.TimeoutException("unknown command")))
        .isFalse();
    assertThat(io.redlock.spi.Refusals.isRefusal(new RuntimeException((String) null))).isFalse();
  }

  @Test
  void everyEvictionPolicyWithAMemoryLimitMayEvictLockKeys() {
    assertThat(new NodeInfo.Memory(0, "allkeys-lru").mayEvict()).isFalse();
    assertThat(new NodeInfo.Memory(1_000_000, "noeviction").mayEvict()).isFalse();
    assertThat(new NodeInfo.Memory(1_000_000, "NOEVICTION").mayEvict()).isFalse();
    for (String policy :
        new String[] {
          "allkeys-lru",
          "volatile-lru",
          "allkeys-lfu",
          "volatile-lfu",
          "allkeys-random",
          "volatile-random",
          "volatile-ttl"
        }) {
      assertThat(new NodeInfo.Memory(1_000_000, policy).mayEvict()).as(policy).isTrue();
    }
  }

  @Test
  void onlyAllkeysPoliciesWithAMemoryLimitMayEvictKeysWithoutTtl() {
    // Fencing counters have no ttl: only allkeys-* can evict them, and only under a limit.
    for (String policy : new String[] {"allkeys-lru", "allkeys-lfu", "allkeys-random"}) {
      assertThat(new NodeInfo.Memory(1_000_000, policy).mayEvictKeysWithoutTtl())
          .as(policy)
          .isTrue();
      assertThat(new NodeInfo.Memory(0, policy).mayEvictKeysWithoutTtl())
          .as(policy + " without maxmemory")
          .isFalse();
    }
    assertThat(new NodeInfo.Memory(1_000_000, "ALLKEYS-LRU").mayEvictKeysWithoutTtl()).isTrue();
    for (String policy :
        new String[] {
          "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "noeviction"
        }) {
      assertThat(new NodeInfo.Memory(1_000_000, policy).mayEvictKeysWithoutTtl())
          .as(policy)
          .isFalse();
    }
  }

  /** The step over an interval against the rate measured over the baseline before it. */
  private static long leastStep(
      long baseServerDelta,
      long baseLocalDelta,
      long baseUncertaintyNanos,
      long serverDelta,
      long localDelta,
      long uncertaintyNanos) {
    return GuardRules.leastStepAtRate(
        GuardRules.fastestRate(baseServerDelta, baseLocalDelta, baseUncertaintyNanos),
        serverDelta,
        localDelta,
        uncertaintyNanos);
  }
}
