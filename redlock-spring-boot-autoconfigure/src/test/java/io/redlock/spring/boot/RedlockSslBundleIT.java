package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.testkit.RedisServers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code redlock.ssl.bundle} and {@code redlock.tls.*} against three real nodes that speak TLS
 * with a private CA and require a client certificate (Redis's {@code tls-auth-clients yes}):
 * the nodes are trusted through a Spring Boot PEM SSL bundle, or through the PEM files of the
 * {@code redlock.tls.*} properties, never through the JVM-wide trust store, which does not
 * trust them.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockSslBundleIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.builder().count(3).tls(true).tlsClientAuth(true).fresh(true).start();
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static ApplicationContextRunner runner() {
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      uris.add(servers.tlsUri(i));
    }
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(SslAutoConfiguration.class, RedlockAutoConfiguration.class))
        .withPropertyValues(
            "redlock.nodes=" + String.join(",", uris),
            "redlock.connect-timeout=5s",
            // one attempt below: what is tested is TLS, not a loaded machine's first answer
            "redlock.node-timeout=500ms");
  }

  @Test
  void aPemSslBundleTrustsThePrivateCaAndPresentsTheClientCertificate() {
    assertThat(System.getProperty("javax.net.ssl.trustStore")).isNull();
    runner()
        .withPropertyValues(
            "spring.ssl.bundle.pem.redis-nodes.truststore.certificate=file:"
                + servers.tlsCertificate(),
            "spring.ssl.bundle.pem.redis-nodes.keystore.certificate=file:"
                + servers.tlsCertificate(),
            "spring.ssl.bundle.pem.redis-nodes.keystore.private-key=file:"
                + servers.tlsPrivateKey(),
            "spring.ssl.bundle.pem.redis-nodes.options.enabled-protocols=TLSv1.3,TLSv1.2",
            "redlock.ssl.bundle=redis-nodes")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Redlock redlock = context.getBean(Redlock.class);
              assertThat(redlock.config().tls().trustManagerFactory()).isNotNull();
              assertThat(redlock.config().tls().protocols()).containsExactly("TLSv1.3", "TLSv1.2");
              try (Lease lease = redlock.tryAcquire("boot-ssl-bundle").orElseThrow()) {
                assertThat(servers.holding("boot-ssl-bundle", lease.token()))
                    .isGreaterThanOrEqualTo(2);
              }
            });
  }

  @Test
  void theTlsPropertiesTrustThePemFilesForTheNodesOnly() {
    runner()
        .withPropertyValues(
            "redlock.tls.trusted-certificates=" + servers.tlsCertificate(),
            "redlock.tls.client-certificate=" + servers.tlsCertificate(),
            "redlock.tls.client-private-key=" + servers.tlsPrivateKey())
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              Redlock redlock = context.getBean(Redlock.class);
              assertThat(redlock.config().tls().trustedCertificates())
                  .isEqualTo(servers.tlsCertificate());
              try (Lease lease = redlock.tryAcquire("boot-tls-files").orElseThrow()) {
                assertThat(servers.holding("boot-tls-files", lease.token()))
                    .isGreaterThanOrEqualTo(2);
              }
            });
  }

  @Test
  void withoutTrustTheNodesAreRefusedAndAnUnknownBundleIsNamed() {
    runner()
        .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining("PKIX"));
    runner()
        .withPropertyValues("redlock.ssl.bundle=missing")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("redlock.ssl.bundle is missing"));
    runner()
        .withPropertyValues(
            "spring.ssl.bundle.pem.redis-nodes.truststore.certificate=file:"
                + servers.tlsCertificate(),
            "redlock.ssl.bundle=redis-nodes",
            "redlock.tls.trusted-certificates=" + servers.tlsCertificate())
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("are both set; give the nodes' trust"));
  }
}
