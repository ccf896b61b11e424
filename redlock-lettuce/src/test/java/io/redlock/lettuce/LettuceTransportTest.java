package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.resource.DefaultClientResources;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** Which URIs the transport takes, whatever the default locale. */
class LettuceTransportTest {

  @Test
  void schemesAreMatchedWithoutCaseUnderATurkishLocale() {
    Locale before = Locale.getDefault();
    // In Turkish, "I".toLowerCase() is a dotless ı: REDISS would become "redıss".
    Locale.setDefault(Locale.forLanguageTag("tr-TR"));
    LettuceTransport transport = new LettuceTransport();
    try {
      assertThat(transport.supports(URI.create("REDISS://host:6380"))).isTrue();
      assertThat(transport.supports(URI.create("Redis://host:6379"))).isTrue();
      assertThat(transport.supports(URI.create("memcached://host:11211"))).isFalse();
    } finally {
      Locale.setDefault(before);
      transport.close();
    }
  }

  @Test
  void theSchemeIsLowerCasedBeforeLettuceParsesTheUriUnderATurkishLocale() {
    Locale before = Locale.getDefault();
    Locale.setDefault(Locale.forLanguageTag("tr-TR"));
    try {
      assertThat(LettuceTransport.withLowerCaseScheme("REDISS://User:PaSS@Host:6380/1"))
          .isEqualTo("rediss://User:PaSS@Host:6380/1");
      assertThat(LettuceTransport.withLowerCaseScheme("Redis://h")).isEqualTo("redis://h");
      assertThat(LettuceTransport.withLowerCaseScheme("not a uri")).isEqualTo("not a uri");
    } finally {
      Locale.setDefault(before);
    }
  }

  @Test
  void aLostConnectionIsTriedAgainAtLeastOnceASecondOnTheTransportsOwnResources() {
    LettuceTransport transport = new LettuceTransport();
    try {
      for (var resources : List.of(transport.resources(), transport.extensionResources())) {
        var delay = resources.reconnectDelay();
        assertThat(delay.createDelay(1)).isEqualTo(Duration.ofMillis(1));
        for (long attempt = 1; attempt <= 64; attempt++) {
          assertThat(delay.createDelay(attempt))
              .as("attempt %d", attempt)
              .isLessThanOrEqualTo(LettuceTransport.MOST_RECONNECT_DELAY);
        }
        assertThat(delay.createDelay(20)).isEqualTo(LettuceTransport.MOST_RECONNECT_DELAY);
      }
    } finally {
      transport.close();
    }
  }

  @Test
  void sharedResourcesKeepTheirOwnReconnectDelay() {
    var shared = DefaultClientResources.create();
    try {
      LettuceTransport transport = new LettuceTransport(shared);
      assertThat(transport.resources()).isSameAs(shared);
      assertThat(transport.resources().reconnectDelay().createDelay(20))
          .as("Lettuce's default")
          .isEqualTo(Duration.ofSeconds(30));
      transport.close();
    } finally {
      shared.shutdown();
    }
  }
}
