package io.redlock.torture;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a torture run does: how many nodes, clients and resources, for how long, with which
 * faults, from which seed. Immutable; build with {@link #builder()}, whose defaults are a
 * short safe run with every single-node fault and client pauses.
 */
public final class TortureOptions {
  private final int nodes;
  private final int clients;
  private final int resources;
  private final Duration duration;
  private final Duration ttl;
  private final Duration work;
  private final Duration faultInterval;
  private final Set<Fault> faults;
  private final long seed;
  private final boolean restartGuard;
  private final boolean persistence;
  private final boolean pauseBetweenCheckAndWrite;
  private final boolean fencing;
  private final int processes;
  private final int redlocks;
  private final boolean proxies;
  private final String clientPrefix;
  private final String resourcePrefix;

  private TortureOptions(Builder b) {
    this.clientPrefix = b.clientPrefix;
    this.resourcePrefix = b.resourcePrefix != null ? b.resourcePrefix : "torture:" + b.seed + ":";
    this.redlocks = b.redlocks;
    this.proxies = b.proxies;
    this.nodes = b.nodes;
    this.clients = b.clients;
    this.resources = b.resources;
    this.duration = b.duration;
    this.ttl = b.ttl;
    this.work = b.work;
    this.faultInterval = b.faultInterval;
    this.faults = Set.copyOf(b.faults);
    this.seed = b.seed;
    this.restartGuard = b.restartGuard;
    this.persistence = b.persistence;
    this.pauseBetweenCheckAndWrite = b.pauseBetweenCheckAndWrite;
    this.fencing = b.fencing;
    this.processes = b.processes;
  }

  public static Builder builder() {
    return new Builder();
  }

  public int nodes() {
    return nodes;
  }

  public int clients() {
    return clients;
  }

  public int resources() {
    return resources;
  }

  public Duration duration() {
    return duration;
  }

  public Duration ttl() {
    return ttl;
  }

  /** The longest a piece of work takes; each takes a random time up to this. */
  public Duration work() {
    return work;
  }

  /** Mean time between two faults. */
  public Duration faultInterval() {
    return faultInterval;
  }

  public Set<Fault> faults() {
    return faults;
  }

  public long seed() {
    return seed;
  }

  public boolean restartGuard() {
    return restartGuard;
  }

  /** Whether the nodes persist every write (AOF, fsync always), so a restart keeps keys. */
  public boolean persistence() {
    return persistence;
  }

  /**
   * Whether a paused client pauses between its validity check and its write (unsafe: it then
   * writes after its lease ended) rather than before the check.
   */
  public boolean pauseBetweenCheckAndWrite() {
    return pauseBetweenCheckAndWrite;
  }

  /**
   * Whether the clients take fenced leases and write to a {@linkplain FencedStore fenced
   * store} that refuses stale tokens, instead of only recording their work.
   */
  public boolean fencing() {
    return fencing;
  }

  /**
   * How many client processes (JVMs) the clients are spread over; 0 runs them as threads of
   * the run's own JVM.
   */
  public int processes() {
    return processes;
  }

  /**
   * How many {@code Redlock} instances the clients share, round robin (each with its own
   * connections, timer and restart guard); 0 gives every client its own.
   */
  public int redlocks() {
    return redlocks;
  }

  /**
   * Whether the clients reach the nodes through fault proxies of their own (needed by
   * {@link Fault#PARTITION}, {@link Fault#LATENCY} and {@link Fault#BLACKHOLE}) rather than
   * directly.
   */
  public boolean proxies() {
    return proxies;
  }

  /** How clients are named: this and their number ({@code client-0} by default). */
  public String clientPrefix() {
    return clientPrefix;
  }

  /**
   * How the resources (the Redis keys) are named: this and their number
   * ({@code torture:SEED:0} by default).
   */
  public String resourcePrefix() {
    return resourcePrefix;
  }

  @Override
  public String toString() {
    return "nodes="
        + nodes
        + " clients="
        + clients
        + " resources="
        + resources
        + " duration="
        + duration.toMillis()
        + "ms ttl="
        + ttl.toMillis()
        + "ms work<="
        + work.toMillis()
        + "ms faultInterval="
        + faultInterval.toMillis()
        + "ms faults="
        + faults
        + " seed="
        + seed
        + " restartGuard="
        + restartGuard
        + " persistence="
        + persistence
        + " pauseBetweenCheckAndWrite="
        + pauseBetweenCheckAndWrite
        + (fencing ? " fencing=true" : "")
        + (processes > 0 ? " processes=" + processes : "")
        + (redlocks > 0 ? " redlocks=" + redlocks : "")
        + (proxies ? "" : " proxies=false");
  }

  private static final Set<Fault> NEED_PROXIES =
      EnumSet.of(Fault.PARTITION, Fault.LATENCY, Fault.BLACKHOLE);

  /** Collects options; {@link #build()} checks them. Not thread-safe. */
  public static final class Builder {
    private int nodes = 5;
    private int clients = 4;
    private int resources = 2;
    private Duration duration = Duration.ofSeconds(30);
    private Duration ttl = Duration.ofSeconds(2);
    private Duration work = Duration.ofMillis(50);
    private Duration faultInterval = Duration.ofSeconds(2);
    private Set<Fault> faults =
        EnumSet.of(Fault.KILL, Fault.RESTART_EMPTY, Fault.PAUSE, Fault.CLIENT_PAUSE);
    private long seed = 1;
    private boolean restartGuard = true;
    private boolean persistence;
    private boolean pauseBetweenCheckAndWrite;
    private boolean fencing;
    private int processes;
    private int redlocks;
    private boolean proxies = true;
    private String clientPrefix = "client-";
    private String resourcePrefix;

    private Builder() {}

    public Builder clientPrefix(String clientPrefix) {
      this.clientPrefix = Objects.requireNonNull(clientPrefix, "clientPrefix");
      return this;
    }

    public Builder resourcePrefix(String resourcePrefix) {
      this.resourcePrefix = Objects.requireNonNull(resourcePrefix, "resourcePrefix");
      return this;
    }

    public Builder proxies(boolean proxies) {
      this.proxies = proxies;
      return this;
    }

    public Builder redlocks(int redlocks) {
      this.redlocks = redlocks;
      return this;
    }

    public Builder processes(int processes) {
      this.processes = processes;
      return this;
    }

    public Builder nodes(int nodes) {
      this.nodes = nodes;
      return this;
    }

    public Builder clients(int clients) {
      this.clients = clients;
      return this;
    }

    public Builder resources(int resources) {
      this.resources = resources;
      return this;
    }

    public Builder duration(Duration duration) {
      this.duration = Objects.requireNonNull(duration, "duration");
      return this;
    }

    public Builder ttl(Duration ttl) {
      this.ttl = Objects.requireNonNull(ttl, "ttl");
      return this;
    }

    public Builder work(Duration work) {
      this.work = Objects.requireNonNull(work, "work");
      return this;
    }

    public Builder faultInterval(Duration faultInterval) {
      this.faultInterval = Objects.requireNonNull(faultInterval, "faultInterval");
      return this;
    }

    public Builder faults(Set<Fault> faults) {
      this.faults = EnumSet.noneOf(Fault.class);
      this.faults.addAll(Objects.requireNonNull(faults, "faults"));
      return this;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    public Builder restartGuard(boolean restartGuard) {
      this.restartGuard = restartGuard;
      return this;
    }

    public Builder persistence(boolean persistence) {
      this.persistence = persistence;
      return this;
    }

    public Builder pauseBetweenCheckAndWrite(boolean pauseBetweenCheckAndWrite) {
      this.pauseBetweenCheckAndWrite = pauseBetweenCheckAndWrite;
      return this;
    }

    /** Fenced leases and a fenced store; see {@link TortureOptions#fencing()}. */
    public Builder fencing(boolean fencing) {
      this.fencing = fencing;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the first option whose value is not accepted
     */
    public TortureOptions build() {
      require(nodes >= 1 && nodes <= 15, "nodes", nodes, "1 to 15");
      require(clients >= 1 && clients <= 64, "clients", clients, "1 to 64");
      require(resources >= 1 && resources <= 64, "resources", resources, "1 to 64");
      require(!duration.isNegative() && !duration.isZero(), "duration", duration, "more than 0");
      require(ttl.toMillis() >= 200, "ttl", ttl, "at least 200 ms");
      require(
          !work.isNegative() && work.compareTo(ttl.dividedBy(2)) <= 0,
          "work",
          work,
          "from 0 to half the ttl");
      require(faultInterval.toMillis() >= 100, "faultInterval", faultInterval, "at least 100 ms");
      require(
          processes >= 0 && processes <= clients,
          "processes",
          processes,
          "from 0 (clients are threads) to the number of clients");
      require(
          !fencing || processes == 0,
          "processes",
          processes,
          "0 with fencing (the fenced store lives in the runner's process)");
      require(
          redlocks >= 0
              && redlocks <= clients
              && (redlocks == 0 || processes == 0 && !faults.contains(Fault.PARTITION)),
          "redlocks",
          redlocks,
          "from 0 (one each) to the number of clients, and 0 with processes or PARTITION"
              + " (a partition cuts one client off)");
      require(
          proxies || faults.stream().noneMatch(NEED_PROXIES::contains),
          "proxies",
          proxies,
          "true with the faults " + NEED_PROXIES);
      return new TortureOptions(this);
    }

    private static void require(boolean ok, String option, Object value, String accepted) {
      if (!ok) {
        throw new IllegalArgumentException(
            option + " " + value + " is not accepted: it must be " + accepted);
      }
    }
  }
}
