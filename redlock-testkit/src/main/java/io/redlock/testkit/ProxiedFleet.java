package io.redlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link RedisServers} fleet seen through {@link FaultProxy fault proxies}, one per client and
 * node, so that a network partition can cut one client off from chosen nodes while other clients
 * still reach them, and node-wide faults (latency, black hole) hit every client of a node.
 *
 * <p>A client is just a name: {@link #urisFor} creates its proxies on first use (named
 * {@code <client>->node<i>}), and it connects through the URIs it gets. Node-wide faults in force
 * when a client's proxies are created are applied to them too. All events go to the one
 * {@link FaultLog} given to {@link #of}.
 *
 * <pre>{@code
 * try (RedisServers redis = RedisServers.start(3);
 *      ProxiedFleet net = ProxiedFleet.of(redis, new FaultLog())) {
 *     List<String> a = net.urisFor("A");
 *     List<String> b = net.urisFor("B");
 *     net.partition("A", 0, 1);  // A loses nodes 0 and 1; B still reaches all three
 *     net.heal("A");
 * }
 * }</pre>
 *
 * <p>{@link #close()} closes every proxy, not the servers, which the caller still owns.
 *
 * <p>Thread-safe: every method synchronizes on the fleet.
 *
 * @since 0.1.0
 */
public final class ProxiedFleet implements AutoCloseable {

  private final RedisServers servers;
  private final FaultLog log;

  // Guarded by this.
  private final Map<String, List<FaultProxy>> proxiesByClient = new LinkedHashMap<>();
  private final Duration[] nodeLatencyBase;
  private final Duration[] nodeLatencyJitter;
  private final boolean[] nodeBlackholed;
  private boolean closed;

  private ProxiedFleet(RedisServers servers, FaultLog log) {
    this.servers = servers;
    this.log = log;
    this.nodeLatencyBase = new Duration[servers.size()];
    this.nodeLatencyJitter = new Duration[servers.size()];
    this.nodeBlackholed = new boolean[servers.size()];
    Arrays.fill(nodeLatencyBase, Duration.ZERO);
    Arrays.fill(nodeLatencyJitter, Duration.ZERO);
  }

  /**
   * Puts a fleet behind fault proxies; none is started until a client asks for its URIs.
   *
   * @param servers the running fleet; it is not closed by {@link #close()}
   * @param log where every proxy records its fault events
   * @return the proxied fleet, to be closed by the caller
   */
  public static ProxiedFleet of(RedisServers servers, FaultLog log) {
    Objects.requireNonNull(servers, "servers");
    Objects.requireNonNull(log, "log");
    return new ProxiedFleet(servers, log);
  }

  /**
   * Returns the URIs through which {@code client} reaches each node, starting the client's
   * proxies on the first call; later calls return the same URIs.
   *
   * @param client any name, e.g. {@code "A"}
   * @return an immutable list, in node order, of URIs such as {@code redis://127.0.0.1:40123}
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized List<String> urisFor(String client) {
    return proxiesOf(client).stream().map(proxy -> servers.withCredentials(proxy.uri())).toList();
  }

  /**
   * Returns the proxy through which {@code client} reaches {@code node}, for faults this class
   * has no shortcut for; starts the client's proxies if need be.
   *
   * @param client the client name
   * @param node the node index, from 0
   * @return the proxy, owned by this fleet
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized FaultProxy proxy(String client, int node) {
    return proxiesOf(client).get(Objects.checkIndex(node, servers.size()));
  }

  /**
   * Returns the names of the clients that have proxies.
   *
   * @return an immutable set, in order of first use
   */
  public synchronized Set<String> clients() {
    return Collections.unmodifiableSet(new LinkedHashSet<>(proxiesByClient.keySet()));
  }

  /**
   * Returns the log every proxy of this fleet records in.
   *
   * @return the log given to {@link #of}
   */
  public FaultLog faultLog() {
    return log;
  }

  /**
   * Cuts {@code client} off from the given nodes: its connections to them are closed and its
   * reconnects refused ({@link FaultProxy#drop()} on its proxies of those nodes), while other
   * clients keep reaching them. Adds to any partition already in force for the client.
   *
   * @param client the client name; its proxies are started if need be
   * @param nodes node indices, from 0
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void partition(String client, int... nodes) {
    List<FaultProxy> proxies = proxiesOf(client);
    for (int node : nodes) {
      Objects.checkIndex(node, servers.size());
    }
    for (int node : nodes) {
      proxies.get(node).drop(" (partition: client " + client + " cut off from node " + node + ")");
    }
  }

  /**
   * Ends every partition of {@code client}; node-wide faults stay. Does nothing for a client
   * without proxies.
   *
   * @param client the client name
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void heal(String client) {
    requireOpen();
    List<FaultProxy> proxies = proxiesByClient.get(client);
    if (proxies == null) {
      return;
    }
    for (FaultProxy proxy : proxies) {
      proxy.endDrop(" (partition of client " + client + " healed)");
    }
  }

  /**
   * Delays traffic to and from {@code node} for every client, current and future, as
   * {@link FaultProxy#latency} does; zero base and jitter clear it.
   *
   * @param node the node index, from 0
   * @param base the mean delay per direction, not negative
   * @param jitter the maximum deviation from {@code base}, not negative
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void latency(int node, Duration base, Duration jitter) {
    requireOpen();
    Objects.checkIndex(node, servers.size());
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(jitter, "jitter");
    if (base.isNegative() || jitter.isNegative()) {
      throw new IllegalArgumentException(
          "latency base and jitter must not be negative, were " + base + " and " + jitter);
    }
    for (List<FaultProxy> proxies : proxiesByClient.values()) {
      proxies.get(node).latency(base, jitter, " (node-wide)");
    }
    nodeLatencyBase[node] = base;
    nodeLatencyJitter[node] = jitter;
  }

  /**
   * Black-holes {@code node} for every client, current and future, as
   * {@link FaultProxy#blackhole()} does: traffic is discarded until healed.
   *
   * @param node the node index, from 0
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void blackhole(int node) {
    requireOpen();
    Objects.checkIndex(node, servers.size());
    nodeBlackholed[node] = true;
    for (List<FaultProxy> proxies : proxiesByClient.values()) {
      proxies.get(node).blackhole(" (node-wide)");
    }
  }

  /**
   * Ends the node-wide faults of {@code node} (latency and black hole) for every client;
   * partitions stay.
   *
   * @param node the node index, from 0
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void healNode(int node) {
    requireOpen();
    Objects.checkIndex(node, servers.size());
    nodeLatencyBase[node] = Duration.ZERO;
    nodeLatencyJitter[node] = Duration.ZERO;
    nodeBlackholed[node] = false;
    for (List<FaultProxy> proxies : proxiesByClient.values()) {
      proxies.get(node).endLatency(" (node-wide, healed)");
      proxies.get(node).endBlackhole(" (node-wide)");
    }
  }

  /**
   * Clears every fault on every proxy: partitions and node-wide faults alike.
   *
   * @throws IllegalStateException if the fleet is closed
   */
  public synchronized void healAll() {
    requireOpen();
    for (int node = 0; node < servers.size(); node++) {
      nodeLatencyBase[node] = Duration.ZERO;
      nodeLatencyJitter[node] = Duration.ZERO;
      nodeBlackholed[node] = false;
    }
    for (List<FaultProxy> proxies : proxiesByClient.values()) {
      proxies.forEach(FaultProxy::heal);
    }
  }

  /**
   * Closes every proxy (waiting for their threads to end), but not the servers. Calling it
   * again does nothing.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException failure = null;
    for (List<FaultProxy> proxies : proxiesByClient.values()) {
      for (FaultProxy proxy : proxies) {
        try {
          proxy.close();
        } catch (RuntimeException e) {
          if (failure == null) {
            failure = e;
          } else {
            failure.addSuppressed(e);
          }
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** The client's proxies, started with the node-wide faults in force; caller holds the lock. */
  private List<FaultProxy> proxiesOf(String client) {
    Objects.requireNonNull(client, "client");
    requireOpen();
    List<FaultProxy> existing = proxiesByClient.get(client);
    if (existing != null) {
      return existing;
    }
    List<FaultProxy> started = new ArrayList<>(servers.size());
    try {
      for (int node = 0; node < servers.size(); node++) {
        FaultProxy proxy =
            FaultProxy.start(client + "->node" + node, servers.host(), servers.port(node), log);
        started.add(proxy);
        if (!nodeLatencyBase[node].isZero() || !nodeLatencyJitter[node].isZero()) {
          proxy.latency(nodeLatencyBase[node], nodeLatencyJitter[node], " (node-wide)");
        }
        if (nodeBlackholed[node]) {
          proxy.blackhole(" (node-wide)");
        }
      }
    } catch (RuntimeException | Error e) {
      started.forEach(FaultProxy::close);
      throw e;
    }
    List<FaultProxy> proxies = List.copyOf(started);
    proxiesByClient.put(client, proxies);
    return proxies;
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("ProxiedFleet is closed");
    }
  }
}
