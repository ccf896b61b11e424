package io.redlock.spring.boot;

import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code redlock.*} properties: one for each {@link RedlockConfig} setting, with the same
 * defaults. Times are {@link Duration}s, so {@code redlock.ttl=30s} and {@code
 * redlock.node-timeout=50ms} both work.
 *
 * <p>The password can be set ({@code redlock.password}) but not read back: this class has no
 * getter for it. A password written in a node URI is read back as written by {@link
 * #getNodes}, for the application's own use; where the actuator shows the URIs ({@code
 * /actuator/configprops}, {@code /actuator/env}), the starter's {@code SanitizingFunction}
 * masks it. {@code toString()} shows no setting.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("redlock")
public class RedlockProperties {

  // The field comments are the descriptions of Spring Boot's configuration metadata (the
  // annotation processor reads them); the defaults it cannot read from a constant of another
  // class, and redlock.password (which has no getter), are in
  // META-INF/additional-spring-configuration-metadata.json.

  /**
   * The independent Redis masters, as redis:// or rediss:// URIs, comma-separated or as an
   * indexed list. The Redlock bean is made only when this is set. A password written in a URI
   * reaches the nodes; the actuator masks it.
   */
  private List<String> nodes = new ArrayList<>();

  /** ACL user name for the nodes whose URI names none. */
  private String username;

  private String password;

  /** Lease time to live for the methods that take none. */
  private Duration ttl = RedlockConfig.DEFAULT_TTL;

  /**
   * The longest ttl a lease may ask for. The restart guard holds a restarted node back from the
   * quorum for this long (plus drift): keep it short, and extend leases instead.
   */
  private Duration maxTtl = RedlockConfig.DEFAULT_MAX_TTL;

  /** How long one node may take to answer one command of a lock round. */
  private Duration nodeTimeout = RedlockConfig.DEFAULT_NODE_TIMEOUT;

  /** How long connecting to one node may take. */
  private Duration connectTimeout = RedlockConfig.DEFAULT_CONNECT_TIMEOUT;

  /** The share of the ttl taken off a lease's validity for clock drift, 0 to 0.5. */
  private double driftFactor = RedlockConfig.DEFAULT_DRIFT_FACTOR;

  /** How many more attempts a blocking acquire makes after the first. */
  private int retryCount = RedlockConfig.DEFAULT_RETRY_COUNT;

  /** The pause between two attempts of a blocking acquire. */
  private Duration retryDelay = RedlockConfig.DEFAULT_RETRY_DELAY;

  /** The random time, up to this, added to each pause between attempts. */
  private Duration retryJitter = RedlockConfig.DEFAULT_RETRY_JITTER;

  /** The longest a blocking acquire waits in all. */
  private Duration maxWait = RedlockConfig.DEFAULT_MAX_WAIT;

  /** Put before every resource name to make its key; empty by default. */
  private String keyPrefix = RedlockConfig.DEFAULT_KEY_PREFIX;

  /** The share of the ttl after which an auto-extended lease is extended, above 0, below 1. */
  private double autoExtendThreshold = RedlockConfig.DEFAULT_AUTO_EXTEND_THRESHOLD;

  /**
   * Whether a node that restarted, lost data or whose clock jumped is held back from the quorum
   * until it has been seen for max-ttl (plus drift). Turn it off only for nodes that persist
   * every write.
   */
  private boolean restartGuard = RedlockConfig.DEFAULT_RESTART_GUARD;

  /** Whether leases carry fencing tokens; needs the restart guard. */
  private boolean fencing;

  private final LockRegistry lockRegistry = new LockRegistry();
  private final ShedLock shedlock = new ShedLock();
  private final Ssl ssl = new Ssl();
  private final Tls tls = new Tls();

  /**
   * The independent Redis masters, as URIs; the {@code Redlock} bean exists only when set.
   * They are returned as they were set, passwords included: the actuator's endpoints mask
   * those (see {@code RedlockSanitizingAutoConfiguration}), so do not log this list.
   *
   * @return a new list of the URIs as set, or {@code null} if the nodes were set to null
   */
  public List<String> getNodes() {
    return nodes == null ? null : new ArrayList<>(nodes);
  }

  /** Sets {@code redlock.nodes}. */
  public void setNodes(List<String> nodes) {
    this.nodes = nodes;
  }

  /** ACL user name for nodes whose URI names none. */
  public String getUsername() {
    return username;
  }

  /** Sets {@code redlock.username}. */
  public void setUsername(String username) {
    this.username = username;
  }

  /**
   * Sets {@code redlock.password}, the password for nodes whose URI holds none. It cannot be
   * read back from this object: only {@link #toConfig} passes it on.
   */
  public void setPassword(String password) {
    this.password = password;
  }

