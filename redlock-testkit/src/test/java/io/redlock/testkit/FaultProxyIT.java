package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class FaultProxyIT {

  private static final Logger LOG = LoggerFactory.getLogger(FaultProxyIT.class);
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

  @Test
  void forwardsCommandsUnchanged() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("pass", redis.host(), redis.port(0));
        RespConnection connection = open(redis, proxy, TIMEOUT)) {
      assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port()); // no secret
      assertThat(proxy.port()).isNotEqualTo(redis.port(0)).isNotEqualTo(6379);

      assertThat(connection.call("SET", "k", "v")).isEqualTo("OK");
      assertThat(connection.call("GET", "k")).isEqualTo("v");

      String big = patterned(1024 * 1024);
      assertThat(connection.call("SET", "big", big)).isEqualTo("OK");
      assertThat(connection.call("GET", "big")).isEqualTo(big);
      assertThat(redis.command(0, "STRLEN", "big")).isEqualTo((long) big.length());
    }
  }

  @Test
  void pipelinedCommandsKeepTheirOrder() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("pipeline", redis.host(), redis.port(0));
        Socket socket = connect(proxy)) {
      OutputStream out = new BufferedOutputStream(socket.getOutputStream());
      InputStream in = new BufferedInputStream(socket.getInputStream());
      int count = 1000;
      RespConnection.writeCommand(out, "AUTH", redis.password());
      for (int i = 0; i < count; i++) {
        RespConnection.writeCommand(out, "RPUSH", "list", Integer.toString(i));
      }
      out.flush();
      assertThat(RespConnection.readReply(in)).isEqualTo("OK");

      for (int i = 0; i < count; i++) {
        assertThat(RespConnection.readReply(in)).isEqualTo((long) i + 1);
      }
      assertThat(redis.command(0, "LRANGE", "list", "0", "-1")).isEqualTo(numbers(count));
    }
  }

  @Test
  void sustainsManySmallExchangesWithoutFaults() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("throughput", redis.host(), redis.port(0));
        RespConnection viaProxy = open(redis, proxy, TIMEOUT);
        RespConnection direct =
            RespConnection.open(redis.host(), redis.port(0), TIMEOUT)
                .authenticateFirst(redis.password())) {
      int exchanges = 5000;
      long directNanos = timePings(direct, exchanges);
      long proxiedNanos = timePings(viaProxy, exchanges);
      // Informational only: wall-clock upper bounds would make the test flaky on slow machines.
      LOG.info(
          "{} PINGs: direct {} µs each, through the proxy {} µs each",
          exchanges,
          directNanos / exchanges / 1000,
          proxiedNanos / exchanges / 1000);
      assertThat(proxy.faultLog().events()).isEmpty();
    }
  }

  @Test
  void latencyDelaysEachDirectionByAtLeastTheBase() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("slow", redis.host(), redis.port(0));
        RespConnection connection = open(redis, proxy, TIMEOUT)) {
      assertThat(connection.call("PING")).isEqualTo("PONG");

      proxy.latency(Duration.ofMillis(50), Duration.ZERO);
      long start = System.nanoTime();
      assertThat(connection.call("PING")).isEqualTo("PONG");
      long elapsed = System.nanoTime() - start;

      // 50 ms to the server and 50 ms back.
      assertThat(Duration.ofNanos(elapsed)).isGreaterThanOrEqualTo(Duration.ofMillis(100));

      proxy.latency(Duration.ZERO, Duration.ZERO);
      assertThat(connection.call("PING")).isEqualTo("PONG");
      assertThat(proxy.faultLog().events())
          .extracting(FaultEvent::kind)
          .containsExactly(FaultEvent.Kind.LATENCY, FaultEvent.Kind.LATENCY);
      assertThat(proxy.faultLog().events().get(1).detail()).contains("cleared");
    }
  }

  @Test
  void jitterNeverReordersBytes() throws Exception {
    try (EchoServer echo = new EchoServer();
        FaultProxy proxy = FaultProxy.start("jitter", "127.0.0.1", echo.port());
        Socket socket = connect(proxy)) {
      // Jitter as large as the base: without ordering, later chunks would often overtake.
      proxy.latency(Duration.ofMillis(2), Duration.ofMillis(2));
      int count = 2000;
      CompletableFuture<Void> writer =
          CompletableFuture.runAsync(
              () -> {
                try {
                  DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                  for (int i = 0; i < count; i++) {
                    out.writeInt(i); // unbuffered with TCP_NODELAY: many small chunks
                  }
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });

      DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      for (int i = 0; i < count; i++) {
        assertThat(in.readInt()).isEqualTo(i);
      }
      writer.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  @Test
  void pendingRepliesAreDeliveredBeforeTheConnectionCloses() throws Exception {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("quit", redis.host(), redis.port(0))) {
      proxy.latency(Duration.ofMillis(30), Duration.ofMillis(10));
      try (RespConnection connection = open(redis, proxy, TIMEOUT)) {
        // The server replies and closes at once; the held-back reply must still arrive,
        // and only then the end of the stream.
        assertThat(connection.call("QUIT")).isEqualTo("OK");
        assertThatThrownBy(() -> connection.call("PING"))
            .isInstanceOf(IOException.class)
            .isNotInstanceOf(SocketTimeoutException.class);
      }
      Timing.await("the proxied connection to close", TIMEOUT, () -> proxy.openConnections() == 0);
    }
  }

  @Test
  void dropClosesConnectionsAndRefusesNewOnesUntilHeal() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("dropper", redis.host(), redis.port(0));
        RespConnection before = open(redis, proxy, TIMEOUT)) {
      assertThat(before.call("PING")).isEqualTo("PONG");
      assertThat(proxy.openConnections()).isEqualTo(1);

      proxy.drop();

      assertThat(proxy.openConnections()).isZero();
      assertThatThrownBy(() -> before.call("PING"))
          .isInstanceOf(IOException.class)
          .isNotInstanceOf(SocketTimeoutException.class);
      try (RespConnection during = open(redis, proxy, TIMEOUT)) {
        assertThatThrownBy(() -> during.call("PING"))
            .isInstanceOf(IOException.class)
            .isNotInstanceOf(SocketTimeoutException.class);
      }

      proxy.heal();

      try (RespConnection after = open(redis, proxy, TIMEOUT)) {
        assertThat(after.call("PING")).isEqualTo("PONG");
      }
      assertThat(proxy.faultLog().events())
          .extracting(FaultEvent::kind)
          .containsExactly(FaultEvent.Kind.DROP, FaultEvent.Kind.HEAL);
    }
  }

  @Test
  void blackholeTimesCommandsOutAndHealRestoresServiceForNewConnections() throws IOException {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("hole", redis.host(), redis.port(0));
        RespConnection before = open(redis, proxy, SHORT_TIMEOUT);
        RespConnection idle = open(redis, proxy, TIMEOUT)) {
      assertThat(before.call("SET", "k", "v")).isEqualTo("OK");
      assertThat(idle.call("PING")).isEqualTo("PONG");

      proxy.blackhole();

      assertThatThrownBy(() -> before.call("SET", "k", "lost"))
          .isInstanceOf(SocketTimeoutException.class);
      try (RespConnection during = open(redis, proxy, SHORT_TIMEOUT)) {
        assertThatThrownBy(() -> during.call("PING")).isInstanceOf(SocketTimeoutException.class);
      }
      // Discarded, not held: the write never reached the server.
      assertThat(redis.command(0, "GET", "k")).isEqualTo("v");

      proxy.heal();

      try (RespConnection after = open(redis, proxy, TIMEOUT)) {
        assertThat(after.call("GET", "k")).isEqualTo("v");
      }
      // A connection that lost data is closed at heal; one that lost nothing goes on.
      assertThatThrownBy(() -> before.call("PING"))
          .isInstanceOf(IOException.class)
          .isNotInstanceOf(SocketTimeoutException.class);
      assertThat(idle.call("PING")).isEqualTo("PONG");
      assertThat(redis.command(0, "GET", "k")).isEqualTo("v");
    }
  }

  @Test
  void faultEventsAreRecordedInOrderWithTimestamps() {
    FaultLog log = new FaultLog();
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("logged", redis.host(), redis.port(0), log)) {
      long before = System.nanoTime();

      proxy.latency(Duration.ofMillis(20), Duration.ofMillis(5));
      proxy.blackhole();
      proxy.heal();
      proxy.drop();
      proxy.heal();

      long after = System.nanoTime();
      List<FaultEvent> events = log.events();
      assertThat(events)
          .extracting(FaultEvent::kind)
          .containsExactly(
              FaultEvent.Kind.LATENCY,
              FaultEvent.Kind.BLACKHOLE,
              FaultEvent.Kind.HEAL,
              FaultEvent.Kind.DROP,
              FaultEvent.Kind.HEAL);
      assertThat(events).extracting(FaultEvent::proxy).containsOnly("logged");
      assertThat(events.get(0).detail()).contains("base=20ms", "jitter=5ms");
      assertThat(events.get(2).detail()).contains("latency", "blackhole");
      assertThat(events.get(4).detail()).contains("drop");
      for (int i = 0; i < events.size(); i++) {
        assertThat(events.get(i).nanoTime()).isBetween(before, after);
        if (i > 0) {
          assertThat(events.get(i).nanoTime()).isGreaterThanOrEqualTo(events.get(i - 1).nanoTime());
          assertThat(events.get(i).at()).isAfterOrEqualTo(events.get(i - 1).at());
        }
      }
      assertThat(log.eventsOf("logged")).isEqualTo(events);
      assertThat(log.eventsOf("other")).isEmpty();
    }
  }

  @Test
  void closeFreesThePortAndEveryThread() throws Exception {
    try (RedisServers redis = RedisServers.start(1)) {
      FaultProxy proxy = FaultProxy.start("closing", redis.host(), redis.port(0));
      String prefix = proxy.threadNamePrefix();
      int port = proxy.port();
      List<RespConnection> connections = new ArrayList<>();
      try {
        proxy.latency(Duration.ofMillis(1), Duration.ZERO); // starts the delivering threads too
        for (int i = 0; i < 3; i++) {
          RespConnection connection = open(redis, proxy, TIMEOUT);
          connections.add(connection);
          assertThat(connection.call("PING")).isEqualTo("PONG");
        }
        // accept + 3 connections x (2 readers + 2 deliverers)
        assertThat(threadsNamed(prefix)).isEqualTo(13);
      } finally {
        proxy.close();
      }

      assertThat(threadsNamed(prefix)).isZero();
      assertThatThrownBy(() -> connect(port)).isInstanceOf(ConnectException.class);
      try (ServerSocket rebound = new ServerSocket()) {
        rebound.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
      }
      for (RespConnection connection : connections) {
        assertThatThrownBy(() -> connection.call("PING")).isInstanceOf(IOException.class);
        connection.close();
      }
      proxy.close(); // again: no-op
      assertThatThrownBy(proxy::heal).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void closedClientConnectionsReleaseTheirThreads() throws Exception {
    try (RedisServers redis = RedisServers.start(1);
        FaultProxy proxy = FaultProxy.start("churn", redis.host(), redis.port(0))) {
      for (int i = 0; i < 20; i++) {
        try (RespConnection connection = open(redis, proxy, TIMEOUT)) {
          assertThat(connection.call("PING")).isEqualTo("PONG");
        }
      }
      Timing.await(
          "every proxied connection to close", TIMEOUT, () -> proxy.openConnections() == 0);
      Timing.await(
          "only the accepting thread to remain",
          TIMEOUT,
          () -> threadsNamed(proxy.threadNamePrefix()) == 1);
    }
  }

  @Test
  void unreachableTargetEndsTheClientConnection() throws IOException {
    int deadPort;
    try (RedisServers redis = RedisServers.start(1)) {
      deadPort = redis.port(0);
      redis.kill(0);
      try (FaultProxy proxy = FaultProxy.start("dead", redis.host(), deadPort);
          RespConnection connection = open(redis, proxy, TIMEOUT)) {
        assertThatThrownBy(() -> connection.call("PING"))
            .isInstanceOf(IOException.class)
            .isNotInstanceOf(SocketTimeoutException.class);
      }
    }
  }

  private static long timePings(RespConnection connection, int count) throws IOException {
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      assertThat(connection.call("PING")).isEqualTo("PONG");
    }
    return System.nanoTime() - start;
  }

  static RespConnection open(RedisServers redis, FaultProxy proxy, Duration timeout)
      throws IOException {
    return RespConnection.open("127.0.0.1", proxy.port(), timeout)
        .authenticateFirst(redis.password());
  }

  private static Socket connect(FaultProxy proxy) throws IOException {
    return connect(proxy.port());
  }

  private static Socket connect(int port) throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(Math.toIntExact(TIMEOUT.toMillis()));
      socket.connect(new InetSocketAddress("127.0.0.1", port), Math.toIntExact(TIMEOUT.toMillis()));
      return socket;
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> thread.getName().startsWith(prefix) && thread.isAlive())
        .count();
  }

  private static String patterned(int length) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; text.length() < length; i++) {
      text.append(i).append(',');
    }
    text.setLength(length);
    return text.toString();
  }

  private static List<String> numbers(int count) {
    List<String> numbers = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      numbers.add(Integer.toString(i));
    }
    return numbers;
  }

  /** A loopback server that echoes every byte back on each connection; for byte-order checks. */
  private static final class EchoServer implements AutoCloseable {

    private final ServerSocket listener;
    private final Thread thread;

    EchoServer() throws IOException {
      listener = new ServerSocket();
      listener.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
      thread = new Thread(this::echoOneConnection, "echo-server");
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    private void echoOneConnection() {
      try (Socket socket = listener.accept()) {
        socket.setTcpNoDelay(true);
        socket.getInputStream().transferTo(socket.getOutputStream());
      } catch (IOException e) {
        // closed by the test
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      try {
        thread.join(TIMEOUT.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
