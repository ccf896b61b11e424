package io.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for {@code 127.0.0.1} and {@code localhost}, made with the JDK's
 * own {@code keytool} (so nothing beyond a JDK is needed), written as the PEM files Redis
 * reads ({@code cert.pem}, {@code key.pem}) and as a PKCS12 trust store clients can use
 * ({@code truststore.p12}, password {@link #TRUST_STORE_PASSWORD}).
 *
 * <p>For tests only: the private key is written unencrypted. Immutable once created.
 */
final class TestCertificate {

  static final String TRUST_STORE_PASSWORD = "changeit";
  private static final String ALIAS = "redis";

  private final Path dir;

  private TestCertificate(Path dir) {
    this.dir = dir;
  }

  /** Creates a key pair and a certificate valid for two days in {@code dir}. */
  static TestCertificate create(Path dir) {
    Path keyStore = dir.resolve("server.p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> command =
        List.of(
            keytool.toString(),
            "-genkeypair",
            "-alias",
            ALIAS,
            "-keyalg",
            "RSA",
            "-keysize",
            "2048",
            "-validity",
            "2",
            "-dname",
            "CN=127.0.0.1",
            "-ext",
            "SAN=ip:127.0.0.1,dns:localhost",
            "-storetype",
            "PKCS12",
            "-keystore",
            keyStore.toString(),
            "-storepass",
            TRUST_STORE_PASSWORD);
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output;
      try (InputStream in = process.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IllegalStateException("keytool could not make a test certificate: " + output);
      }
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keyStore)) {
        store.load(in, TRUST_STORE_PASSWORD.toCharArray());
      }
      Key key = store.getKey(ALIAS, TRUST_STORE_PASSWORD.toCharArray());
      Certificate certificate = store.getCertificate(ALIAS);
      Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
      Files.writeString(
          dir.resolve("key.pem"),
          "-----BEGIN PRIVATE KEY-----\n"
              + pem.encodeToString(key.getEncoded())
              + "\n-----END PRIVATE KEY-----\n");
      Files.writeString(
          dir.resolve("cert.pem"),
          "-----BEGIN CERTIFICATE-----\n"
              + pem.encodeToString(certificate.getEncoded())
              + "\n-----END CERTIFICATE-----\n");
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry(ALIAS, certificate);
      try (var out = Files.newOutputStream(dir.resolve("truststore.p12"))) {
        trust.store(out, TRUST_STORE_PASSWORD.toCharArray());
      }
      return new TestCertificate(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not make a test certificate in " + dir, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("could not make a test certificate in " + dir, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while making a test certificate", e);
    }
  }

  Path certificate() {
    return dir.resolve("cert.pem");
  }

  Path privateKey() {
    return dir.resolve("key.pem");
  }

  Path trustStore() {
    return dir.resolve("truststore.p12");
  }

  /** Deletes the files and their directory; quietly, as a test's cleanup. */
  void delete() {
    for (String file : List.of("server.p12", "cert.pem", "key.pem", "truststore.p12")) {
      try {
        Files.deleteIfExists(dir.resolve(file));
      } catch (IOException e) {
        // a leftover file in the temp directory is harmless
      }
    }
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // likewise
    }
  }
}
