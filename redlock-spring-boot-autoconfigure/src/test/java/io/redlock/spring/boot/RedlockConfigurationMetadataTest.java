package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.redlock.RedlockConfig;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;

/**
 * Spring Boot's configuration metadata, as the build writes it into the jar: every {@code
 * redlock.*} property an application can set, {@code redlock.password} included, has a type
 * and a description, and every default is {@link RedlockConfig}'s.
 */
class RedlockConfigurationMetadataTest {

  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, Object>> properties() throws IOException {
    try (InputStream in =
        RedlockConfigurationMetadataTest.class.getResourceAsStream(
            "/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
      Map<String, Object> metadata = new ObjectMapper().readValue(in, Map.class);
      Map<String, Map<String, Object>> byName = new HashMap<>();
      for (Object property : (List<Object>) metadata.get("properties")) {
        Map<String, Object> p = (Map<String, Object>) property;
        byName.put((String) p.get("name"), p);
      }
      return byName;
    }
  }

  @Test
  void everyPropertyHasATypeAndADescription() throws IOException {
    Map<String, Map<String, Object>> properties = properties();
    assertThat(properties)
        .containsKeys(
            "redlock.nodes",
            "redlock.username",
            "redlock.password",
            "redlock.ttl",
            "redlock.max-ttl",
            "redlock.node-timeout",
            "redlock.connect-timeout",
            "redlock.drift-factor",
            "redlock.retry-count",
            "redlock.retry-delay",
            "redlock.retry-jitter",
            "redlock.max-wait",
            "redlock.key-prefix",
            "redlock.auto-extend-threshold",
            "redlock.restart-guard",
            "redlock.fencing",
            "redlock.lock-registry.key",
            "redlock.shedlock.namespace",
            "redlock.ssl.bundle",
            "redlock.tls.trusted-certificates",
            "redlock.tls.client-certificate",
            "redlock.tls.client-private-key",
            "redlock.tls.allow-unverified",
            "management.health.redlock.enabled",
            "management.health.redlock.held-back-status");
    properties.forEach(
        (name, property) -> {
          assertThat(property.get("type")).as(name + " type").isNotNull();
          assertThat((String) property.get("description")).as(name + " description").isNotBlank();
        });
  }

  @Test
  void theDefaultsAreRedlockConfigs() throws IOException {
    Map<String, Map<String, Object>> p = properties();
    assertThat(duration(p, "redlock.ttl")).isEqualTo(RedlockConfig.DEFAULT_TTL);
    assertThat(duration(p, "redlock.max-ttl")).isEqualTo(RedlockConfig.DEFAULT_MAX_TTL);
    assertThat(duration(p, "redlock.node-timeout")).isEqualTo(RedlockConfig.DEFAULT_NODE_TIMEOUT);
    assertThat(duration(p, "redlock.connect-timeout"))
        .isEqualTo(RedlockConfig.DEFAULT_CONNECT_TIMEOUT);
    assertThat(duration(p, "redlock.retry-delay")).isEqualTo(RedlockConfig.DEFAULT_RETRY_DELAY);
    assertThat(duration(p, "redlock.retry-jitter")).isEqualTo(RedlockConfig.DEFAULT_RETRY_JITTER);
    assertThat(duration(p, "redlock.max-wait")).isEqualTo(RedlockConfig.DEFAULT_MAX_WAIT);
    assertThat(number(p, "redlock.drift-factor")).isEqualTo(RedlockConfig.DEFAULT_DRIFT_FACTOR);
    assertThat(number(p, "redlock.retry-count")).isEqualTo(RedlockConfig.DEFAULT_RETRY_COUNT);
    assertThat(number(p, "redlock.auto-extend-threshold"))
        .isEqualTo(RedlockConfig.DEFAULT_AUTO_EXTEND_THRESHOLD);
    assertThat(p.get("redlock.key-prefix").get("defaultValue"))
        .isEqualTo(RedlockConfig.DEFAULT_KEY_PREFIX);
    assertThat(p.get("redlock.restart-guard").get("defaultValue"))
        .isEqualTo(RedlockConfig.DEFAULT_RESTART_GUARD);
    assertThat(p.get("redlock.fencing").get("defaultValue"))
        .isEqualTo(RedlockConfig.builder().nodes("redis://h:1").build().fencing());
    assertThat(p.get("management.health.redlock.held-back-status").get("defaultValue"))
        .isEqualTo(RedlockHealthProperties.DEFAULT_HELD_BACK_STATUS);
  }

  private static Duration duration(Map<String, Map<String, Object>> p, String name) {
    return DurationStyle.detectAndParse((String) p.get(name).get("defaultValue"));
  }

  private static double number(Map<String, Map<String, Object>> p, String name) {
    return ((Number) p.get(name).get("defaultValue")).doubleValue();
  }
}
