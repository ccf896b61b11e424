package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ACL users and passwords: from the URI, from the configuration, and a wrong one. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AclIT {
  private static final String USER = "locker";
  private static final String PASSWORD = "pa55-w0rd-never-shown";
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.builder().count(3).aclUser(USER, PASSWORD).start();
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static List<String> urisWith(String userInfo) {
    List<String> uris = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      uris.add("redis://" + userInfo + "@" + servers.host() + ":" + servers.port(i));
    }
    return uris;
  }

  /**
   * Node {@code node}'s value of {@code key}, once it is {@code expected} or after 5 s:
   * acquire returns at a majority, and the last node's SET may still be on its way.
   */
  private static Object valueOnceSet(int node, String key, String expected)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!expected.equals(servers.command(node, "GET", key))
        && System.nanoTime() - deadline < 0) {
      Thread.sleep(5);
    }
    return servers.command(node, "GET", key);
  }

  @Test
  void credentialsInTheUriAreUsed() throws Exception {
    RedlockConfig config = RedlockConfig.builder().restartGuard(false).nodes(urisWith(USER + ":" + PASSWORD)).build();
    assertThat(config.toString()).doesNotContain(PASSWORD);
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("acl:uri", Duration.ofSeconds(10))) {
      assertThat(valueOnceSet(0, "acl:uri", lease.token())).isEqualTo(lease.token());
      assertThat(redlock.nodes()).allSatisfy(node -> assertThat(node).doesNotContain(PASSWORD));
    }
  }

  @Test
  void credentialsFromTheConfigurationAreUsed() throws Exception {
    RedlockConfig config = RedlockConfig.builder().restartGuard(false).nodes(servers.uris())
        .username(USER).password(PASSWORD).build();
    assertThat(config.toString()).doesNotContain(PASSWORD).contains("password=****");
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("acl:config", Duration.ofSeconds(10))) {
      assertThat(valueOnceSet(1, "acl:config", lease.token())).isEqualTo(lease.token());
    }
  }

  @Test
  void aWrongPasswordIsAClearErrorNamingTheNodeWithoutThePassword() {
    String wrong = "wrong-secret-123";
    RedlockConfig config = RedlockConfig.builder().restartGuard(false).nodes(urisWith(USER + ":" + wrong)).build();
    assertThatThrownBy(() -> Redlock.create(config))
        .isInstanceOf(RedlockConfigException.class)
        // every node refuses; whichever answered first is named
        .satisfies(e -> assertThat(servers.uris()).anyMatch(e.getMessage()::contains))
        .hasMessageContaining("refused")
        .satisfies(e -> {
          assertThat(e.getMessage()).doesNotContain(wrong).doesNotContain(PASSWORD);
          assertThat(String.valueOf(e.getCause())).doesNotContain(wrong);
        });
  }

  @Test
  void noCredentialsAtAllIsRefusedToo() {
    RedlockConfig config = RedlockConfig.builder().restartGuard(false).nodes(servers.uris())
        .connectTimeout(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> Redlock.create(config))
        .isInstanceOf(RedlockConfigException.class)
        .satisfies(e -> assertThat(servers.uris()).anyMatch(e.getMessage()::contains));
  }
}
