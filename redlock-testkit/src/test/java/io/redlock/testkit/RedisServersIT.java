package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RedisServersIT {

  @Test
  void debugSleepKeepsTheServerFromAnsweringForAWhile() throws Exception {
    try (RedisServers servers =
        RedisServers.builder().count(1).commandTimeout(Duration.ofMillis(100)).start()) {
      servers.debugSleep(0, Duration.ofSeconds(1));
      // Until the sleep starts, PINGs are answered; once it has, one must time out.
      Timing.await(
          "a PING to time out",
          Duration.ofSeconds(5),
          () -> {
            try {
              servers.command(0, "PING");
              return false;
            } catch (UncheckedIOException e) {
              return e.getCause() instanceof SocketTimeoutException;
            }
          });
      assertThat(servers.isRunning(0)).isTrue();
    }
  }

  /**
   * The name and version the kit reads from {@code --version} are those the running server
   * reports: Redis in {@code redis_version}; Valkey in {@code valkey_version}, beside the Redis
   * version it is compatible with.
   */
  @Test
  void serverNameAndVersionAreThoseTheRunningServerReports() {
    String name = RedisBinary.serverName().orElseThrow();
    String version = RedisBinary.version().orElseThrow();
    assertThat(name).isIn("redis", "valkey");
    try (RedisServers redis = RedisServers.start(1)) {
      String info = String.valueOf(redis.command(0, "INFO", "server"));
      assertThat(info.lines()).contains(name + "_version:" + version);
      if (name.equals("valkey")) {
        assertThat(info.lines()).contains("server_name:valkey");
      }
    }
  }

  @Test
  void startsIndependentServersOnDistinctLoopbackPorts() {
    try (RedisServers redis = RedisServers.start(3)) {
      assertThat(redis.size()).isEqualTo(3);
      assertThat(redis.host()).isEqualTo("127.0.0.1");
      Set<Integer> ports = new HashSet<>();
      for (int i = 0; i < 3; i++) {
        assertThat(redis.port(i)).isNotEqualTo(6379);
        ports.add(redis.port(i));
        assertThat(redis.uri(i))
            .isEqualTo("redis://:" + redis.password() + "@127.0.0.1:" + redis.port(i));
        assertThat(redis.address(i)).isEqualTo("redis://127.0.0.1:" + redis.port(i));
        assertThat(redis.isRunning(i)).isTrue();
        assertThat(isAlive(redis.pid(i))).isTrue();
        assertThat(redis.command(i, "PING")).isEqualTo("PONG");
      }
      assertThat(ports).hasSize(3);
      assertThat(redis.uris()).containsExactly(redis.uri(0), redis.uri(1), redis.uri(2));
    }
  }

  @Test
  void otherUsersOfTheMachineCannotUseTheServersNorMakeThemLoadCodeOrWriteFiles() throws Exception {
    try (RedisServers redis = RedisServers.start(2);
        RedisServers other = RedisServers.start(1)) {
      assertThat(redis.password()).matches("[0-9a-f]{32}").isNotEqualTo(other.password());
      // Not on the command line, which every local user sees in ps.
      String commandLine =
          Files.readString(Path.of("/proc", Long.toString(redis.pid(0)), "cmdline"));
      assertThat(commandLine).doesNotContain(redis.password());
      try (RespConnection anonymous =
          RespConnection.open(redis.host(), redis.port(0), Duration.ofSeconds(3))) {
        assertThatThrownBy(() -> anonymous.call("SET", "k", "v"))
            .isInstanceOf(RedisErrorReplyException.class)
            .hasMessageContaining("NOAUTH");
        assertThatThrownBy(() -> anonymous.call("AUTH", other.password()))
            .isInstanceOf(RedisErrorReplyException.class)
            .hasMessageContaining("WRONGPASS");
        // The client's own user, with the password its URI carries: locks yes, code no.
        assertThat(anonymous.call("AUTH", redis.password())).isEqualTo("OK");
        assertThat(anonymous.call("SET", "k", "v")).isEqualTo("OK");
        assertThat(anonymous.call("CONFIG", "GET", "maxmemory")).isNotNull();
        for (String[] refused :
            new String[][] {
              {"CONFIG", "SET", "dir", "/tmp"},
              {"DEBUG", "SLEEP", "0"},
              {"MODULE", "LIST"},
              {"MODULE", "LOAD", "/tmp/x.so"}
            }) {
          assertThatThrownBy(() -> anonymous.call(refused))
              .as(String.join(" ", refused))
              .isInstanceOf(RedisErrorReplyException.class)
              .hasMessageMatching(".*(NOPERM|ERR unknown command).*");
        }
      }
      // The test kit itself still injects faults and reconfigures.
      assertThat(redis.command(1, "CONFIG", "SET", "maxmemory", "0")).isEqualTo("OK");
      assertThatThrownBy(() -> redis.command(1, "MODULE", "LIST"))
          .isInstanceOf(RedisErrorReplyException.class);
    }
  }

  @Test
  void awaitHeldTellsWhetherTheServersHoldAValueInTime() throws Exception {
    try (RedisServers redis = RedisServers.start(3)) {
      redis.command(0, "SET", "k", "v");
      redis.command(1, "SET", "k", "v");
      redis.command(2, "SET", "k", "other");
      assertThat(redis.awaitHeldBy(0, "k", "v", Duration.ofMillis(50))).isTrue();
      assertThat(redis.awaitHeldBy(2, "k", "v", Duration.ofMillis(50))).isFalse();
      assertThat(redis.awaitHeldByEvery("k", "v", Duration.ofMillis(50))).isFalse();
      redis.command(2, "SET", "k", "v");
      assertThat(redis.awaitHeldByEvery("k", "v", Duration.ofMillis(50))).isTrue();
    }
  }

  @Test
  void serversAreIndependentMasters() {
    try (RedisServers redis = RedisServers.start(3)) {
      assertThat(redis.command(0, "SET", "k", "v0")).isEqualTo("OK");
      assertThat(redis.command(1, "SET", "k", "v1")).isEqualTo("OK");

      assertThat(redis.command(0, "GET", "k")).isEqualTo("v0");
      assertThat(redis.command(1, "GET", "k")).isEqualTo("v1");
      assertThat(redis.command(2, "GET", "k")).isNull();
      assertThat((String) redis.command(0, "INFO", "replication")).contains("role:master");
    }
  }

  @Test
  void commandDecodesTheRepliesLockTestsUse() {
    try (RedisServers redis = RedisServers.start(1)) {
      assertThat(redis.command(0, "SET", "lock", "token-1", "NX", "PX", "10000")).isEqualTo("OK");
      assertThat(redis.command(0, "SET", "lock", "token-2", "NX", "PX", "10000")).isNull();
      assertThat((Long) redis.command(0, "PTTL", "lock")).isBetween(1L, 10000L);
      assertThat(redis.command(0, "INCR", "n")).isEqualTo(1L);
      assertThat(redis.command(0, "RPUSH", "list", "a", "b")).isEqualTo(2L);
      assertThat(redis.command(0, "LRANGE", "list", "0", "-1")).isEqualTo(List.of("a", "b"));
      assertThat(redis.command(0, "SCRIPT", "FLUSH")).isEqualTo("OK");
      assertThat(redis.command(0, "DEBUG", "SLEEP", "0")).isEqualTo("OK");
      assertThat((String) redis.command(0, "INFO", "server"))
          .contains("process_id:" + redis.pid(0));
      assertThat(redis.command(0, "FLUSHALL")).isEqualTo("OK");
      assertThat(redis.command(0, "GET", "lock")).isNull();
    }
  }

  @Test
  void errorReplyThrowsWithTheServersText() {
    try (RedisServers redis = RedisServers.start(1)) {
      redis.command(0, "SET", "s", "x");

      assertThatThrownBy(() -> redis.command(0, "LPUSH", "s", "y"))
          .isInstanceOfSatisfying(
              RedisErrorReplyException.class,
              e -> assertThat(e.errorCode()).isEqualTo("WRONGTYPE"));
      assertThatThrownBy(() -> redis.command(0, "NOSUCHCOMMAND"))
          .isInstanceOf(RedisErrorReplyException.class)
          .hasMessageContaining("unknown command");
    }
  }

  @Test
  void killedServerIsDownAndRefusesCommandsWhileOthersGoOn() {
    try (RedisServers redis = RedisServers.start(3)) {
      long pid = redis.pid(1);

      redis.kill(1);

      assertThat(redis.isRunning(1)).isFalse();
      assertThat(isAlive(pid)).isFalse();
      assertThatThrownBy(() -> redis.command(1, "PING"))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining("redis node 1")
          .hasRootCauseInstanceOf(ConnectException.class);
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
      assertThat(redis.command(2, "PING")).isEqualTo("PONG");
      redis.kill(1); // already down: no-op
    }
  }

  @Test
  void restartComesBackEmptyOnTheSamePort() {
    try (RedisServers redis = RedisServers.start(2)) {
      int port = redis.port(0);
      long oldPid = redis.pid(0);
      redis.command(0, "SET", "k", "v");
      redis.command(0, "SAVE"); // even an explicit snapshot must not survive without AOF
      redis.kill(0);

      redis.restart(0);

      assertThat(redis.isRunning(0)).isTrue();
      assertThat(redis.port(0)).isEqualTo(port);
      assertThat(redis.pid(0)).isNotEqualTo(oldPid);
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
      assertThat(redis.command(0, "GET", "k")).isNull();
      assertThat(redis.command(0, "DBSIZE")).isEqualTo(0L);
    }
  }

  @Test
  void restartOfARunningServerCrashesItFirst() {
    try (RedisServers redis = RedisServers.start(1)) {
      long oldPid = redis.pid(0);
      redis.command(0, "SET", "k", "v");

      redis.restart(0);

      assertThat(isAlive(oldPid)).isFalse();
      assertThat(redis.command(0, "GET", "k")).isNull();
    }
  }

  @Test
  void restartFailsClearlyWhileAnotherProcessHoldsThePort() throws Exception {
    try (RedisServers redis = RedisServers.start(1)) {
      redis.kill(0);
      try (ServerSocket squatter = new ServerSocket()) {
        squatter.bind(new InetSocketAddress(InetAddress.getByName(redis.host()), redis.port(0)));

        assertThatThrownBy(() -> redis.restart(0))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("Cannot restart redis node 0")
            .hasMessageContaining("port " + redis.port(0) + " is in use");
        assertThat(redis.isRunning(0)).isFalse();
      }

      redis.restart(0);

      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
    }
  }

  @Test
  void pausedServerTimesOutClearlyAndAnswersAgainOnResume() {
    try (RedisServers redis =
        RedisServers.builder().count(2).commandTimeout(Duration.ofMillis(300)).start()) {
      redis.pause(0);

      assertThat(redis.isRunning(0)).isTrue();
      assertThat(redis.isPaused(0)).isTrue();
      assertThatThrownBy(() -> redis.command(0, "PING"))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining("redis node 0")
          .hasMessageContaining("did not answer PING within 300 ms")
          .hasRootCauseInstanceOf(SocketTimeoutException.class);
      assertThat(redis.command(1, "PING")).isEqualTo("PONG");

      redis.resume(0);

      assertThat(redis.isPaused(0)).isFalse();
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
    }
  }

  @Test
  void pausedServerCanBeKilledRestartedOrStopped() {
    try (RedisServers redis = RedisServers.start(3)) {
      redis.pause(0);
      redis.pause(1);
      redis.pause(2);

      redis.kill(0);
      redis.restart(1);
      redis.stop(2);

      assertThat(redis.isRunning(0)).isFalse();
      assertThat(redis.isPaused(1)).isFalse();
      assertThat(redis.command(1, "PING")).isEqualTo("PONG");
      assertThat(redis.isRunning(2)).isFalse();
    }
  }

  @Test
  void gracefulStopEndsTheProcessAndRestartBringsItBack() {
    try (RedisServers redis = RedisServers.start(1)) {
      long pid = redis.pid(0);

      redis.stop(0);

      assertThat(redis.isRunning(0)).isFalse();
      assertThat(isAlive(pid)).isFalse();
      assertThatThrownBy(() -> redis.pause(0))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not running");
      redis.restart(0);
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
    }
  }

  @Test
  void appendOnlyServerKeepsItsDataAcrossACrash() {
    try (RedisServers redis = RedisServers.builder().appendOnly(true).start()) {
      redis.command(0, "SET", "k", "kept", "PX", "600000");
      redis.kill(0);

      redis.restart(0);

      assertThat(redis.command(0, "GET", "k")).isEqualTo("kept");
      assertThat((Long) redis.command(0, "PTTL", "k")).isPositive();
    }
  }

  @Test
  void aclUserIsRequiredAndUsedByCommand() throws Exception {
    try (RedisServers redis =
        RedisServers.builder().count(2).aclUser("redlock", "s3cr3t pass").start()) {
      assertThat(redis.command(0, "PING")).isEqualTo("PONG");
      assertThat(redis.command(0, "ACL", "WHOAMI")).isEqualTo("redlock-testkit");
      assertThat(redis.command(1, "SET", "k", "v")).isEqualTo("OK");
      assertThat(redis.command(1, "GET", "k")).isEqualTo("v");

      try (RespConnection anonymous =
          RespConnection.open(redis.host(), redis.port(0), Duration.ofSeconds(3))) {
        assertThatThrownBy(() -> anonymous.call("PING"))
            .isInstanceOfSatisfying(
                RedisErrorReplyException.class, e -> assertThat(e.errorCode()).isEqualTo("NOAUTH"));
        assertThatThrownBy(() -> anonymous.call("AUTH", "redlock", "wrong"))
            .isInstanceOfSatisfying(
                RedisErrorReplyException.class,
                e -> assertThat(e.errorCode()).isEqualTo("WRONGPASS"));
        assertThat(anonymous.call("AUTH", "redlock", "s3cr3t pass")).isEqualTo("OK");
        assertThat(anonymous.call("PING")).isEqualTo("PONG");
      }

      redis.kill(0);
      redis.restart(0); // the ACL survives a restart: same options
      assertThat(redis.command(0, "ACL", "WHOAMI")).isEqualTo("redlock-testkit");
    }
  }

  @Test
  void closeKillsEveryProcessDeletesDirectoriesAndIsIdempotent() {
    RedisServers redis = RedisServers.start(3);
    List<Long> pids = new ArrayList<>();
    List<Path> dirs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      pids.add(redis.pid(i));
      dirs.add(redis.dir(i));
    }
    redis.pause(1);
    redis.kill(2);

    redis.close();
    redis.close();

    for (int i = 0; i < 3; i++) {
      assertThat(isAlive(pids.get(i))).as("pid %d", pids.get(i)).isFalse();
      assertThat(redis.isRunning(i)).isFalse();
      assertThat(Files.exists(dirs.get(i))).as("dir %s", dirs.get(i)).isFalse();
    }
    assertThatThrownBy(() -> redis.restart(0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void commandsFromManyThreadsAreAllApplied() throws Exception {
    try (RedisServers redis = RedisServers.start(2)) {
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          int node = t % 2;
          tasks.add(
              () -> {
                for (int n = 0; n < 50; n++) {
                  redis.command(node, "INCR", "counter");
                }
                return null;
              });
        }
        for (Future<Void> done : pool.invokeAll(tasks)) {
          done.get();
        }
      } finally {
        pool.shutdown();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(redis.command(0, "GET", "counter")).isEqualTo("200");
      assertThat(redis.command(1, "GET", "counter")).isEqualTo("200");
    }
  }

  @Test
  void resumeFromAnotherThreadIsNotBlockedByACommandWaitingOnThePausedNode() throws Exception {
    try (RedisServers redis =
        RedisServers.builder().commandTimeout(Duration.ofSeconds(10)).start()) {
      redis.pause(0);
      ExecutorService pool = Executors.newSingleThreadExecutor();
      try {
        Future<Object> waiting = pool.submit(() -> redis.command(0, "PING"));

        redis.resume(0); // must not wait for the in-flight command

        assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo("PONG");
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void invalidArgumentsAreRejected() {
    assertThatThrownBy(() -> RedisServers.start(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisServers.builder().aclUser("a b", "pw"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisServers.builder().aclUser("default", "pw"))
        .isInstanceOf(IllegalArgumentException.class);
    try (RedisServers redis = RedisServers.start(1)) {
      assertThatThrownBy(() -> redis.port(1)).isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> redis.command(0)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  static boolean isAlive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }
}
