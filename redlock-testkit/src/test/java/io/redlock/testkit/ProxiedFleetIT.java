package io.redlock.testkit;

import static io.redlock.testkit.FaultProxyIT.threadsNamed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProxiedFleetIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

  @Test
  void eachClientGetsItsOwnProxyPerNode() {
    try (RedisServers redis = RedisServers.start(3);
        ProxiedFleet net = ProxiedFleet.of(redis, new FaultLog())) {
      List<String> a = net.urisFor("A");
      List<String> b = net.urisFor("B");

      assertThat(a).hasSize(3).doesNotHaveDuplicates().doesNotContainAnyElementsOf(b);
      assertThat(a).doesNotContainAnyElementsOf(redis.uris());
      assertThat(net.urisFor("A")).isEqualTo(a);
      assertThat(net.clients()).containsExactly("A", "B");
      assertThat(a.get(1))
          .isEqualTo("redis://:" + redis.password() + "@127.0.0.1:" + net.proxy("A", 1).port());
      assertThat(net.proxy("A", 1).name()).isEqualTo("A->node1");
    }
  }

  @Test
  void partitionCutsOneClientOffWhileOthersStillReachTheNode() throws IOException {
    FaultLog log = new FaultLog();
    try (RedisServers redis = RedisServers.start(2);
        ProxiedFleet net = ProxiedFleet.of(redis, log)) {
      List<String> a = net.urisFor("A");
      List<String> b = net.urisFor("B");
      try (RespConnection aToNode0 = open(a.get(0), TIMEOUT)) {
        assertThat(aToNode0.call("PING")).isEqualTo("PONG");

        net.partition("A", 0);

        assertThatThrownBy(() -> aToNode0.call("PING"))
            .isInstanceOf(IOException.class)
            .isNotInstanceOf(SocketTimeoutException.class);
      }
      assertUnreachable(a.get(0));
      assertReachable(a.get(1));
      assertReachable(b.get(0));
      assertReachable(b.get(1));

      net.heal("A");

      assertReachable(a.get(0));
      assertThat(log.events())
          .extracting(FaultEvent::proxy, FaultEvent::kind)
          .containsExactly(
              tuple("A->node0", FaultEvent.Kind.DROP), tuple("A->node0", FaultEvent.Kind.HEAL));
      assertThat(log.events().get(0).detail()).contains("partition", "client A", "node 0");
    }
  }

  @Test
  void nodeWideFaultsHitEveryClientIncludingLaterOnes() throws IOException {
    FaultLog log = new FaultLog();
    try (RedisServers redis = RedisServers.start(2);
        ProxiedFleet net = ProxiedFleet.of(redis, log)) {
      String a0 = net.urisFor("A").get(0);

      net.blackhole(0);
      net.latency(1, Duration.ofMillis(40), Duration.ZERO);
      String b0 = net.urisFor("B").get(0);
      String b1 = net.urisFor("B").get(1);

      assertTimesOut(a0);
      assertTimesOut(b0);
      try (RespConnection connection = open(b1, TIMEOUT)) {
        long start = System.nanoTime();
        assertThat(connection.call("PING")).isEqualTo("PONG");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .isGreaterThanOrEqualTo(Duration.ofMillis(80));
      }
      assertThat(log.eventsOf("B->node0"))
          .extracting(FaultEvent::kind)
          .containsExactly(FaultEvent.Kind.BLACKHOLE);
      assertThat(log.eventsOf("B->node1"))
          .extracting(FaultEvent::kind)
          .containsExactly(FaultEvent.Kind.LATENCY);

      net.healNode(0);

      assertReachable(a0);
      assertReachable(b0);
      assertThat(net.proxy("B", 1).faultLog().eventsOf("B->node1")).hasSize(1); // node 1 untouched

      net.partition("B", 0);
      net.healAll();

      assertReachable(b0);
      assertThat(log.eventsOf("B->node1"))
          .extracting(FaultEvent::kind)
          .containsExactly(FaultEvent.Kind.LATENCY, FaultEvent.Kind.HEAL);
    }
  }

  @Test
  void closeClosesEveryProxyButNotTheServers() {
    try (RedisServers redis = RedisServers.start(2)) {
      ProxiedFleet net = ProxiedFleet.of(redis, new FaultLog());
      List<String> a = net.urisFor("A");
      net.urisFor("B");
      assertThat(threadsNamed("fault-proxy-A->node")).isEqualTo(2);

      net.close();

      assertThat(threadsNamed("fault-proxy-A->node")).isZero();
      assertThat(threadsNamed("fault-proxy-B->node")).isZero();
      assertThatThrownBy(() -> open(a.get(0), TIMEOUT)).isInstanceOf(IOException.class);
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
      assertThatThrownBy(() -> net.urisFor("C")).isInstanceOf(IllegalStateException.class);
      net.close(); // again: no-op
    }
  }

  private static void assertReachable(String uri) throws IOException {
    try (RespConnection connection = open(uri, TIMEOUT)) {
      assertThat(connection.call("PING")).isEqualTo("PONG");
    }
  }

  private static void assertUnreachable(String uri) throws IOException {
    try (RespConnection connection = open(uri, TIMEOUT)) {
      assertThatThrownBy(() -> connection.call("PING"))
          .isInstanceOf(IOException.class)
          .isNotInstanceOf(SocketTimeoutException.class);
    }
  }

  private static void assertTimesOut(String uri) throws IOException {
    try (RespConnection connection = open(uri, SHORT_TIMEOUT)) {
      assertThatThrownBy(() -> connection.call("PING")).isInstanceOf(SocketTimeoutException.class);
    }
  }

  private static RespConnection open(String uri, Duration timeout) throws IOException {
    URI parsed = URI.create(uri);
    RespConnection connection = RespConnection.open(parsed.getHost(), parsed.getPort(), timeout);
    // The URIs of a fleet without an ACL user carry its password (":password@").
    return parsed.getUserInfo() == null
        ? connection
        : connection.authenticateFirst(parsed.getUserInfo().substring(1));
  }
}
