package io.redlock;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * How connections to {@code rediss://} nodes use TLS: which certificates to trust for the
 * nodes, the client certificate to present, and whether a node URI may switch certificate
 * checks off.
 *
 * <p>What it guarantees: with {@link Builder#trustedCertificates} (or {@link
 * Builder#trustManagerFactory}), the nodes are trusted by those certificates alone (the
 * JVM-wide trust store is neither used nor changed for them, and nothing else in the JVM trusts
 * them); without it, by the JVM's default trust store. The client certificate comes from PEM
 * files ({@link Builder#clientCertificate}) or a {@link KeyManagerFactory} (such as one of a
 * Spring Boot SSL bundle's), never both. A node
 * URI with {@code verifyPeer=NONE} (no certificate check: anyone on the path can pose as the
 * node and read the credentials) is refused unless {@link Builder#allowUnverified} is set, and
 * is then logged at WARN. Files are checked to be readable when the settings are built; their
 * content is read when a node is connected, and a bad file is then a
 * {@link RedlockConfigException} naming it.
 *
 * <p>Immutable and thread-safe. {@link #toString()} shows file names only.
 *
 * @since 0.1.0
 */
public final class TlsSettings {

  /** No settings of its own: the JVM's trust store, no client certificate, checks on. */
  public static final TlsSettings DEFAULT = builder().build();

  private final Path trustedCertificates;
  private final Path clientCertificateChain;
  private final Path clientPrivateKey;
  private final boolean allowUnverified;
  private final TrustManagerFactory trustManagerFactory;
  private final KeyManagerFactory keyManagerFactory;
  private final List<String> protocols;
  private final List<String> cipherSuites;

  private TlsSettings(Builder b) {
    this.trustedCertificates = b.trustedCertificates;
    this.clientCertificateChain = b.clientCertificateChain;
    this.clientPrivateKey = b.clientPrivateKey;
    this.allowUnverified = b.allowUnverified;
    this.trustManagerFactory = b.trustManagerFactory;
    this.keyManagerFactory = b.keyManagerFactory;
    this.protocols = b.protocols;
    this.cipherSuites = b.cipherSuites;
  }

  /** A builder with nothing set. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.trustedCertificates = trustedCertificates;
    b.clientCertificateChain = clientCertificateChain;
    b.clientPrivateKey = clientPrivateKey;
    b.allowUnverified = allowUnverified;
    b.trustManagerFactory = trustManagerFactory;
    b.keyManagerFactory = keyManagerFactory;
    b.protocols = protocols;
    b.cipherSuites = cipherSuites;
    return b;
  }

  /** The PEM file of the certificates that sign the nodes' certificates, or {@code null}. */
  public Path trustedCertificates() {
    return trustedCertificates;
  }

  /** The PEM file of the client certificate chain, or {@code null}. */
  public Path clientCertificateChain() {
    return clientCertificateChain;
  }

  /** The PEM file (PKCS#8, unencrypted) of the client certificate's private key, or null. */
  public Path clientPrivateKey() {
    return clientPrivateKey;
  }

  /** Whether a node URI may switch certificate checks off ({@code verifyPeer=NONE}). */
  public boolean allowUnverified() {
    return allowUnverified;
  }

  /**
   * The trust managers that judge the nodes' certificates, or {@code null}.
   *
   * @since 0.1.0
   */
  public TrustManagerFactory trustManagerFactory() {
    return trustManagerFactory;
  }

  /**
   * The key managers that present the client certificate, or {@code null}.
   *
   * @since 0.1.0
   */
  public KeyManagerFactory keyManagerFactory() {
    return keyManagerFactory;
  }

  /**
   * The TLS protocols to enable, or an empty list for the JVM's default.
   *
   * @since 0.1.0
   */
  public List<String> protocols() {
    return protocols;
  }

  /**
   * The cipher suites to enable, or an empty list for the JVM's default.
   *
   * @since 0.1.0
   */
  public List<String> cipherSuites() {
    return cipherSuites;
  }

  /**
   * Whether these settings change anything for a connection beyond the JVM's defaults (trust,
   * client certificate, protocols or cipher suites); {@link #allowUnverified()} aside.
   *
   * @since 0.1.0
   */
  public boolean customizesConnections() {
    return trustedCertificates != null
        || trustManagerFactory != null
        || clientCertificateChain != null
        || keyManagerFactory != null
        || !protocols.isEmpty()
        || !cipherSuites.isEmpty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TlsSettings t
        && Objects.equals(trustedCertificates, t.trustedCertificates)
        && Objects.equals(clientCertificateChain, t.clientCertificateChain)
        && Objects.equals(clientPrivateKey, t.clientPrivateKey)
        && allowUnverified == t.allowUnverified
        && trustManagerFactory == t.trustManagerFactory
        && keyManagerFactory == t.keyManagerFactory
        && protocols.equals(t.protocols)
        && cipherSuites.equals(t.cipherSuites);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        trustedCertificates,
        clientCertificateChain,
        clientPrivateKey,
        allowUnverified,
        System.identityHashCode(trustManagerFactory),
        System.identityHashCode(keyManagerFactory),
        protocols,
        cipherSuites);
  }

  @Override
  public String toString() {
    return "TlsSettings{trustedCertificates="
        + (trustedCertificates != null
            ? trustedCertificates
            : trustManagerFactory != null
                ? "TrustManagerFactory " + trustManagerFactory.getAlgorithm()
                : "JVM default")
        + ", clientCertificate="
        + (clientCertificateChain != null
            ? clientCertificateChain
            : keyManagerFactory != null
                ? "KeyManagerFactory " + keyManagerFactory.getAlgorithm()
                : "none")
        + (protocols.isEmpty() ? "" : ", protocols=" + protocols)
        + (cipherSuites.isEmpty() ? "" : ", cipherSuites=" + cipherSuites)
        + (allowUnverified ? ", allowUnverified" : "")
        + "}";
  }

  /** Builds {@link TlsSettings}; not thread-safe. */
  public static final class Builder {
    private Path trustedCertificates;
    private Path clientCertificateChain;
    private Path clientPrivateKey;
    private boolean allowUnverified;
    private TrustManagerFactory trustManagerFactory;
    private KeyManagerFactory keyManagerFactory;
    private List<String> protocols = List.of();
    private List<String> cipherSuites = List.of();

    private Builder() {}

    /**
     * Trusts the nodes' certificates if these certificates sign them (a private CA, or the
     * nodes' own self-signed certificates), for the nodes only.
     *
     * @param pemFile a PEM file of one or more X.509 certificates
     * @return this builder
     */
    public Builder trustedCertificates(Path pemFile) {
      this.trustedCertificates = Objects.requireNonNull(pemFile, "trustedCertificates");
      return this;
    }

    /**
     * Presents this client certificate to the nodes (Redis's {@code tls-auth-clients yes},
     * its default).
     *
     * @param certificateChain a PEM file of the client certificate, then its issuers
     * @param privateKey a PEM file of its private key, PKCS#8 ({@code BEGIN PRIVATE KEY}),
     *     not encrypted; keep it readable by its owner only
     * @return this builder
     */
    public Builder clientCertificate(Path certificateChain, Path privateKey) {
      this.clientCertificateChain = Objects.requireNonNull(certificateChain, "certificateChain");
      this.clientPrivateKey = Objects.requireNonNull(privateKey, "privateKey");
      return this;
    }

    /**
     * Trusts the nodes' certificates if these trust managers do, for the nodes only: for
     * trust material that is not a PEM file (a Spring Boot SSL bundle's, a PKCS#12 trust
     * store). Not with {@link #trustedCertificates}.
     *
     * @param trustManagerFactory initialised trust managers
     * @return this builder
     * @since 0.1.0
     */
    public Builder trustManagerFactory(TrustManagerFactory trustManagerFactory) {
      this.trustManagerFactory = Objects.requireNonNull(trustManagerFactory, "trustManagerFactory");
      return this;
    }

    /**
     * Presents the client certificate of these key managers to the nodes. Not with {@link
     * #clientCertificate}.
     *
     * @param keyManagerFactory initialised key managers
     * @return this builder
     * @since 0.1.0
     */
    public Builder keyManagerFactory(KeyManagerFactory keyManagerFactory) {
      this.keyManagerFactory = Objects.requireNonNull(keyManagerFactory, "keyManagerFactory");
      return this;
    }

    /**
     * Enables only these TLS protocols (such as {@code TLSv1.3}); none given: the JVM's
     * default.
     *
     * @return this builder
     * @since 0.1.0
     */
    public Builder protocols(String... protocols) {
      this.protocols = List.copyOf(Arrays.asList(protocols));
      return this;
    }

    /**
     * Enables only these cipher suites; none given: the JVM's default.
     *
     * @return this builder
     * @since 0.1.0
     */
    public Builder cipherSuites(String... cipherSuites) {
      this.cipherSuites = List.copyOf(Arrays.asList(cipherSuites));
      return this;
    }

    /**
     * Lets a node URI switch certificate checks off with {@code verifyPeer=NONE}; default
     * false, and such a URI is refused. Anyone who can reach the path to such a node can pose
     * as it, read the password and grant or deny locks: for tests and migrations only.
     *
     * @return this builder
     */
    public Builder allowUnverified(boolean allowUnverified) {
      this.allowUnverified = allowUnverified;
      return this;
    }

    /**
     * Builds the settings.
     *
     * @throws RedlockConfigException naming the setting whose file is not a readable file, or
     *     the two settings given for one thing (trusted certificates and a trust manager
     *     factory; a client certificate and a key manager factory)
     */
    public TlsSettings build() {
      if (trustedCertificates != null && trustManagerFactory != null) {
        throw new RedlockConfigException(
            "tls.trustedCertificates and tls.trustManagerFactory are both set; give one");
      }
      if (clientCertificateChain != null && keyManagerFactory != null) {
        throw new RedlockConfigException(
            "tls.clientCertificate and tls.keyManagerFactory are both set; give one");
      }
      checkReadable("tls.trustedCertificates", trustedCertificates);
      checkReadable("tls.clientCertificate (certificate chain)", clientCertificateChain);
      checkReadable("tls.clientCertificate (private key)", clientPrivateKey);
      return new TlsSettings(this);
    }

    private static void checkReadable(String setting, Path file) {
      if (file != null && !(Files.isRegularFile(file) && Files.isReadable(file))) {
        throw new RedlockConfigException(
            setting + " is " + file + ", which is not a readable file; give a PEM file");
      }
    }
  }
}
