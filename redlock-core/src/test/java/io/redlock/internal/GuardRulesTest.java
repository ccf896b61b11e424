package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.FreshMarker;
import io.redlock.internal.GuardRules.AtOnce;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.NodeInfo.Persistence;
import org.junit.jupiter.api.Test;

/** The restart guard's pure decisions, case by case. */
class GuardRulesTest {
  private static final Persistence AOF_ALWAYS = new Persistence(true, "always", false, true);

  private static NodeInfo node(String marker, Persistence persistence) {
    return new NodeInfo("run-2", "master", 5, 0, marker, persistence, null);
  }

  @Test
  void aMarkerNamingTheCurrentProcessCountsAtOnce() {
    assertThat(GuardRules.countsAtOnce(node(FreshMarker.value("run-2"), null), false))
        .isEqualTo(AtOnce.MARKER);
    assertThat(GuardRules.countsAtOnce(node(FreshMarker.value("run-1"), null), false))
        .isEqualTo(AtOnce.NO);
    assertThat(GuardRules.countsAtOnce(node("something else", null), false)).isEqualTo(AtOnce.NO);
    assertThat(GuardRules.countsAtOnce(node(null, null), false)).isEqualTo(AtOnce.NO);
  }

  @Test
  void aFlaggedClockOutweighsMarkerAndPersistence() {
    assertThat(GuardRules.countsAtOnce(node(FreshMarker.value("run-2"), AOF_ALWAYS), true))
        .isEqualTo(AtOnce.NO);
  }

  @Test
  void persistenceCountsOnlyWithEveryCondition() {
    String earlier = FreshMarker.value("run-1");
    assertThat(GuardRules.countsAtOnce(node(earlier, AOF_ALWAYS), false))
        .isEqualTo(AtOnce.PERSISTENCE);
    assertThat(
            GuardRules.countsAtOnce(
                node(earlier, new Persistence(true, "ALWAYS", false, true)), false))
        .isEqualTo(AtOnce.PERSISTENCE);
    assertThat(GuardRules.countsAtOnce(node(null, AOF_ALWAYS), false))
        .as("no proof that data was loaded")
        .isEqualTo(AtOnce.NO);
    assertThat(GuardRules.countsAtOnce(node(earlier, null), false))
        .as("persistence unknown")
        .isEqualTo(AtOnce.NO);
    assertThat(
            GuardRules.countsAtOnce(
                node(earlier, new Persistence(false, "always", false, true)), false))
        .isEqualTo(AtOnce.NO);
    assertThat(
            GuardRules.countsAtOnce(
                node(earlier, new Persistence(true, "everysec", false, true)), false))
        .isEqualTo(AtOnce.NO);
    assertThat(
            GuardRules.countsAtOnce(
                node(earlier, new Persistence(true, "always", true, true)), false))
        .as("rewritten: AOF may have been switched on at run time")
        .isEqualTo(AtOnce.NO);
    assertThat(
            GuardRules.countsAtOnce(
                node(earlier, new Persistence(true, "always", false, false)), false))
        .isEqualTo(AtOnce.NO);
  }

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
}
