package io.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on a free loopback port in front of one server, which forwards every accepted
 * connection over an upstream connection of its own and injects network faults on demand:
 * {@linkplain #latency latency with jitter}, a {@linkplain #blackhole black hole} and
 * {@linkplain #drop dropped connections}, until {@link #heal()}.
 *
 * <p>Without a fault, bytes are forwarded as soon as they are read, from the reading thread
 * itself, so the proxy adds two loopback hops and nothing else. Bytes are never reordered within
 * a direction, even under jitter: a chunk is released at its own due time or right after the
 * chunk before it, whichever is later. Every fault and heal takes effect before the method
 * returns, is logged at INFO with the proxy name, and is recorded as a {@link FaultEvent} in the
 * {@link FaultLog} given at start.
 *
 * <p>A client connection whose target cannot be reached is accepted and then closed, so a
 * client sees end of stream where a direct connection would have been refused.
 *
 * <pre>{@code
 * FaultLog faults = new FaultLog();
 * try (FaultProxy proxy = FaultProxy.start("node0", "127.0.0.1", redis.port(0), faults)) {
 *     RedisClient client = RedisClient.create(proxy.uri());
 *     proxy.latency(Duration.ofMillis(50), Duration.ofMillis(10));
 *     proxy.blackhole();
 *     proxy.heal();
 * }
 * }</pre>
 *
 * <p>Threads: one accepting thread per proxy and, per client connection, one reading thread per
 * direction, plus one delivering thread per direction started the first time a chunk must wait
 * (latency, or an earlier chunk still waiting). All are daemon threads named
 * {@code fault-proxy-<name>-...}; {@link #close()} returns only once every one has ended.
 *
 * <p>Thread-safe: fault methods may be called from any thread at any time; they are serialised,
 * so the log order is the order in which the faults took effect.
 *
 * @since 0.1.0
 */
public final class FaultProxy implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FaultProxy.class);

  private static final String HOST = ServerOptions.HOST;
  private static final int CHUNK_BYTES = 64 * 1024;

  /** Bytes a direction may hold back for latency before its reader stops reading. */
  private static final long MAX_HELD_BYTES = 16L * 1024 * 1024;

  private static final int BACKLOG = 128;
  private static final int PORT_ATTEMPTS = 20;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

  private final String name;
  private final String targetHost;
  private volatile int targetPort;
  private final FaultLog log;
  private final ServerSocket listener;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();

  /** Started threads; guarded by itself for additions, so none starts once closed is set. */
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

  private final AtomicLong connectionIds = new AtomicLong();

  /** Serialises fault changes, so that the log order is the order of effect. */
  private final Object faultLock = new Object();

  private volatile Latency latency = Latency.NONE;
  private volatile boolean blackholed;
  private volatile boolean dropping;
  private volatile boolean closed;

  private FaultProxy(
      String name, String targetHost, int targetPort, FaultLog log, ServerSocket listener) {
    this.name = name;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.log = log;
    this.listener = listener;
  }

  /**
   * Starts a proxy on a free loopback port that forwards to {@code targetHost:targetPort}, with
   * no fault set. The port is never 6379 nor one held by a node of a {@link RedisServers}
   * fleet. The target need not be up yet: it is connected to once per client connection.
   *
   * @param name names the proxy in logs, events and thread names, e.g. {@code "node0"}
   * @param targetHost the host to forward to, e.g. {@code "127.0.0.1"}
   * @param targetPort the port to forward to
   * @param log where fault events are recorded; may be shared by several proxies
   * @return the running proxy, to be closed by the caller
   * @throws UncheckedIOException if no loopback port can be bound
   */
  public static FaultProxy start(String name, String targetHost, int targetPort, FaultLog log) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(targetHost, "targetHost");
    Objects.requireNonNull(log, "log");
    if (targetPort < 1 || targetPort > 65535) {
      throw new IllegalArgumentException("targetPort must be in 1..65535, was " + targetPort);
    }
    FaultProxy proxy = new FaultProxy(name, targetHost, targetPort, log, bindFreeLoopbackPort());
    proxy.spawn("accept", proxy::acceptConnections);
    LOG.info(
        "Fault proxy {} listening on {}:{}, forwarding to {}:{}",
        name,
        HOST,
        proxy.port(),
        targetHost,
        targetPort);
    return proxy;
  }

  /**
   * Starts a proxy as {@link #start(String, String, int, FaultLog)} does, with a log of its
   * own, available from {@link #faultLog()}.
   *
   * @param name names the proxy in logs, events and thread names
   * @param targetHost the host to forward to
   * @param targetPort the port to forward to
   * @return the running proxy, to be closed by the caller
   */
  public static FaultProxy start(String name, String targetHost, int targetPort) {
    return start(name, targetHost, targetPort, new FaultLog());
  }

  private static ServerSocket bindFreeLoopbackPort() {
    // Rejected sockets stay bound until a good one is found, so the OS cannot hand them out again.
    List<ServerSocket> rejected = new ArrayList<>();
    try {
      for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
        ServerSocket socket = null;
        try {
          socket = new ServerSocket();
          socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0), BACKLOG);
        } catch (IOException e) {
          closeQuietly(socket);
          throw new UncheckedIOException("Could not bind a fault proxy on " + HOST, e);
        }
        if (!RedisNode.isClaimed(socket.getLocalPort())) {
          return socket;
        }
        rejected.add(socket);
      }
      throw new IllegalStateException(
          "No free loopback port outside the redis fleets' ports after "
              + PORT_ATTEMPTS
              + " attempts");
    } finally {
      rejected.forEach(FaultProxy::closeQuietly);
    }
  }

  /**
   * Returns the name given at start.
   *
   * @return the proxy name
   */
  public String name() {
    return name;
  }

  /**
   * Returns the loopback port clients connect to.
   *
   * @return the listening port, fixed for the proxy's life
   */
  public int port() {
    return listener.getLocalPort();
  }

  /**
   * Returns the URI clients connect to.
   *
   * @return a URI such as {@code redis://127.0.0.1:40123}
   */
  public String uri() {
    return "redis://" + HOST + ":" + port();
  }

  /**
   * Returns the log this proxy records its fault events in.
   *
   * @return the log given at start, or the proxy's own
   */
  public FaultLog faultLog() {
    return log;
  }

  /**
   * Points the proxy at another port of the same host, as when an address moves to another
   * server while the old one runs on: connections accepted from now on reach {@code port};
   * those already open stay with the server they reach.
   *
   * @param port the port new connections are forwarded to
   * @throws IllegalStateException if the proxy is closed
   */
  public void retarget(int port) {
    synchronized (faultLock) {
      requireOpen();
      targetPort = port;
      log.record(name, FaultEvent.Kind.RETARGET, "new connections go to port " + port);
    }
  }

  /**
   * Returns how many client connections are currently open through the proxy.
   *
   * @return the number of accepted connections not yet closed
   */
  public int openConnections() {
    return links.size();
  }

  /**
   * Delays every chunk of bytes, in each direction, by {@code base} plus a uniformly random
   * offset in {@code [-jitter, +jitter]} (never below zero), without ever reordering bytes: a
   * chunk leaves at its due time or right after the previous chunk, whichever is later. Applies
   * to chunks read from now on, on current and new connections; chunks already waiting keep
   * their time. {@code latency(Duration.ZERO, Duration.ZERO)} clears it.
   *
   * @param base the mean delay per direction, not negative
   * @param jitter the maximum deviation from {@code base}, not negative
   * @throws IllegalStateException if the proxy is closed
   */
  public void latency(Duration base, Duration jitter) {
    latency(base, jitter, "");
  }

  /**
   * Keeps every connection open but stops forwarding in both directions, on current and new
   * connections: bytes read meanwhile, and bytes still held back by latency, are
   * <em>discarded</em>, as a network that loses every packet would. (A server that holds
   * data and answers later is modelled by {@link RedisServers#pause}.) Clients therefore see
   * their commands time out.
   *
   * <p>When the black hole ends ({@link #heal()}), connections that lost bytes are closed,
   * since their streams now have a gap and any protocol on them is out of step; connections
   * that lost nothing go on. New connections work normally.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void blackhole() {
    blackhole("");
  }

  /**
   * Closes every current connection on both sides, and from now on accepts new connections
   * only to close them at once, until {@link #heal()}. Clients see their connection reset or
   * ended, and reconnects fail the same way.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void drop() {
    drop("");
  }

  /**
   * Clears every fault: latency, black hole (closing the connections that lost bytes, see
   * {@link #blackhole()}) and drop. Records a {@link FaultEvent.Kind#HEAL} event even if no
   * fault was set.
   *
   * @throws IllegalStateException if the proxy is closed
   */
  public void heal() {
    synchronized (faultLock) {
      requireOpen();
      List<String> cleared = new ArrayList<>();
      if (!latency.isNone()) {
        cleared.add("latency " + latency);
        latency = Latency.NONE;
      }
      if (blackholed) {
        cleared.add("blackhole (" + closeConnectionsThatLostData() + ")");
      }
      if (dropping) {
        dropping = false;
        cleared.add("drop");
      }
      log.record(
          name,
          FaultEvent.Kind.HEAL,
          cleared.isEmpty() ? "no fault was set" : "cleared " + String.join(", ", cleared));
    }
  }

  void latency(Duration base, Duration jitter, String reason) {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(jitter, "jitter");
    if (base.isNegative() || jitter.isNegative()) {
      throw new IllegalArgumentException(
          "latency base and jitter must not be negative, were " + base + " and " + jitter);
    }
    synchronized (faultLock) {
      requireOpen();
      Latency next = new Latency(base.toNanos(), jitter.toNanos());
      latency = next;
      log.record(
          name, FaultEvent.Kind.LATENCY, (next.isNone() ? "cleared" : next.toString()) + reason);
    }
  }

  void blackhole(String reason) {
    synchronized (faultLock) {
      requireOpen();
      blackholed = true;
      log.record(
          name,
          FaultEvent.Kind.BLACKHOLE,
          "discarding all traffic on " + links.size() + " open and any new connections" + reason);
    }
  }

  /** Ends only the black hole, recording a heal event if one was in force. */
  void endBlackhole(String reason) {
    synchronized (faultLock) {
      requireOpen();
      if (blackholed) {
        log.record(
            name,
            FaultEvent.Kind.HEAL,
            "cleared blackhole (" + closeConnectionsThatLostData() + ")" + reason);
      }
    }
  }

  /** Ends only the latency, recording an event if some was set. */
  void endLatency(String reason) {
    synchronized (faultLock) {
      requireOpen();
      if (!latency.isNone()) {
        latency(Duration.ZERO, Duration.ZERO, reason);
      }
    }
  }

  void drop(String reason) {
    synchronized (faultLock) {
      requireOpen();
      // Set before closing: a connection accepted meanwhile either sees the flag or is in links.
      dropping = true;
      int count = 0;
      for (Link link : links) {
        link.close();
        count++;
      }
      log.record(
          name,
          FaultEvent.Kind.DROP,
          "closed " + count + " connections, refusing new ones" + reason);
    }
  }

  /** Ends only the drop, recording a heal event if one was in force. */
  void endDrop(String reason) {
    synchronized (faultLock) {
      requireOpen();
      if (dropping) {
        dropping = false;
        log.record(name, FaultEvent.Kind.HEAL, "cleared drop" + reason);
      }
    }
  }

  boolean isDropping() {
    return dropping;
  }

  /** The prefix of every thread this proxy starts; for tests that look for leaked threads. */
  String threadNamePrefix() {
    return "fault-proxy-" + name + "-";
  }

  /** Ends the black hole; caller holds faultLock. */
  private String closeConnectionsThatLostData() {
    // Cleared before the scan; a pump that discards concurrently re-reads the flag after
    // marking its link and closes the link itself, so no damaged stream slips through.
    blackholed = false;
    int count = 0;
    for (Link link : links) {
      if (link.lostData) {
        link.close();
        count++;
      }
    }
    return "closed " + count + " connections that lost data";
  }

  /**
   * Stops accepting, closes every connection, and returns once every thread of the proxy has
   * ended and its port is released. Calling it again does nothing.
   *
   * @throws IllegalStateException if a proxy thread has not ended within 10 seconds
   */
  @Override
  public void close() {
    synchronized (threads) {
      if (closed) {
        return;
      }
      closed = true;
    }
    closeQuietly(listener);
    for (Link link : links) {
      link.close();
    }
    long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
    List<String> stuck = new ArrayList<>();
    for (Thread thread : threads) {
      if (thread == Thread.currentThread()) {
        continue;
      }
      try {
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while closing fault proxy " + name, e);
      }
      if (thread.isAlive()) {
        stuck.add(thread.getName());
      }
    }
    if (!stuck.isEmpty()) {
      throw new IllegalStateException(
          "Fault proxy "
              + name
              + " threads did not end within "
              + CLOSE_TIMEOUT.toMillis()
              + " ms: "
              + stuck);
    }
    threads.clear();
    LOG.info("Fault proxy {} on port {} closed", name, port());
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("Fault proxy " + name + " is closed");
    }
  }

  /** Starts a named daemon thread, unless the proxy is closed; returns whether it started. */
  private boolean spawn(String role, Runnable body) {
    synchronized (threads) {
      if (closed) {
        return false;
      }
      Thread thread =
          new Thread(
              () -> {
                try {
                  body.run();
                } catch (RuntimeException | Error e) {
                  LOG.warn("Fault proxy {} thread failed", name, e);
                }
              },
              threadNamePrefix() + role);
      thread.setDaemon(true);
      threads.add(thread);
      thread.start();
      return true;
    }
  }

  private void acceptConnections() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("Fault proxy {} failed to accept a connection", name, e);
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // e.g. out of file descriptors
        }
        continue;
      }
      threads.removeIf(thread -> !thread.isAlive());
      if (dropping) {
        LOG.debug("Fault proxy {} dropping a new connection", name);
        closeQuietly(client);
        continue;
      }
      Link link = new Link(client, connectionIds.incrementAndGet());
      links.add(link);
      // Re-checked after publishing: drop() and close() set their flag before scanning links.
      if (dropping || closed || !spawn(link.id + "-c2s", link::run)) {
        link.close();
      }
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      LOG.debug("Ignoring failure to close {}", closeable, e);
    }
  }

  /** Delay per direction; a value object, swapped whole so readers never see half an update. */
  private record Latency(long baseNanos, long jitterNanos) {

    static final Latency NONE = new Latency(0, 0);

    boolean isNone() {
      return baseNanos == 0 && jitterNanos == 0;
    }

    long sampleNanos() {
      if (jitterNanos == 0) {
        return baseNanos;
      }
      long offset = ThreadLocalRandom.current().nextLong(-jitterNanos, jitterNanos + 1);
      return Math.max(0, baseNanos + offset);
    }

    @Override
    public String toString() {
      return "base="
          + Duration.ofNanos(baseNanos).toMillis()
          + "ms jitter="
          + Duration.ofNanos(jitterNanos).toMillis()
          + "ms";
    }
  }

  /** A chunk of bytes held back until its release time. */
  private record Chunk(byte[] bytes, long releaseNanos) {}

  /** One client connection and its upstream connection. */
  private final class Link {

    final long id;
    final Socket client;

    /** Set when any byte of this connection was discarded by the black hole. */
    volatile boolean lostData;

    private final AtomicBoolean closedOnce = new AtomicBoolean();
    private final AtomicInteger openDirections = new AtomicInteger(2);
    private final Socket upstream = new Socket();
    private volatile Pump toServer;
    private volatile Pump toClient;

    Link(Socket client, long id) {
      this.client = client;
      this.id = id;
    }

    boolean isClosed() {
      return closedOnce.get();
    }

    /** Runs on the client-to-server thread: connects upstream, then pumps that direction. */
    void run() {
      try {
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        upstream.connect(
            new InetSocketAddress(targetHost, targetPort),
            Math.toIntExact(CONNECT_TIMEOUT.toMillis()));
        toServer =
            new Pump(this, "c2s", client.getInputStream(), upstream.getOutputStream(), upstream);
        toClient =
            new Pump(this, "s2c", upstream.getInputStream(), client.getOutputStream(), client);
      } catch (IOException e) {
        if (!isClosed()) {
          LOG.info(
              "Fault proxy {} could not connect to {}:{} ({}); closing the client connection",
              name,
              targetHost,
              targetPort,
              e.toString());
        }
        close();
        return;
      }
      if (isClosed() || !spawn(id + "-s2c", toClient::pump)) {
        close();
        return;
      }
      toServer.pump();
    }

    /** Called by a pump that discarded bytes because of the black hole. */
    void discarded() {
      lostData = true;
      if (!blackholed) {
        close(); // the black hole ended while this chunk was being discarded
      }
    }

    /** One direction has delivered everything and half-closed its sink. */
    void directionFinished() {
      if (openDirections.decrementAndGet() == 0) {
        close();
      }
    }

    void close() {
      if (!closedOnce.compareAndSet(false, true)) {
        return;
      }
      closeQuietly(client);
      closeQuietly(upstream);
      links.remove(this);
      Pump pump = toServer;
      if (pump != null) {
        pump.wakeUp();
      }
      pump = toClient;
      if (pump != null) {
        pump.wakeUp();
      }
    }
  }

  /**
   * One direction of a link: a reader that forwards chunks itself while nothing waits, and a
   * deliverer thread, started on first need, that releases held-back chunks in order.
   */
  private final class Pump {

    private final Link link;
    private final String direction;
    private final InputStream in;
    private final OutputStream out;
    private final Socket sink;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // Guarded by lock.
    private final ArrayDeque<Chunk> held = new ArrayDeque<>();
    private long heldBytes;
    private long lastReleaseNanos;
    private boolean delivering;
    private boolean sourceEnded;
    private boolean delivererStarted;

    Pump(Link link, String direction, InputStream in, OutputStream out, Socket sink) {
      this.link = link;
      this.direction = direction;
      this.in = in;
      this.out = out;
      this.sink = sink;
    }

    /** The reading side; runs until end of stream or until the link closes. */
    void pump() {
      byte[] buffer = new byte[CHUNK_BYTES];
      try {
        while (true) {
          int n = in.read(buffer);
          if (n < 0) {
            break;
          }
          if (n > 0) {
            forward(buffer, n);
          }
        }
        sourceEnded();
      } catch (IOException e) {
        if (!link.isClosed()) {
          LOG.debug(
              "Fault proxy {} connection {} {} failed: {}", name, link.id, direction, e.toString());
        }
        link.close();
      } catch (InterruptedException e) {
        link.close();
      }
    }

    private void forward(byte[] buffer, int n) throws IOException, InterruptedException {
      if (blackholed) {
        link.discarded();
        return;
      }
      long delay = latency.sampleNanos();
      lock.lock();
      try {
        if (delay > 0 || !held.isEmpty() || delivering) {
          while (heldBytes > MAX_HELD_BYTES && !link.isClosed()) {
            changed.await();
          }
          long release = Math.max(System.nanoTime() + delay, lastReleaseNanos);
          lastReleaseNanos = release;
          held.addLast(new Chunk(Arrays.copyOf(buffer, n), release));
          heldBytes += n;
          changed.signalAll();
          if (!delivererStarted) {
            delivererStarted = true;
            if (!spawn(link.id + "-" + direction + "-delay", this::deliverHeldChunks)) {
              link.close();
            }
          }
          return;
        }
      } finally {
        lock.unlock();
      }
      // Fast path: nothing is held or being delivered, and only this thread adds chunks,
      // so writing here, outside the lock, keeps the byte order.
      out.write(buffer, 0, n);
    }

    /** The deliverer thread: releases held chunks in order, each at its release time. */
    private void deliverHeldChunks() {
      try {
        while (true) {
          Chunk chunk;
          lock.lock();
          try {
            chunk = awaitDueChunk();
            if (chunk == null) {
              break;
            }
            delivering = true;
          } finally {
            lock.unlock();
          }
          try {
            if (blackholed) {
              link.discarded();
            } else {
              out.write(chunk.bytes());
            }
          } finally {
            lock.lock();
            try {
              delivering = false;
              changed.signalAll();
            } finally {
              lock.unlock();
            }
          }
        }
      } catch (IOException e) {
        if (!link.isClosed()) {
          LOG.debug(
              "Fault proxy {} connection {} {} failed: {}", name, link.id, direction, e.toString());
        }
        link.close();
        return;
      } catch (InterruptedException e) {
        link.close();
        return;
      }
      if (!link.isClosed()) {
        finishDirection();
      }
    }

    /**
     * Waits until the head chunk is due and removes it; returns null once the link is closed
     * or the source has ended with nothing left to deliver. Caller holds the lock.
     */
    private Chunk awaitDueChunk() throws InterruptedException {
      while (!link.isClosed()) {
        Chunk head = held.peekFirst();
        if (head == null) {
          if (sourceEnded) {
            return null;
          }
          changed.await();
          continue;
        }
        long wait = head.releaseNanos() - System.nanoTime();
        if (wait <= 0) {
          held.removeFirst();
          heldBytes -= head.bytes().length;
          changed.signalAll();
          return head;
        }
        changed.awaitNanos(wait);
      }
      return null;
    }

    /** End of stream from the source: half-close the sink once everything held is delivered. */
    private void sourceEnded() {
      lock.lock();
      try {
        sourceEnded = true;
        changed.signalAll();
        if (delivererStarted) {
          return; // the deliverer half-closes after the last held chunk
        }
      } finally {
        lock.unlock();
      }
      finishDirection();
    }

    private void finishDirection() {
      try {
        sink.shutdownOutput();
      } catch (IOException e) {
        link.close();
        return;
      }
      link.directionFinished();
    }

    void wakeUp() {
      lock.lock();
      try {
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }
}
