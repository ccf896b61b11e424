package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.TlsSettings;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code rediss://}: TLS to every node, verified against a trust store the JVM is told about
 * in the standard way ({@code javax.net.ssl.trustStore}) or against {@link TlsSettings}'s
 * certificates for the nodes only, and refused when the certificate is not trusted; a URI that
 * switches checks off is refused unless allowed; a client certificate for nodes that require
 * one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.builder().count(3).tls(true).fresh(true).start();
  }

  @AfterAll
  static void stop() {
    servers.close();
  }

  private static List<String> tlsUris() {
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      uris.add(servers.tlsUri(i));
    }
    return uris;
  }

  /**
   * The TLS nodes, with a node timeout of 500 ms: an extension is one round, which a loaded
   * machine can lose within the default 50 ms, and what is tested here is TLS.
   */
  private static RedlockConfig config() {
    return RedlockConfig.builder()
        .nodes(tlsUris())
        .connectTimeout(Duration.ofSeconds(5))
        .nodeTimeout(Duration.ofMillis(500))
        .build();
  }

  @Test
  void locksOverTlsWhenTheCertificateIsTrusted() throws Exception {
    System.setProperty("javax.net.ssl.trustStore", servers.tlsTrustStore().toString());
    System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
    System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
    try (Redlock redlock = Redlock.create(config());
        Lease lease = redlock.acquire("tls:resource", Duration.ofSeconds(10))) {
      assertThat(lease.extend(Duration.ofSeconds(20))).isTrue();
      // the plain port of the same server sees what went over TLS; granted by a majority,
      // node 0 may be the one answering last
      assertThat(servers.holding("tls:resource", lease.token())).isGreaterThanOrEqualTo(2);
      Timing.await(
          "node 0 to hold tls:resource",
          () -> lease.token().equals(servers.command(0, "GET", "tls:resource")));
    } finally {
      System.clearProperty("javax.net.ssl.trustStore");
      System.clearProperty("javax.net.ssl.trustStorePassword");
      System.clearProperty("javax.net.ssl.trustStoreType");
    }
    assertThat(servers.command(0, "GET", "tls:resource")).isNull();
  }

  @Test
  void schemesInAnyCaseAreAcceptedUnderATurkishLocale() throws Exception {
    Locale before = Locale.getDefault();
    // In Turkish, "I".toLowerCase() is a dotless ı: REDISS would become "redıss".
    Locale.setDefault(Locale.forLanguageTag("tr-TR"));
    try {
      // TLS ports, and no trust store: only a client speaking TLS gets as far as refusing the
      // node's certificate (a URI not taken is refused before any connection).
      RedlockConfig tls =
          RedlockConfig.builder()
              .nodes(
                  servers.tlsUri(0).replaceFirst("^rediss", "REDISS"),
                  servers.tlsUri(1).replaceFirst("^rediss", "ReDiSS"),
                  servers.tlsUri(2))
              .connectTimeout(Duration.ofSeconds(5))
              .build();
      assertThatThrownBy(() -> Redlock.create(tls))
          .isInstanceOf(RedlockConfigException.class)
          .hasMessageContaining("refused the connection settings")
          .hasMessageContaining("PKIX");

      // Plain ports: the same server's other port, where a lease is granted.
      RedlockConfig plain =
          RedlockConfig.builder()
              .nodes(
                  servers.uri(0).replaceFirst("^redis", "REDIS"),
                  servers.uri(1).replaceFirst("^redis", "Redis"),
                  servers.uri(2))
              .build();
      try (Redlock redlock = Redlock.create(plain);
          Lease lease = redlock.acquire("tls:turkish", Duration.ofSeconds(10))) {
        assertThat(servers.holding("tls:turkish", lease.token())).isGreaterThanOrEqualTo(2);
      }
    } finally {
      Locale.setDefault(before);
    }
  }

  @Test
  void anUntrustedCertificateIsAClearConfigurationError() {
    assertThatThrownBy(() -> Redlock.create(config()))
        .isInstanceOf(RedlockConfigException.class)
        // every node presents the untrusted certificate; whichever answered first is named
        // (named without the password its URI carries)
        .satisfies(
            e ->
                assertThat(tlsUris())
                    .map(uri -> uri.replaceFirst("//[^@]*@", "//"))
                    .anyMatch(e.getMessage()::contains))
        .hasMessageContaining("refused");
  }

  @Test
  void trustedCertificatesTrustTheNodesWithoutTheJvmTrustStore() throws Exception {
    assertThat(System.getProperty("javax.net.ssl.trustStore")).isNull();
    RedlockConfig config =
        config().toBuilder()
            .tls(TlsSettings.builder().trustedCertificates(servers.tlsCertificate()).build())
            .build();
    assertThat(config.toString()).contains("trustedCertificates=" + servers.tlsCertificate());
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("tls:pem", Duration.ofSeconds(10))) {
      assertThat(servers.holding("tls:pem", lease.token())).isGreaterThanOrEqualTo(2);
    }
    // The JVM's own trust store still does not trust the nodes.
    assertThatThrownBy(() -> Redlock.create(config()))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("PKIX");
  }

  @Test
  void verifyPeerNoneIsRefusedUnlessExplicitlyAllowed() throws Exception {
    List<String> unverified = new ArrayList<>();
    for (String uri : tlsUris()) {
      unverified.add(uri + "?verifyPeer=NONE");
    }
    RedlockConfig refused = config().toBuilder().nodes(unverified).build();
    assertThatThrownBy(() -> Redlock.create(refused))
        .isInstanceOf(RedlockConfigException.class)
        .hasMessageContaining("verifyPeer=NONE")
        .hasMessageContaining("tls.allowUnverified(true)")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(servers.password()));

    RedlockConfig allowed =
        refused.toBuilder().tls(TlsSettings.builder().allowUnverified(true).build()).build();
    try (Redlock redlock = Redlock.create(allowed);
        Lease lease = redlock.acquire("tls:unverified", Duration.ofSeconds(10))) {
      assertThat(lease.isValid()).isTrue();
    }
  }

  @Test
  void aClientCertificateIsPresentedToNodesThatRequireOne() throws Exception {
    try (RedisServers strict =
        RedisServers.builder().count(3).tls(true).tlsClientAuth(true).fresh(true).start()) {
      List<String> uris = new ArrayList<>();
      for (int i = 0; i < strict.size(); i++) {
        uris.add(strict.tlsUri(i));
      }
      TlsSettings trustOnly =
          TlsSettings.builder().trustedCertificates(strict.tlsCertificate()).build();
      RedlockConfig without =
          config().toBuilder()
              .nodes(uris)
              .connectTimeout(Duration.ofSeconds(2))
              .tls(trustOnly)
              .build();
      // The node closes a connection without a client certificate after the handshake: no
      // node ever answers, and no lock is granted.
      try (Redlock redlock = Redlock.create(without.toBuilder().retryCount(0).build())) {
        assertThatThrownBy(() -> redlock.acquire("tls:client-cert", Duration.ofSeconds(10)))
            .isInstanceOf(io.redlock.LockUnavailableException.class);
      } catch (RedlockConfigException refusedAtOnce) {
        assertThat(refusedAtOnce).hasMessageContaining("refused");
      }

      RedlockConfig with =
          without.toBuilder()
              .tls(
                  trustOnly.toBuilder()
                      .clientCertificate(strict.tlsCertificate(), strict.tlsPrivateKey())
                      .build())
              .build();
      try (Redlock redlock = Redlock.create(with);
          Lease lease = redlock.acquire("tls:client-cert", Duration.ofSeconds(10))) {
        assertThat(strict.holding("tls:client-cert", lease.token())).isGreaterThanOrEqualTo(2);
      }
    }
  }

  @Test
  void trustAndKeyManagerFactoriesServeAsTheTrustStoreAndClientCertificate() throws Exception {
    try (RedisServers strict =
        RedisServers.builder().count(3).tls(true).tlsClientAuth(true).fresh(true).start()) {
      List<String> uris = new ArrayList<>();
      for (int i = 0; i < strict.size(); i++) {
        uris.add(strict.tlsUri(i));
      }
      java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
      try (var in = java.nio.file.Files.newInputStream(strict.tlsTrustStore())) {
        trust.load(in, "changeit".toCharArray());
      }
      javax.net.ssl.TrustManagerFactory trustManagers =
          javax.net.ssl.TrustManagerFactory.getInstance(
              javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      trustManagers.init(trust);
      javax.net.ssl.KeyManagerFactory keyManagers =
          keyManagers(strict.tlsCertificate(), strict.tlsPrivateKey());
      TlsSettings tls =
          TlsSettings.builder()
              .trustManagerFactory(trustManagers)
              .keyManagerFactory(keyManagers)
              .protocols("TLSv1.3", "TLSv1.2")
              .build();
      assertThat(tls.toString())
          .contains("TrustManagerFactory")
          .contains("KeyManagerFactory")
          .contains("TLSv1.3");
      RedlockConfig config = config().toBuilder().nodes(uris).tls(tls).build();
      try (Redlock redlock = Redlock.create(config);
          Lease lease = redlock.acquire("tls:factories", Duration.ofSeconds(10))) {
        assertThat(strict.holding("tls:factories", lease.token())).isGreaterThanOrEqualTo(2);
      }
      assertThatThrownBy(
              () ->
                  TlsSettings.builder()
                      .trustManagerFactory(trustManagers)
                      .trustedCertificates(strict.tlsCertificate())
                      .build())
          .isInstanceOf(RedlockConfigException.class)
          .hasMessage("tls.trustedCertificates and tls.trustManagerFactory are both set; give one");
    }
  }

  /** Key managers holding the certificate and PKCS#8 key of two PEM files. */
  private static javax.net.ssl.KeyManagerFactory keyManagers(
      java.nio.file.Path certificate, java.nio.file.Path key) throws Exception {
    java.security.cert.Certificate cert;
    try (var in = java.nio.file.Files.newInputStream(certificate)) {
      cert = java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    String pem =
        java.nio.file.Files.readString(key)
            .replaceAll("-----[A-Z ]+-----", "")
            .replaceAll("\\s", "");
    java.security.spec.PKCS8EncodedKeySpec spec =
        new java.security.spec.PKCS8EncodedKeySpec(java.util.Base64.getDecoder().decode(pem));
    java.security.PrivateKey privateKey =
        java.security.KeyFactory.getInstance(cert.getPublicKey().getAlgorithm())
            .generatePrivate(spec);
    java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
    store.load(null, null);
    char[] password = "unused".toCharArray();
    store.setKeyEntry("client", privateKey, password, new java.security.cert.Certificate[] {cert});
    javax.net.ssl.KeyManagerFactory factory =
        javax.net.ssl.KeyManagerFactory.getInstance(
            javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
    factory.init(store, password);
    return factory;
  }

  @Test
  void aMissingPemFileIsRefusedNamingTheSetting() {
    assertThatThrownBy(
            () ->
                TlsSettings.builder()
                    .trustedCertificates(java.nio.file.Path.of("no-such.pem"))
                    .build())
        .isInstanceOf(RedlockConfigException.class)
        .hasMessage(
            "tls.trustedCertificates is no-such.pem, which is not a readable file; give a PEM file");
  }
}
