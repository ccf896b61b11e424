package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.TlsSettings;
import io.redlock.lettuce.LettuceTransport;
import io.redlock.testkit.RedisServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snippets of docs/configuration.md, run against three real redis-server processes whose
 * only user for the library is the one production.md's ACL line creates.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConfigurationIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() throws Exception {
    servers = RedisServers.startFresh(3);
    ProductionIT.createDocumentedUser(servers);
    for (int i = 0; i < servers.size(); i++) {
      servers.declareFresh(i, "billing:"); // as 'redlock init --key-prefix billing:' would
    }
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void theTlsSnippetNamesItsFilesAndIsCheckedAtBuild() {
    // the snippet of configuration.md, "TLS": its files do not exist here, and build() says so
    assertThatThrownBy(
            () -> {
              RedlockConfig config =
                  RedlockConfig.builder()
                      .nodes(
                          "rediss://10.0.0.1:6380",
                          "rediss://10.0.0.2:6380",
                          "rediss://10.0.0.3:6380")
                      .tls(
                          TlsSettings.builder()
                              .trustedCertificates(
                                  Path.of("/etc/redlock/ca.pem")) // the nodes' CA, for them only
                              .clientCertificate(
                                  Path.of("/etc/redlock/client.pem"), // for tls-auth-clients yes
                                  Path.of(
                                      "/etc/redlock/client.key")) // PKCS#8, unencrypted, mode 0600
                              .build())
                      .build();
            })
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("/etc/redlock/ca.pem");
  }

  @Test
  void builder(@TempDir Path dir) throws Exception {
    Path passwordFile = dir.resolve("redlock.password");
    Files.writeString(
        passwordFile, ProductionIT.DOCUMENTED_PASSWORD + "\n", StandardCharsets.UTF_8);

    RedlockConfig config =
        RedlockConfig.builder()
            .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
            .username("locker")
            .password(Files.readString(passwordFile).strip())
            .keyPrefix("billing:")
            .ttl(Duration.ofSeconds(20))
            .nodeTimeout(Duration.ofMillis(100))
            .build();
    config = config.toBuilder().nodes(servers.uris()).build(); // test-only: the fleet's addresses

    assertThat(config.toString()).doesNotContain(ProductionIT.DOCUMENTED_PASSWORD);
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("invoice:7")) {
      assertThat(lease.remaining()).isGreaterThan(Duration.ofSeconds(15));
      assertThat(Fleet.holding(servers, "billing:invoice:7")).isGreaterThanOrEqualTo(2);
    }
    Fleet.awaitReleased(servers, "billing:invoice:7");
  }

  @Test
  void sharedClientResources() throws Exception {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(servers.uris())
            .username("locker")
            .password(ProductionIT.DOCUMENTED_PASSWORD)
            .keyPrefix("billing:")
            .build();
    ClientResources resources =
        DefaultClientResources.builder()
            .nettyCustomizer(LettuceTransport.consolidatingFlushes(null))
            .reconnectDelay(LettuceTransport.reconnectDelay())
            .build();
    try (LettuceTransport transport = new LettuceTransport(resources);
        Redlock redlock = Redlock.create(config, transport)) {
      // ...
      try (Lease lease = redlock.acquire("shared", Duration.ofSeconds(5))) { // test-only
        lease.ensureValid(); // test-only
      } // test-only
    }
    assertThat(resources.eventExecutorGroup().isShuttingDown())
        .as("the caller's resources stay the caller's")
        .isFalse();
    resources.shutdown(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
  }
}
