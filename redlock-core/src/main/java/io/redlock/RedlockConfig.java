package io.redlock;

import io.redlock.internal.Durations;
import io.redlock.internal.NodeUris;
import io.redlock.internal.Quorum;
import io.redlock.internal.TtlRule;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The immutable configuration of a {@link Redlock}: which nodes, and how long to wait for what.
 *
 * <p>Build one with {@link #builder()}; {@link Builder#build()} checks every value at once and
 * refuses a bad one with a {@link RedlockConfigException} that names the setting, the value and
 * the accepted range. Defaults are the public {@code DEFAULT_*} constants.
 *
 * <p>{@link #toString()} never shows a password: credentials in node URIs and the
 * {@link Builder#password(String) password} setting are masked.
 *
 * <p>Instances are immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class RedlockConfig {
  /** Default lease time to live, used by the methods that take no ttl: 30 s. */
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

  /**
   * Default longest ttl any lease of the cluster may use: 1 minute. The restart guard holds a
   * restarted node back for this long (plus its drift margin), so it is kept short: work that
   * takes longer should hold a short lease and extend it ({@link Lease#autoExtend()}), which
   * keeps the lease safe after a crash of its holder too.
   */
  public static final Duration DEFAULT_MAX_TTL = Duration.ofMinutes(1);

  /** Default time one node has to answer one request: 50 ms. */
  public static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(50);

  /** Default time {@link Redlock#create} waits for the first connection to each node: 2 s. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);

  /** Default share of the ttl set aside for clock drift between client and nodes: 0.01. */
  public static final double DEFAULT_DRIFT_FACTOR = 0.01;

  /** Fixed part of the drift margin, added to {@code ttl × driftFactor}: 2 ms. */
  public static final Duration DRIFT_FLOOR = Duration.ofMillis(2);

  /** Default number of retries after a failed first attempt: 10. */
  public static final int DEFAULT_RETRY_COUNT = 10;

  /** Default mean delay between two attempts: 200 ms. */
  public static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(200);

  /** Default largest random deviation from the retry delay, either way: 100 ms. */
  public static final Duration DEFAULT_RETRY_JITTER = Duration.ofMillis(100);

  /** Default longest total time an acquisition keeps retrying: 10 s. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(10);

  /** Default key prefix: none, so the Redis key is the resource name exactly. */
  public static final String DEFAULT_KEY_PREFIX = "";

  /** Default share of the ttl still valid when the watchdog extends a lease: 0.5. */
  public static final double DEFAULT_AUTO_EXTEND_THRESHOLD = 0.5;

  /** Default: the restart guard holds back nodes that restarted or whose clock jumped. */
  public static final boolean DEFAULT_RESTART_GUARD = true;

  /** Longest accepted value of any time setting, and of any ttl: 365 days. */
  public static final Duration MAX_DURATION = Duration.ofDays(365);

  /** Longest accepted resource name, prefix included, in UTF-8 bytes: 1024. */
  public static final int MAX_KEY_BYTES = 1024;

  private final List<String> nodes;
  private final String username;
  private final String password;
  private final Duration ttl;
  private final Duration maxTtl;
  private final Duration nodeTimeout;
  private final Duration connectTimeout;
  private final double driftFactor;
  private final int retryCount;
  private final Duration retryDelay;
  private final Duration retryJitter;
  private final Duration maxWait;
  private final String keyPrefix;
  private final double autoExtendThreshold;
  private final boolean restartGuard;
  private final boolean fencing;
  private final TlsSettings tls;
  private final List<RedlockListener> listeners;

  private RedlockConfig(Builder b) {
    this.nodes = List.copyOf(b.nodes);
    this.username = b.username;
    this.password = b.password;
    this.ttl = b.ttl;
    this.maxTtl = b.maxTtl;
    this.nodeTimeout = b.nodeTimeout;
    this.connectTimeout = b.connectTimeout;
    this.driftFactor = b.driftFactor;
    this.retryCount = b.retryCount;
    this.retryDelay = b.retryDelay;
    this.retryJitter = b.retryJitter;
    this.maxWait = b.maxWait;
    this.keyPrefix = b.keyPrefix;
    this.autoExtendThreshold = b.autoExtendThreshold;
    this.restartGuard = b.restartGuard;
    this.fencing = b.fencing;
    this.tls = b.tls;
    this.listeners = List.copyOf(b.listeners);
  }

  /** A builder with every setting at its default and no nodes. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this configuration's values, to derive a changed copy. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.nodes.addAll(nodes);
    b.username = username;
    b.password = password;
    b.ttl = ttl;
    b.maxTtl = maxTtl;
    b.nodeTimeout = nodeTimeout;
    b.connectTimeout = connectTimeout;
    b.driftFactor = driftFactor;
    b.retryCount = retryCount;
    b.retryDelay = retryDelay;
    b.retryJitter = retryJitter;
    b.maxWait = maxWait;
    b.keyPrefix = keyPrefix;
    b.autoExtendThreshold = autoExtendThreshold;
    b.restartGuard = restartGuard;
    b.fencing = fencing;
    b.tls = tls;
    b.listeners.addAll(listeners);
    return b;
  }

  /** The node URIs, as given (credentials included: do not log them; {@code toString()} masks). */
  public List<String> nodes() {
    return nodes;
  }

  /** The ACL user name for nodes whose URI names none, or {@code null}. */
  public String username() {
    return username;
  }

  /** The password for nodes whose URI holds none, or {@code null}. Never log it. */
  public String password() {
    return password;
  }

  /** The lease time to live used by the methods that take none. */
  public Duration ttl() {
    return ttl;
  }

  /**
   * The longest ttl a lease may have, for an acquisition or an extension: a longer one is
   * refused with a {@link RedlockConfigException}. It bounds the restart guard's window:
   * a node counts once its process has been up for {@code maxTtl} plus its drift margin, by
   * when every lease it may have forgotten has ended. Every client of one cluster must use
   * the same value: a client whose ttl is longer than another client's maxTtl could hold
   * a lease that a node restarted within that client's window has forgotten. Clients raise
   * their value in a register on every node (see {@link FreshMarker#maxTtlKey}) with every
   * probe, once a second, and wait out the longest live value they read, which catches a
   * mismatch once they have met there; it is no substitute for the rule.
   *
   * <p>Each client's value lapses on its own, so a client that used a long {@code maxTtl}
   * widens other clients' windows only while it runs and for a while after: it raises its
   * value for its {@code maxTtl} plus drift plus 5 s (stretched by {@code driftFactor}), and
   * counts a node's votes only while its value there is known to outlast a lease granted now.
   * When its probes to a node fail while lock commands succeed, the node stops counting for
   * it 5 s after the last confirmed raise. So its value lapses only after its last lease
   * ended, whether it closed, crashed or was cut off (docs/safety.md gives the argument).
   */
  public Duration maxTtl() {
    return maxTtl;
  }

  /** How long one node has to answer one request before its vote counts as a timeout. */
  public Duration nodeTimeout() {
    return nodeTimeout;
  }

  /** How long {@link Redlock#create} waits for the first connection to each node. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** Share of the ttl set aside for clock drift; the margin is {@code ttl × driftFactor + 2 ms}. */
  public double driftFactor() {
    return driftFactor;
  }

  /** Retries after a failed first attempt; the acquisition also stops at {@link #maxWait()}. */
  public int retryCount() {
    return retryCount;
  }

  /** Mean delay between two attempts. */
  public Duration retryDelay() {
    return retryDelay;
  }

  /** Largest random deviation from {@link #retryDelay()}, either way. */
  public Duration retryJitter() {
    return retryJitter;
  }

  /**
   * Longest total time an acquisition keeps retrying; it also stops at {@link #retryCount()}.
   * Also how long {@link RedlockLock#lock()} waits out an outage (no majority answering, in a
   * row) before it throws.
   */
  public Duration maxWait() {
    return maxWait;
  }

  /** Prepended to every resource name to form its Redis key. */
  public String keyPrefix() {
    return keyPrefix;
  }

  /** Share of the ttl still valid when the watchdog extends an auto-extended lease. */
  public double autoExtendThreshold() {
    return autoExtendThreshold;
  }

  /**
   * Whether the restart guard is on: a node whose Redis process started (or whose clock
   * jumped forward or ran fast) less than {@link #maxTtl()} plus drift ago does not count
   * toward the quorum, since it may have forgotten locks; a node declared fresh by
   * {@link Redlock#init} in its current process, or one that persists every write and loaded
   * its data at start, counts at once. Tests of the guard itself are the only good reason to
   * turn it off.
   */
  public boolean restartGuard() {
    return restartGuard;
  }

  /**
   * Whether every lease of this instance is fenced: it carries a {@link Lease#fencingToken()
   * fencing token}, larger than the token of every earlier holder of any of its resources.
   * A fenced acquisition costs one more round trip (it writes the token to a majority before
   * it returns) and needs a majority of nodes whose state is known complete: declared fresh by
   * {@link Redlock#init} in their current process, or persisting every write, and not
   * evicting keys without a ttl. Every client that locks a fenced resource must fence: a
   * client that does not raise the counters (another Redlock library, or this one without
   * fencing) takes the lock without moving the token forward. See {@code docs/fencing.md}.
   *
   * @since 0.1.0
   */
  public boolean fencing() {
    return fencing;
  }

  /**
   * How {@code rediss://} nodes are connected: trusted certificates for the nodes only, a
   * client certificate, and whether a URI may switch checks off ({@link TlsSettings});
   * default {@link TlsSettings#DEFAULT}.
   *
   * @since 0.1.0
   */
  public TlsSettings tls() {
    return tls;
  }

  /**
   * The listeners that hear what the {@link Redlock} does, in the order they were added.
   *
   * @since 0.1.0
   */
  public List<RedlockListener> listeners() {
    return listeners;
  }

  /**
   * The number of nodes that must grant a lock: a majority, {@code nodes / 2 + 1}.
   *
   * @since 0.1.0
   */
  public int quorum() {
    return Quorum.of(nodes.size());
  }

  /**
   * How long the restart guard holds back a node whose process started (or whose clock leapt)
   * recently, by this configuration: {@link #maxTtl()} plus its drift margin. The guard of a
   * running instance may wait longer, for a larger {@code maxTtl} of another client of the
   * cluster (see {@link #maxTtl()}).
   *
   * @since 0.1.0
   */
  public Duration restartGuardWindow() {
    return maxTtl.plus(driftFor(maxTtl));
  }

  /** The drift margin for a lease of the given ttl: {@code ttl × driftFactor + 2 ms}. */
  public Duration driftFor(Duration ttl) {
    return Duration.ofNanos(io.redlock.internal.Validity.driftNanos(ttl.toMillis(), driftFactor));
  }

  @Override
  public String toString() {
    List<String> shown = new ArrayList<>(nodes.size());
    for (String node : nodes) {
      shown.add(NodeUris.redact(node));
    }
    return "RedlockConfig{nodes="
        + shown
        + (username == null ? "" : ", username=" + username)
        + (password == null ? "" : ", password=****")
        + ", ttl="
        + Durations.format(ttl)
        + ", maxTtl="
        + Durations.format(maxTtl)
        + ", nodeTimeout="
        + Durations.format(nodeTimeout)
        + ", connectTimeout="
        + Durations.format(connectTimeout)
        + ", driftFactor="
        + driftFactor
        + ", retryCount="
        + retryCount
        + ", retryDelay="
        + Durations.format(retryDelay)
        + ", retryJitter="
        + Durations.format(retryJitter)
        + ", maxWait="
        + Durations.format(maxWait)
        + ", keyPrefix='"
        + keyPrefix
        + "'"
        + ", autoExtendThreshold="
        + autoExtendThreshold
        + ", restartGuard="
        + restartGuard
        + (fencing ? ", fencing=true" : "")
        + (tls.equals(TlsSettings.DEFAULT) ? "" : ", tls=" + tls)
        + (listeners.isEmpty() ? "" : ", listeners=" + listeners.size())
        + "}";
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof RedlockConfig)) {
      return false;
    }
    RedlockConfig c = (RedlockConfig) o;
    return nodes.equals(c.nodes)
        && Objects.equals(username, c.username)
        && Objects.equals(password, c.password)
        && ttl.equals(c.ttl)
        && maxTtl.equals(c.maxTtl)
        && nodeTimeout.equals(c.nodeTimeout)
        && connectTimeout.equals(c.connectTimeout)
        && Double.compare(driftFactor, c.driftFactor) == 0
        && retryCount == c.retryCount
        && retryDelay.equals(c.retryDelay)
        && retryJitter.equals(c.retryJitter)
        && maxWait.equals(c.maxWait)
        && keyPrefix.equals(c.keyPrefix)
        && Double.compare(autoExtendThreshold, c.autoExtendThreshold) == 0
        && restartGuard == c.restartGuard
        && fencing == c.fencing
        && tls.equals(c.tls)
        && listeners.equals(c.listeners);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        nodes,
        username,
        password,
        ttl,
        maxTtl,
        nodeTimeout,
        connectTimeout,
        driftFactor,
        retryCount,
        retryDelay,
        retryJitter,
        maxWait,
        keyPrefix,
        tls,
        autoExtendThreshold,
        restartGuard,
        fencing,
        listeners);
  }

  /**
   * Collects settings for a {@link RedlockConfig}. Setters reject {@code null} at once; every
   * range is checked by {@link #build()}, which reports the first bad setting.
   *
   * <p>Not thread-safe; build on one thread.
   */
  public static final class Builder {
    private final List<String> nodes = new ArrayList<>();
    private String username;
    private String password;
    private Duration ttl = DEFAULT_TTL;
    private Duration maxTtl = DEFAULT_MAX_TTL;
    private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private double driftFactor = DEFAULT_DRIFT_FACTOR;
    private int retryCount = DEFAULT_RETRY_COUNT;
    private Duration retryDelay = DEFAULT_RETRY_DELAY;
    private Duration retryJitter = DEFAULT_RETRY_JITTER;
    private Duration maxWait = DEFAULT_MAX_WAIT;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private double autoExtendThreshold = DEFAULT_AUTO_EXTEND_THRESHOLD;
    private boolean restartGuard = DEFAULT_RESTART_GUARD;
    private boolean fencing;
    private TlsSettings tls = TlsSettings.DEFAULT;
    private final List<RedlockListener> listeners = new ArrayList<>();

    private Builder() {}

    /**
     * The independent Redis masters, as URIs ({@code redis://[user:password@]host[:port][/db]},
     * or {@code rediss://} for TLS). Replaces any nodes given before.
     */
    public Builder nodes(String... uris) {
      Objects.requireNonNull(uris, "nodes");
      return nodes(java.util.Arrays.asList(uris));
    }

    /** The independent Redis masters, as URIs. Replaces any nodes given before. */
    public Builder nodes(List<String> uris) {
      Objects.requireNonNull(uris, "nodes");
      for (int i = 0; i < uris.size(); i++) {
        Objects.requireNonNull(uris.get(i), "nodes[" + i + "]");
      }
      nodes.clear();
      nodes.addAll(uris);
      return this;
    }

    /** ACL user name for nodes whose URI names none. */
    public Builder username(String username) {
      this.username = Objects.requireNonNull(username, "username");
      return this;
    }

    /** Password for nodes whose URI holds none. It is never logged or shown. */
    public Builder password(String password) {
      this.password = Objects.requireNonNull(password, "password");
      return this;
    }

    /** Lease time to live for the methods that take none; default {@link #DEFAULT_TTL}. */
    public Builder ttl(Duration ttl) {
      this.ttl = Objects.requireNonNull(ttl, "ttl");
      return this;
    }

    /**
     * The longest ttl any lease may use, at least {@code ttl}; default
     * {@link #DEFAULT_MAX_TTL}. See {@link RedlockConfig#maxTtl()}: all clients of a cluster
     * must use the same value.
     */
    public Builder maxTtl(Duration maxTtl) {
      this.maxTtl = Objects.requireNonNull(maxTtl, "maxTtl");
      return this;
    }

    /** Time one node has to answer one request; default {@link #DEFAULT_NODE_TIMEOUT}. */
    public Builder nodeTimeout(Duration nodeTimeout) {
      this.nodeTimeout = Objects.requireNonNull(nodeTimeout, "nodeTimeout");
      return this;
    }

    /** Time to wait for first connections; default {@link #DEFAULT_CONNECT_TIMEOUT}. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
      return this;
    }

    /** Share of the ttl set aside for clock drift, in [0, 0.5); default 0.01. */
    public Builder driftFactor(double driftFactor) {
      this.driftFactor = driftFactor;
      return this;
    }

    /** Retries after a failed first attempt, 0 or more; default {@link #DEFAULT_RETRY_COUNT}. */
    public Builder retryCount(int retryCount) {
      this.retryCount = retryCount;
      return this;
    }

    /** Mean delay between attempts; default {@link #DEFAULT_RETRY_DELAY}. */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
      return this;
    }

    /** Largest random deviation from the retry delay; default {@link #DEFAULT_RETRY_JITTER}. */
    public Builder retryJitter(Duration retryJitter) {
      this.retryJitter = Objects.requireNonNull(retryJitter, "retryJitter");
      return this;
    }

    /** Longest total time an acquisition retries; default {@link #DEFAULT_MAX_WAIT}. */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
      return this;
    }

    /** Prepended to resource names to form Redis keys; default none. */
    public Builder keyPrefix(String keyPrefix) {
      this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
      return this;
    }

    /** Share of the ttl left when the watchdog extends, in (0, 1); default 0.5. */
    public Builder autoExtendThreshold(double autoExtendThreshold) {
      this.autoExtendThreshold = autoExtendThreshold;
      return this;
    }

    /**
     * Whether a node that restarted (or whose clock jumped forward) less than
     * {@code maxTtl} plus drift ago is kept out of the quorum; default on. See {@link RedlockConfig#restartGuard()}.
     */
    public Builder restartGuard(boolean restartGuard) {
      this.restartGuard = restartGuard;
      return this;
    }

    /**
     * Whether every lease carries a fencing token; default off. See
     * {@link RedlockConfig#fencing()}.
     *
     * @since 0.1.0
     */
    public Builder fencing(boolean fencing) {
      this.fencing = fencing;
      return this;
    }

    /**
     * How {@code rediss://} nodes are connected; default {@link TlsSettings#DEFAULT} (the
     * JVM's trust store, no client certificate, {@code verifyPeer=NONE} refused).
     *
     * @since 0.1.0
     */
    public Builder tls(TlsSettings tls) {
      this.tls = Objects.requireNonNull(tls, "tls");
      return this;
    }

    /**
     * Adds a listener that hears acquisitions, votes, extensions, losses, releases and the
     * restart guard's decisions (see {@link RedlockListener} for how it is called). May be
     * called several times: listeners are called in the order they were added. None by
     * default, and then nothing is reported at no cost.
     *
     * @since 0.1.0
     */
    public Builder listener(RedlockListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Checks every setting and returns the configuration.
     *
     * @throws RedlockConfigException naming the first setting whose value is not accepted: any
     *     time over {@link #MAX_DURATION}, no nodes, a node that is not a URI with a host, two nodes that reach the same server,
     *     a ttl under 1 ms or without validity left after the drift margin, a ttl over
     *     {@code maxTtl}, a node timeout not
     *     shorter than the ttl, a drift factor outside [0, 0.5), a negative retry count, delay,
     *     jitter or wait, a jitter larger than the delay, a key prefix over
     *     {@link #MAX_KEY_BYTES}, or an auto-extend threshold outside (0, 1)
     */
    public RedlockConfig build() {
      checkNodes();
      checkAtMost("ttl", ttl);
      checkAtMost("maxTtl", maxTtl);
      checkAtMost("nodeTimeout", nodeTimeout);
      checkAtMost("connectTimeout", connectTimeout);
      checkAtMost("retryDelay", retryDelay);
      checkAtMost("retryJitter", retryJitter);
      checkAtMost("maxWait", maxWait);
      if (nodeTimeout.isNegative() || nodeTimeout.isZero()) {
        throw refuse("nodeTimeout", Durations.format(nodeTimeout), "more than 0");
      }
      if (connectTimeout.isNegative() || connectTimeout.isZero()) {
        throw refuse("connectTimeout", Durations.format(connectTimeout), "more than 0");
      }
      if (!(driftFactor >= 0.0 && driftFactor < 0.5)) {
        throw refuse("driftFactor", String.valueOf(driftFactor), "from 0 (inclusive) to 0.5");
      }
      TtlRule.Problem problem = TtlRule.check(ttl, maxTtl, nodeTimeout, driftFactor);
      if (problem == TtlRule.Problem.NOT_OVER_NODE_TIMEOUT) {
        // the same rule, seen from the setting that is more likely wrong
        throw refuse(
            "nodeTimeout",
            Durations.format(nodeTimeout),
            "shorter than ttl (" + Durations.format(ttl) + "), and should be much shorter");
      }
      if (problem != null) {
        throw TtlRule.refused(ttl, problem, maxTtl, nodeTimeout);
      }
      if (retryCount < 0) {
        throw refuse("retryCount", String.valueOf(retryCount), "0 or more");
      }
      if (retryDelay.isNegative()) {
        throw refuse("retryDelay", Durations.format(retryDelay), "0 or more");
      }
      if (retryJitter.isNegative()) {
        throw refuse("retryJitter", Durations.format(retryJitter), "0 or more");
      }
      if (retryJitter.compareTo(retryDelay) > 0) {
        throw new RedlockConfigException(
            "retryJitter "
                + Durations.format(retryJitter)
                + " is not accepted: it must not exceed retryDelay ("
                + Durations.format(retryDelay)
                + "), so that no delay is negative");
      }
      if (maxWait.isNegative()) {
        throw refuse("maxWait", Durations.format(maxWait), "0 or more");
      }
      if (keyPrefix.getBytes(java.nio.charset.StandardCharsets.UTF_8).length >= MAX_KEY_BYTES) {
        throw refuse(
            "keyPrefix",
            "of " + keyPrefix.length() + " characters",
            "shorter than " + MAX_KEY_BYTES + " bytes in UTF-8");
      }
      if (fencing && !restartGuard) {
        throw new RedlockConfigException(
            "fencing true is not accepted with restartGuard false: fencing tokens need the"
                + " restart guard's probes, which judge each node's counters (see"
                + " docs/fencing.md); turn the guard on, or fencing off");
      }
      if (!(autoExtendThreshold > 0.0 && autoExtendThreshold < 1.0)) {
        throw refuse(
            "autoExtendThreshold",
            String.valueOf(autoExtendThreshold),
            "between 0 and 1, both excluded");
      }
      return new RedlockConfig(this);
    }

    private void checkNodes() {
      if (nodes.isEmpty()) {
        throw new RedlockConfigException(
            "nodes: no node was given; at least one Redis URI such as redis://127.0.0.1:6379 is"
                + " required");
      }
      Map<String, Integer> seen = new HashMap<>();
      for (int i = 0; i < nodes.size(); i++) {
        String node = nodes.get(i);
        URI uri = NodeUris.parseOrNull(node);
        if (uri == null) {
          throw new RedlockConfigException(
              "nodes["
                  + i
                  + "] '"
                  + NodeUris.redact(node)
                  + "' is not accepted: it must be a URI with a host, such as"
                  + " redis://127.0.0.1:6379");
        }
        Integer earlier = seen.putIfAbsent(NodeUris.serverOf(uri), i);
        if (earlier != null) {
          throw new RedlockConfigException(
              "nodes["
                  + i
                  + "] "
                  + NodeUris.displayName(node)
                  + " reaches the same server as nodes["
                  + earlier
                  + "] "
                  + NodeUris.displayName(nodes.get(earlier))
                  + "; every node must be a different, independent Redis master");
        }
      }
    }

    private static void checkAtMost(String setting, Duration value) {
      if (value.compareTo(MAX_DURATION) > 0) {
        throw refuse(
            setting, Durations.format(value), "at most " + MAX_DURATION.toDays() + " days");
      }
    }

    private static RedlockConfigException refuse(String setting, String value, String accepted) {
      return new RedlockConfigException(
          setting + " " + value + " is not accepted: it must be " + accepted);
    }
  }
}
