package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The ACL line of the README's "Running in production", as written there, is enough for the library with the
 * restart guard on: acquire one and several resources, extend, release.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProductionIT {
  /** The user and password of the documented ACL line. */
  static final String DOCUMENTED_USER = "locker";

  static final String DOCUMENTED_PASSWORD = "change-me";

  /** The words of the {@code ACL SETUSER} line of the README. */
  static List<String> documentedAcl() throws IOException {
    List<String> lines =
        Files.readAllLines(Markdown.ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    List<String> found = new ArrayList<>();
    for (String line : lines) {
      if (line.strip().startsWith("ACL SETUSER " + DOCUMENTED_USER + " ")) {
        found.add(line.strip());
      }
    }
    assertThat(found).as("the ACL SETUSER line of " + DOCUMENTED_USER + " in README.md").hasSize(1);
    return List.of(found.get(0).split("\\s+"));
  }

  /** Runs the documented ACL line on every node of {@code servers}. */
  static void createDocumentedUser(RedisServers servers) throws IOException {
    List<String> words = documentedAcl();
    assertThat(words.subList(0, 5))
        .containsExactly("ACL", "SETUSER", DOCUMENTED_USER, "on", ">" + DOCUMENTED_PASSWORD);
    for (int i = 0; i < servers.size(); i++) {
      servers.command(i, words.toArray(String[]::new));
    }
  }

  @Test
  void theDocumentedAclIsEnoughWithTheGuardOn() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3)) {
      createDocumentedUser(servers);
      List<String> addresses = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        servers.declareFresh(i, "app:"); // the documented user's keys are under app:
        addresses.add(servers.address(i)); // no credentials: the user below is the one used
      }
      RedlockConfig config =
          RedlockConfig.builder()
              .nodes(addresses)
              .username(DOCUMENTED_USER)
              .password(DOCUMENTED_PASSWORD)
              .keyPrefix("app:")
              .build();
      assertThat(config.restartGuard()).isTrue();
      try (Redlock redlock = Redlock.create(config)) {
        try (Lease lease = redlock.acquire("acl:one", Duration.ofSeconds(10))) {
          assertThat(lease.extend(Duration.ofSeconds(10))).isTrue();
        }
        try (Lease both = redlock.acquire(List.of("acl:a", "acl:b"), Duration.ofSeconds(10))) {
          assertThat(both.extend(Duration.ofSeconds(10))).isTrue();
          both.releaseAfter(Duration.ofSeconds(5));
        }
        Fleet.awaitReleased(servers, "app:acl:one");
        assertThat(Fleet.holding(servers, "app:acl:a")).isGreaterThanOrEqualTo(2);
      }
    }
  }
}
