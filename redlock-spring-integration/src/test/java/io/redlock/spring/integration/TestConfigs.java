package io.redlock.spring.integration;

import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;

/** The configuration the registry tests share. */
final class TestConfigs {
  private TestConfigs() {}

  /**
   * The defaults over {@code servers}, with a node timeout that a loaded machine keeps: {@code
   * tryLock()} makes one attempt, and what these tests check is the registry's behaviour, not
   * the node timeout.
   */
  static RedlockConfig patient(RedisServers servers) {
    return RedlockConfig.builder()
        .nodes(servers.uris())
        .nodeTimeout(Duration.ofMillis(500))
        .build();
  }
}
