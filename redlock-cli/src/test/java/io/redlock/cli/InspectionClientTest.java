package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The URIs {@code status} and {@code doctor} connect to. */
class InspectionClientTest {

  @Test
  void schemesInAnyCaseAreTakenUnderATurkishLocale() {
    Locale before = Locale.getDefault();
    // In Turkish, "I".toLowerCase() is a dotless ı: REDISS would become "redıss".
    Locale.setDefault(Locale.forLanguageTag("tr-TR"));
    try {
      ConnectionOptions.Settings settings =
          new ConnectionOptions.Settings(
              List.of(),
              null,
              null,
              Optional.empty(),
              Optional.empty(),
              Duration.ofMillis(50),
              Duration.ofSeconds(1),
              "",
              true,
              "test",
              io.redlock.TlsSettings.DEFAULT);
      RedisURI tls = InspectionClient.uri("REDISS://host:6380", settings, Duration.ofSeconds(1));
      assertThat(tls.isSsl()).isTrue();
      assertThat(tls.getPort()).isEqualTo(6380);
      RedisURI plain = InspectionClient.uri("Redis://host:6379/2", settings, Duration.ofSeconds(1));
      assertThat(plain.isSsl()).isFalse();
      assertThat(plain.getDatabase()).isEqualTo(2);
    } finally {
      Locale.setDefault(before);
    }
  }
}
