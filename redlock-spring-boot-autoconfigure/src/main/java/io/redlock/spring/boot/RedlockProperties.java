package io.redlock.spring.boot;

import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
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

  private List<String> nodes = new ArrayList<>();
  private String username;
  private String password;
  private Duration ttl = RedlockConfig.DEFAULT_TTL;
  private Duration maxTtl = RedlockConfig.DEFAULT_MAX_TTL;
  private Duration nodeTimeout = RedlockConfig.DEFAULT_NODE_TIMEOUT;
  private Duration connectTimeout = RedlockConfig.DEFAULT_CONNECT_TIMEOUT;
  private double driftFactor = RedlockConfig.DEFAULT_DRIFT_FACTOR;
  private int retryCount = RedlockConfig.DEFAULT_RETRY_COUNT;
  private Duration retryDelay = RedlockConfig.DEFAULT_RETRY_DELAY;
  private Duration retryJitter = RedlockConfig.DEFAULT_RETRY_JITTER;
  private Duration maxWait = RedlockConfig.DEFAULT_MAX_WAIT;
  private String keyPrefix = RedlockConfig.DEFAULT_KEY_PREFIX;
  private double autoExtendThreshold = RedlockConfig.DEFAULT_AUTO_EXTEND_THRESHOLD;
  private boolean restartGuard = RedlockConfig.DEFAULT_RESTART_GUARD;
  private boolean fencing;
  private final LockRegistry lockRegistry = new LockRegistry();
  private final ShedLock shedlock = new ShedLock();

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
}
