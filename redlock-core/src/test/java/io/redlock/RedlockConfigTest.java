package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Checks of {@link RedlockConfig}: every bad value refused at build(), secrets masked. */
class RedlockConfigTest {
  private static final String NODE = "redis://10.0.0.1:6379";

  private static RedlockConfig.Builder valid() {
    return RedlockConfig.builder().nodes(NODE);
  }

  /** Builds with {@code change} applied to a valid builder; expects a refusal naming all parts. */
  private static void refused(UnaryOperator<RedlockConfig.Builder> change, String... parts) {
    assertThatThrownBy(() -> change.apply(valid()).build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContainingAll(parts);
  }

  // ---- nodes ----

  @Test
  void noNodesAreRefused() {
    assertThatThrownBy(() -> RedlockConfig.builder().build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContainingAll("nodes", "at least one");
    assertThatThrownBy(() -> RedlockConfig.builder().nodes(List.of()).build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("nodes");
  }

  @Test
  void aNodeThatIsNotAUriWithAHostIsRefused() {
    refused(b -> b.nodes(NODE, "localhost:6379"), "nodes[1]", "localhost:6379", "URI with a host");
    refused(b -> b.nodes("redis://"), "nodes[0]", "redis://", "URI with a host");
    refused(b -> b.nodes("redis://bad host:1"), "nodes[0]", "bad host", "URI with a host");
    refused(b -> b.nodes("no uri at all"), "nodes[0]", "no uri at all", "URI with a host");
  }

  @Test
  void twoUrisReachingTheSameServerAreRefused() {
    refused(
        b -> b.nodes("redis://a:6379", "redis://b:6379", "redis://a:6379"),
        "nodes[2]",
        "nodes[0]",
        "same server");
    refused(
        b -> b.nodes("redis://cache.example:6379", "redis://cache.example"),
        "nodes[1]",
        "nodes[0]",
        "same server");
    refused(
        b -> b.nodes("redis://Cache.Example", "rediss://cache.example:6379/2"),
        "nodes[1]",
        "nodes[0]",
        "same server");
    assertThatCode(
            () ->
                RedlockConfig.builder()
                    .nodes("redis://a:6379", "redis://a:6380", "redis://b:6379")
                    .build())
        .doesNotThrowAnyException();
  }

  @Test
  void errorMessagesAboutNodesNeverShowAPassword() {
    assertThatThrownBy(
            () ->
                RedlockConfig.builder()
                    .nodes("redis://alice:s3cret@a:1", "redis://bob:s3cret@A:1")
                    .build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("same server")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    assertThatThrownBy(() -> RedlockConfig.builder().nodes("redis://alice:s3cret@").build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("URI with a host")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    assertThatThrownBy(() -> RedlockConfig.builder().nodes("redis://alice:s3 cret@h:1").build())
        .isInstanceOf(RedlockConfigException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3 cret"));
  }

  // ---- durations and numbers ----

  @Test
  void quorumAndRestartGuardWindowFollowTheNodesAndMaxTtl() {
    RedlockConfig three =
        RedlockConfig.builder().nodes("redis://a:1", "redis://b:1", "redis://c:1").build();
    assertThat(three.quorum()).isEqualTo(2);
    assertThat(
            three.toBuilder()
                .nodes("redis://a:1", "redis://b:1", "redis://c:1", "redis://d:1")
                .build()
                .quorum())
        .isEqualTo(3);
    // 60 s plus its drift margin: 60 s x 0.01 + 2 ms
    assertThat(three.restartGuardWindow()).isEqualTo(Duration.ofMillis(60_602));
  }

  @Test
  void ttlUnderOneMillisecondIsRefused() {
    refused(b -> b.ttl(Duration.ZERO), "ttl", "0 ms", "at least 1 ms");
    refused(b -> b.ttl(Duration.ofNanos(999_999)), "ttl", "999 µs", "at least 1 ms");
    refused(b -> b.ttl(Duration.ofMillis(-5)), "ttl", "-5 ms", "at least 1 ms");
  }

  @Test
  void ttlLeavingNoValidityAfterTheDriftIsRefused() {
    // 2 ms: drift = 0.02 ms + 2 ms > 2 ms
    refused(
        b -> b.ttl(Duration.ofMillis(2)).nodeTimeout(Duration.ofMillis(1)), "ttl", "2 ms", "drift");
    // 3 ms with drift factor 0.4: drift = 1.2 ms + 2 ms > 3 ms
    refused(
        b -> b.ttl(Duration.ofMillis(3)).nodeTimeout(Duration.ofMillis(1)).driftFactor(0.4),
        "ttl",
        "3 ms",
        "drift");
    // 3 ms without drift factor: 1 ms of validity is left
    assertThatCode(
            () ->
                valid()
                    .ttl(Duration.ofMillis(3))
                    .nodeTimeout(Duration.ofMillis(1))
                    .driftFactor(0)
                    .build())
        .doesNotThrowAnyException();
  }

  @Test
  void ttlOverTheLongestAcceptedIsRefusedAtBuildNotAtEveryAcquire() {
    // no duration setting accepts more than 365 days (RedlockConfig.MAX_DURATION); a config
    // holding a longer default ttl would make every acquire(resource) throw
    refused(b -> b.ttl(Duration.ofDays(400)), "ttl", "365 days");
    refused(b -> b.maxTtl(Duration.ofDays(400)), "maxTtl", "365 days");
    assertThatCode(() -> valid().maxTtl(Duration.ofDays(365)).ttl(Duration.ofDays(365)).build())
        .doesNotThrowAnyException();
  }

  @Test
  void ttlAboveMaxTtlIsRefusedNamingBoth() {
    refused(b -> b.ttl(Duration.ofSeconds(90)), "ttl 90 s", "maxTtl (60 s)");
    refused(b -> b.maxTtl(Duration.ofSeconds(5)), "ttl 30 s", "maxTtl (5000 ms)");
    assertThat(valid().build().maxTtl()).isEqualTo(RedlockConfig.DEFAULT_MAX_TTL);
    assertThat(valid().maxTtl(Duration.ofMinutes(5)).build().toBuilder().build().maxTtl())
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void ttlTooLargeForMillisecondsIsRefusedWithAConfigException() {
    refused(b -> b.ttl(Duration.ofSeconds(Long.MAX_VALUE)), "ttl");
  }

  @Test
  void nodeTimeoutNotPositiveIsRefused() {
    refused(b -> b.nodeTimeout(Duration.ZERO), "nodeTimeout", "0 ms", "more than 0");
    refused(b -> b.nodeTimeout(Duration.ofMillis(-1)), "nodeTimeout", "-1 ms", "more than 0");
  }

  @Test
  void nodeTimeoutNotShorterThanTtlIsRefused() {
    refused(
        b -> b.ttl(Duration.ofSeconds(1)).nodeTimeout(Duration.ofSeconds(1)),
        "nodeTimeout",
        "1000 ms",
        "shorter than ttl");
    refused(
        b -> b.ttl(Duration.ofSeconds(1)).nodeTimeout(Duration.ofSeconds(2)),
        "nodeTimeout",
        "2000 ms",
        "shorter than ttl",
        "1000 ms");
  }

  @Test
  void connectTimeoutNotPositiveIsRefused() {
    refused(b -> b.connectTimeout(Duration.ZERO), "connectTimeout", "0 ms", "more than 0");
    refused(
        b -> b.connectTimeout(Duration.ofSeconds(-1)), "connectTimeout", "-1000 ms", "more than 0");
  }

  @Test
  void driftFactorOutsideZeroToHalfIsRefused() {
    refused(b -> b.driftFactor(-0.01), "driftFactor", "-0.01", "from 0 (inclusive) to 0.5");
    refused(b -> b.driftFactor(0.5), "driftFactor", "0.5", "from 0 (inclusive) to 0.5");
    refused(b -> b.driftFactor(0.7), "driftFactor", "0.7", "from 0 (inclusive) to 0.5");
    refused(b -> b.driftFactor(Double.NaN), "driftFactor", "NaN", "from 0 (inclusive) to 0.5");
    refused(b -> b.driftFactor(Double.POSITIVE_INFINITY), "driftFactor", "Infinity");
    assertThatCode(() -> valid().driftFactor(0).build()).doesNotThrowAnyException();
    assertThatCode(() -> valid().driftFactor(0.49).build()).doesNotThrowAnyException();
  }

  @Test
  void negativeRetrySettingsAreRefused() {
    refused(b -> b.retryCount(-1), "retryCount", "-1", "0 or more");
    refused(b -> b.retryDelay(Duration.ofMillis(-1)), "retryDelay", "-1 ms", "0 or more");
    refused(b -> b.retryJitter(Duration.ofMillis(-1)), "retryJitter", "-1 ms", "0 or more");
    refused(b -> b.maxWait(Duration.ofMillis(-1)), "maxWait", "-1 ms", "0 or more");
    assertThatCode(
            () ->
                valid()
                    .retryCount(0)
                    .retryDelay(Duration.ZERO)
                    .retryJitter(Duration.ZERO)
                    .maxWait(Duration.ZERO)
                    .build())
        .doesNotThrowAnyException();
  }

  @Test
  void retryJitterLargerThanTheDelayIsRefused() {
    refused(
        b -> b.retryDelay(Duration.ofMillis(100)).retryJitter(Duration.ofMillis(101)),
        "retryJitter",
        "101 ms",
        "retryDelay",
        "100 ms");
    assertThatCode(
            () ->
                valid()
                    .retryDelay(Duration.ofMillis(100))
                    .retryJitter(Duration.ofMillis(100))
                    .build())
        .doesNotThrowAnyException();
  }

  @Test
  void keyPrefixOfMaxKeyBytesOrMoreIsRefused() {
    refused(b -> b.keyPrefix("k".repeat(1024)), "keyPrefix", "1024", "shorter than 1024 bytes");
    // 512 two-byte characters: 1024 bytes in UTF-8
    refused(b -> b.keyPrefix("é".repeat(512)), "keyPrefix", "512", "shorter than 1024 bytes");
    assertThatCode(() -> valid().keyPrefix("k".repeat(1023)).build()).doesNotThrowAnyException();
  }

  @Test
  void autoExtendThresholdOutsideZeroToOneIsRefused() {
    for (double bad : new double[] {0.0, 1.0, -0.5, 1.5, Double.NaN}) {
      refused(
          b -> b.autoExtendThreshold(bad),
          "autoExtendThreshold",
          String.valueOf(bad),
          "between 0 and 1");
    }
    assertThatCode(() -> valid().autoExtendThreshold(0.01).build()).doesNotThrowAnyException();
    assertThatCode(() -> valid().autoExtendThreshold(0.99).build()).doesNotThrowAnyException();
  }

  // ---- null ----

  @Test
  void nullToAnySetterIsRefusedNamingTheSetting() {
    RedlockConfig.Builder b = RedlockConfig.builder();
    npe(() -> b.nodes((String[]) null), "nodes");
    npe(() -> b.nodes((List<String>) null), "nodes");
    List<String> withNull = new ArrayList<>();
    withNull.add(NODE);
    withNull.add(null);
    npe(() -> b.nodes(withNull), "nodes[1]");
    npe(() -> b.nodes(NODE, null), "nodes[1]");
    npe(() -> b.username(null), "username");
    npe(() -> b.password(null), "password");
    npe(() -> b.ttl(null), "ttl");
    npe(() -> b.nodeTimeout(null), "nodeTimeout");
    npe(() -> b.connectTimeout(null), "connectTimeout");
    npe(() -> b.retryDelay(null), "retryDelay");
    npe(() -> b.retryJitter(null), "retryJitter");
    npe(() -> b.maxWait(null), "maxWait");
    npe(() -> b.keyPrefix(null), "keyPrefix");
  }

  private static void npe(ThrowingCallable call, String setting) {
    assertThatThrownBy(call).isInstanceOf(NullPointerException.class).hasMessageContaining(setting);
  }

  // ---- toString ----

  @Test
  void toStringNeverShowsAPassword() {
    RedlockConfig fromUri =
        RedlockConfig.builder()
            .nodes("redis://alice:s3cret@h:1", "redis://:s3cret@h:2", "redis://s3cret@h:3")
            .build();
    assertThat(fromUri.toString())
        .doesNotContain("s3cret")
        .contains("redis://alice:****@h:1", "****@h:2", "****@h:3");

    RedlockConfig fromSetting = valid().username("alice").password("s3cret").build();
    assertThat(fromSetting.toString())
        .doesNotContain("s3cret")
        .contains("password=****")
        .contains("alice");
    assertThat(fromSetting.password()).isEqualTo("s3cret");
  }

  @Test
  void toStringWithoutCredentialsShowsNoMask() {
    assertThat(valid().build().toString()).contains(NODE).doesNotContain("password", "****");
  }

  // ---- round trip and defaults ----

  private static RedlockConfig allNonDefault() {
    return RedlockConfig.builder()
        .nodes("redis://a:6379", "rediss://user:pw@b:6380/2", "redis://c:6381")
        .username("alice")
        .password("s3cret")
        .ttl(Duration.ofSeconds(7))
        .nodeTimeout(Duration.ofMillis(20))
        .connectTimeout(Duration.ofSeconds(3))
        .driftFactor(0.02)
        .retryCount(4)
        .retryDelay(Duration.ofMillis(300))
        .retryJitter(Duration.ofMillis(50))
        .maxWait(Duration.ofSeconds(5))
        .keyPrefix("app:")
        .autoExtendThreshold(0.3)
        .build();
  }

  @Test
  void toBuilderRoundTripsEverySetting() {
    RedlockConfig original = allNonDefault();
    RedlockConfig copy = original.toBuilder().build();

    assertThat(copy).isEqualTo(original).hasSameHashCodeAs(original);
    assertThat(copy.toString()).isEqualTo(original.toString());
    assertThat(copy.nodes())
        .containsExactly("redis://a:6379", "rediss://user:pw@b:6380/2", "redis://c:6381");
    assertThat(copy.username()).isEqualTo("alice");
    assertThat(copy.password()).isEqualTo("s3cret");
    assertThat(copy.ttl()).isEqualTo(Duration.ofSeconds(7));
    assertThat(copy.nodeTimeout()).isEqualTo(Duration.ofMillis(20));
    assertThat(copy.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(copy.driftFactor()).isEqualTo(0.02);
    assertThat(copy.retryCount()).isEqualTo(4);
    assertThat(copy.retryDelay()).isEqualTo(Duration.ofMillis(300));
    assertThat(copy.retryJitter()).isEqualTo(Duration.ofMillis(50));
    assertThat(copy.maxWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(copy.keyPrefix()).isEqualTo("app:");
    assertThat(copy.autoExtendThreshold()).isEqualTo(0.3);
  }

  @Test
  void everySettingTakesPartInEquality() {
    RedlockConfig base = allNonDefault();
    List<UnaryOperator<RedlockConfig.Builder>> changes =
        List.of(
            b -> b.nodes("redis://a:6379"),
            b -> b.username("bob"),
            b -> b.password("other"),
            b -> b.ttl(Duration.ofSeconds(8)),
            b -> b.nodeTimeout(Duration.ofMillis(21)),
            b -> b.connectTimeout(Duration.ofSeconds(4)),
            b -> b.driftFactor(0.03),
            b -> b.retryCount(5),
            b -> b.retryDelay(Duration.ofMillis(301)),
            b -> b.retryJitter(Duration.ofMillis(51)),
            b -> b.maxWait(Duration.ofSeconds(6)),
            b -> b.keyPrefix("other:"),
            b -> b.autoExtendThreshold(0.4));
    for (int i = 0; i < changes.size(); i++) {
      RedlockConfig changed = changes.get(i).apply(base.toBuilder()).build();
      assertThat(changed).as("change #%d", i).isNotEqualTo(base);
    }
  }

  @Test
  void aDerivedCopyAndLaterBuilderChangesLeaveTheOriginalAlone() {
    RedlockConfig.Builder builder = valid();
    RedlockConfig first = builder.build();
    builder.nodes("redis://other:1").ttl(Duration.ofSeconds(1));
    RedlockConfig derived = first.toBuilder().ttl(Duration.ofSeconds(2)).build();

    assertThat(first.nodes()).containsExactly(NODE);
    assertThat(first.ttl()).isEqualTo(RedlockConfig.DEFAULT_TTL);
    assertThat(derived.ttl()).isEqualTo(Duration.ofSeconds(2));
    assertThatThrownBy(() -> first.nodes().add("redis://x:1"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void defaultsAreThePublicConstants() {
    RedlockConfig config = valid().build();
    assertThat(config.nodes()).containsExactly(NODE);
    assertThat(config.username()).isNull();
    assertThat(config.password()).isNull();
    assertThat(config.ttl()).isEqualTo(RedlockConfig.DEFAULT_TTL);
    assertThat(config.nodeTimeout()).isEqualTo(RedlockConfig.DEFAULT_NODE_TIMEOUT);
    assertThat(config.connectTimeout()).isEqualTo(RedlockConfig.DEFAULT_CONNECT_TIMEOUT);
    assertThat(config.driftFactor()).isEqualTo(RedlockConfig.DEFAULT_DRIFT_FACTOR);
    assertThat(config.retryCount()).isEqualTo(RedlockConfig.DEFAULT_RETRY_COUNT);
    assertThat(config.retryDelay()).isEqualTo(RedlockConfig.DEFAULT_RETRY_DELAY);
    assertThat(config.retryJitter()).isEqualTo(RedlockConfig.DEFAULT_RETRY_JITTER);
    assertThat(config.maxWait()).isEqualTo(RedlockConfig.DEFAULT_MAX_WAIT);
    assertThat(config.keyPrefix()).isEqualTo(RedlockConfig.DEFAULT_KEY_PREFIX);
    assertThat(config.autoExtendThreshold()).isEqualTo(RedlockConfig.DEFAULT_AUTO_EXTEND_THRESHOLD);
    // and the constants are what their documentation says
    assertThat(RedlockConfig.DEFAULT_TTL).isEqualTo(Duration.ofSeconds(30));
    assertThat(RedlockConfig.DEFAULT_NODE_TIMEOUT).isEqualTo(Duration.ofMillis(50));
    assertThat(RedlockConfig.DEFAULT_DRIFT_FACTOR).isEqualTo(0.01);
    assertThat(RedlockConfig.DEFAULT_KEY_PREFIX).isEmpty();
    assertThat(config.driftFor(RedlockConfig.DEFAULT_TTL)).isEqualTo(Duration.ofMillis(302));
  }
}