  /** Whether {@code redlock.password} is set; the password itself is never shown. */
  public boolean isPasswordSet() {
    return password != null;
  }

  /** Lease time to live for the methods that take none. */
  public Duration getTtl() {
    return ttl;
  }

  /** Sets {@code redlock.ttl}. */
  public void setTtl(Duration ttl) {
    this.ttl = ttl;
  }

  /** The longest ttl a lease may ask for. */
  public Duration getMaxTtl() {
    return maxTtl;
  }

  /** Sets {@code redlock.max-ttl}. */
  public void setMaxTtl(Duration maxTtl) {
    this.maxTtl = maxTtl;
  }

  /** How long one node may take to answer one command. */
  public Duration getNodeTimeout() {
    return nodeTimeout;
  }

  /** Sets {@code redlock.node-timeout}. */
  public void setNodeTimeout(Duration nodeTimeout) {
    this.nodeTimeout = nodeTimeout;
  }

  /** How long connecting to one node may take. */
  public Duration getConnectTimeout() {
    return connectTimeout;
  }

  /** Sets {@code redlock.connect-timeout}. */
  public void setConnectTimeout(Duration connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  /** The share of the ttl taken off a lease's validity for clock drift. */
  public double getDriftFactor() {
    return driftFactor;
  }

  /** Sets {@code redlock.drift-factor}. */
  public void setDriftFactor(double driftFactor) {
    this.driftFactor = driftFactor;
  }

  /** How many more attempts a blocking acquire makes after the first. */
  public int getRetryCount() {
    return retryCount;
  }

  /** Sets {@code redlock.retry-count}. */
  public void setRetryCount(int retryCount) {
    this.retryCount = retryCount;
  }

  /** The pause between two attempts. */
  public Duration getRetryDelay() {
    return retryDelay;
  }

  /** Sets {@code redlock.retry-delay}. */
  public void setRetryDelay(Duration retryDelay) {
    this.retryDelay = retryDelay;
  }

  /** The random time added to each pause. */
  public Duration getRetryJitter() {
    return retryJitter;
  }

  /** Sets {@code redlock.retry-jitter}. */
  public void setRetryJitter(Duration retryJitter) {
    this.retryJitter = retryJitter;
  }

  /** The longest a blocking acquire waits in all. */
  public Duration getMaxWait() {
    return maxWait;
  }

  /** Sets {@code redlock.max-wait}. */
  public void setMaxWait(Duration maxWait) {
    this.maxWait = maxWait;
  }

  /** Put before every resource name to make its key. */
  public String getKeyPrefix() {
    return keyPrefix;
  }

  /** Sets {@code redlock.key-prefix}. */
  public void setKeyPrefix(String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  /** The share of the ttl after which an auto-extended lease is extended. */
  public double getAutoExtendThreshold() {
    return autoExtendThreshold;
  }

  /** Sets {@code redlock.auto-extend-threshold}. */
  public void setAutoExtendThreshold(double autoExtendThreshold) {
    this.autoExtendThreshold = autoExtendThreshold;
  }

  /** Whether a node that restarted is held back from the quorum for a max-ttl. */
  public boolean isRestartGuard() {
    return restartGuard;
  }

  /** Sets {@code redlock.restart-guard}. */
  public void setRestartGuard(boolean restartGuard) {
    this.restartGuard = restartGuard;
  }

  /** Whether leases carry fencing tokens. */
  public boolean isFencing() {
    return fencing;
  }

  /** Sets {@code redlock.fencing}. */
  public void setFencing(boolean fencing) {
    this.fencing = fencing;
  }

  /** The {@code redlock.lock-registry.*} properties. */
  public LockRegistry getLockRegistry() {
    return lockRegistry;
  }

  /** The {@code redlock.shedlock.*} properties. */
  public ShedLock getShedlock() {
    return shedlock;
  }

  /** The {@code redlock.ssl.*} properties. */
  public Ssl getSsl() {
    return ssl;
  }

  /** The {@code redlock.tls.*} properties. */
  public Tls getTls() {
    return tls;
  }

  /**
   * The configuration these properties describe, checked by {@link RedlockConfig.Builder#build}.
   *
   * @throws IllegalStateException naming the {@code redlock.*} property that is refused, and
   *     what is accepted
   */
  public RedlockConfig toConfig() {
    try {
      return toBuilder().build();
    } catch (RedlockConfigException e) {
      throw new IllegalStateException(
          "Invalid redlock.* properties (the setting names are RedlockConfig's: maxTtl is"
              + " redlock.max-ttl, nodes[1] is redlock.nodes[1]): "
              + e.getMessage(),
          e);
    }
  }

  RedlockConfig.Builder toBuilder() {
    RedlockConfig.Builder b =
        RedlockConfig.builder()
            .nodes(required("nodes", nodes))
            .ttl(required("ttl", ttl))
            .maxTtl(required("max-ttl", maxTtl))
            .nodeTimeout(required("node-timeout", nodeTimeout))
            .connectTimeout(required("connect-timeout", connectTimeout))
            .driftFactor(driftFactor)
            .retryCount(retryCount)
            .retryDelay(required("retry-delay", retryDelay))
            .retryJitter(required("retry-jitter", retryJitter))
            .maxWait(required("max-wait", maxWait))
            .keyPrefix(required("key-prefix", keyPrefix))
            .autoExtendThreshold(autoExtendThreshold)
            .restartGuard(restartGuard)
            .fencing(fencing);
    if (username != null) {
      b.username(username);
    }
    if (password != null) {
      b.password(password);
    }
    if (tls.customized()) {
      if (ssl.getBundle() != null && tls.filesSet()) {
        throw new IllegalStateException(
            "redlock.ssl.bundle and redlock.tls.trusted-certificates or"
                + " redlock.tls.client-certificate are both set; give the nodes' trust and"
                + " client certificate one way");
      }
      b.tls(tls.toSettings(TlsSettings.builder()));
    }
    return b;
  }

  /**
   * {@code uri} with the password of its user info replaced by {@code ****}: {@code
   * redis://user:pw@host} and {@code redis://pw@host} (Lettuce reads a lone user info as the
   * password) become {@code redis://user:****@host} and {@code redis://****@host}. Text with an
   * {@code @} that is not a URI is masked whole.
   */
  static String masked(String uri) {
    int at = uri.lastIndexOf('@');
    if (at < 0) {
      return uri;
    }
    int schemeEnd = uri.indexOf("://");
    if (schemeEnd < 0 || at < schemeEnd) {
      return "****";
    }
    String userInfo = uri.substring(schemeEnd + 3, at);
    int colon = userInfo.indexOf(':');
    String user = colon < 0 ? "" : userInfo.substring(0, colon + 1);
    return uri.substring(0, schemeEnd + 3) + user + "****" + uri.substring(at);
  }

  private static <T> T required(String property, T value) {
    if (value == null) {
      throw new IllegalStateException("redlock." + property + " is empty; give it a value");
    }
    return value;
  }

  /**
   * {@code base}, or {@code base:<applicationName>} when the application has a name: the
   * default namespace of the ShedLock provider and key of the lock registry, so that two
   * applications on one cluster do not share lock names unless they are told to.
   */
  static String namespaced(String base, String applicationName) {
    return applicationName == null || applicationName.isBlank()
        ? base
        : base + ":" + applicationName.strip();
  }

  /**
   * The {@code redlock.lock-registry.*} properties, read when Spring Integration is present.
   *
   * @since 0.1.0
   */
  public static class LockRegistry {
    /** The base of the default {@code redlock.lock-registry.key}: {@value}. */
    public static final String DEFAULT_KEY_BASE = "redlock-registry";

    /**
     * The prefix of every resource name of the Spring Integration lock registry's locks. Unset
     * by default: redlock-registry:<spring.application.name>, or redlock-registry when the
     * application has no name.
     */
    private String key;

    /**
     * The prefix of every resource name of the registry's locks; not empty. Unset by default:
     * the registry then uses {@code redlock-registry:<spring.application.name>}, or {@code
     * redlock-registry} when the application has no name.
     */
    public String getKey() {
      return key;
    }

    /** Sets {@code redlock.lock-registry.key}. */
    public void setKey(String key) {
      this.key = key;
    }

    /** The key set, or the default for an application of that name (which may be null). */
    String keyFor(String applicationName) {
      return key != null ? key : namespaced(DEFAULT_KEY_BASE, applicationName);
    }
  }

  /**
   * The {@code redlock.shedlock.*} properties, read when ShedLock is present.
   *
   * @since 0.1.0
   */
  public static class ShedLock {
    /** The base of the default {@code redlock.shedlock.namespace}: {@value}. */
    public static final String DEFAULT_NAMESPACE_BASE = "shedlock";

    /**
     * The namespace of the ShedLock provider's lock names (a lock is the resource
     * <namespace>:<name>). Unset by default: shedlock:<spring.application.name>, or shedlock
     * when the application has no name. Set the same value on every application whose tasks
     * must exclude each other.
     */
    private String namespace;

    /**
     * The namespace of the ShedLock provider's lock names (a lock {@code name} is the
     * resource {@code <namespace>:<name>}), as ShedLock's Redis provider has an {@code
     * environment}. Unset by default: the provider then uses {@code
     * shedlock:<spring.application.name>}, or {@code shedlock} when the application has no
     * name. Set the same value on every application whose tasks must exclude each other.
     */
    public String getNamespace() {
      return namespace;
    }

    /** Sets {@code redlock.shedlock.namespace}. */
    public void setNamespace(String namespace) {
      this.namespace = namespace;
    }

    /** The namespace set, or the default for an application of that name (may be null). */
    String namespaceFor(String applicationName) {
      return namespace != null ? namespace : namespaced(DEFAULT_NAMESPACE_BASE, applicationName);
    }
  }

  /**
   * The {@code redlock.ssl.*} properties: the nodes' TLS from one of Spring Boot's SSL bundles
   * ({@code spring.ssl.bundle.*}).
   *
   * @since 0.1.0
   */
  public static class Ssl {
    /**
     * The name of the Spring Boot SSL bundle (spring.ssl.bundle.*) whose trust material judges
     * the rediss:// nodes' certificates and whose key, if it has one, is the client
     * certificate; its protocols and ciphers apply. For the nodes only: nothing else in the JVM
     * trusts them. Not with redlock.tls.trusted-certificates or redlock.tls.client-certificate.
     */
    private String bundle;

    /** The SSL bundle's name, or {@code null}. */
    public String getBundle() {
      return bundle;
    }

    /** Sets {@code redlock.ssl.bundle}. */
    public void setBundle(String bundle) {
      this.bundle = bundle;
    }
  }

  /**
   * The {@code redlock.tls.*} properties: {@link TlsSettings} from PEM files.
   *
   * @since 0.1.0
   */
  public static class Tls {
    /**
     * PEM file of the certificates that sign the rediss:// nodes' certificates (a private CA,
     * or the nodes' own): trusted for the nodes only, without the JVM-wide trust store.
     */
    private Path trustedCertificates;

    /**
     * PEM file of the client certificate chain presented to nodes that require one (Redis's
     * tls-auth-clients yes, its default); with redlock.tls.client-private-key.
     */
    private Path clientCertificate;

    /** PEM file (PKCS#8, unencrypted) of the client certificate's private key. */
    private Path clientPrivateKey;

    /**
     * Whether a node URI may switch certificate checks off with verifyPeer=NONE; such a URI is
     * refused otherwise. Anyone on the path to such a node can pose as it.
     */
    private boolean allowUnverified;

    /** The PEM file of the nodes' CA, or {@code null}. */
    public Path getTrustedCertificates() {
      return trustedCertificates;
    }

    /** Sets {@code redlock.tls.trusted-certificates}. */
    public void setTrustedCertificates(Path trustedCertificates) {
      this.trustedCertificates = trustedCertificates;
    }

    /** The PEM file of the client certificate chain, or {@code null}. */
    public Path getClientCertificate() {
      return clientCertificate;
    }

    /** Sets {@code redlock.tls.client-certificate}. */
    public void setClientCertificate(Path clientCertificate) {
      this.clientCertificate = clientCertificate;
    }

    /** The PEM file of the client certificate's key, or {@code null}. */
    public Path getClientPrivateKey() {
      return clientPrivateKey;
    }

    /** Sets {@code redlock.tls.client-private-key}. */
    public void setClientPrivateKey(Path clientPrivateKey) {
      this.clientPrivateKey = clientPrivateKey;
    }

    /** Whether a node URI may switch certificate checks off. */
    public boolean isAllowUnverified() {
      return allowUnverified;
    }

    /** Sets {@code redlock.tls.allow-unverified}. */
    public void setAllowUnverified(boolean allowUnverified) {
      this.allowUnverified = allowUnverified;
    }

    boolean filesSet() {
      return trustedCertificates != null || clientCertificate != null || clientPrivateKey != null;
    }

    boolean customized() {
      return filesSet() || allowUnverified;
    }

    /** {@code builder} with these settings. */
    TlsSettings toSettings(TlsSettings.Builder builder) {
      if ((clientCertificate == null) != (clientPrivateKey == null)) {
        throw new IllegalStateException(
            "redlock.tls.client-certificate and redlock.tls.client-private-key go together;"
                + " set both, or neither");
      }
      if (trustedCertificates != null) {
        builder.trustedCertificates(trustedCertificates);
      }
      if (clientCertificate != null) {
        builder.clientCertificate(clientCertificate, clientPrivateKey);
      }
      try {
        return builder.allowUnverified(allowUnverified).build();
      } catch (RedlockConfigException e) {
        throw new IllegalStateException(
            "Invalid redlock.tls.* properties (tls.trustedCertificates is"
                + " redlock.tls.trusted-certificates): "
                + e.getMessage(),
            e);
      }
    }
  }
}
