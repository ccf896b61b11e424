package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedisBinaryTest {

  @Test
  void mapsPlatformsToTheResourcesEmbeddedRedisShips() {
    assertThat(RedisBinary.resourceNamesFor("Linux", "amd64"))
        .containsExactly("redis-server-6.2.6-v5-linux-amd64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "x86_64"))
        .containsExactly("redis-server-6.2.6-v5-linux-amd64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "aarch64"))
        .containsExactly("redis-server-6.2.7-linux-arm64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "i386"))
        .containsExactly("redis-server-6.2.7-linux-386");
    assertThat(RedisBinary.resourceNamesFor("Mac OS X", "x86_64"))
        .containsExactly("redis-server-6.2.6-v5-darwin-amd64");
    assertThat(RedisBinary.resourceNamesFor("Mac OS X", "aarch64"))
        .containsExactly("redis-server-6.2.6-v5-darwin-arm64");
    assertThat(RedisBinary.resourceNamesFor("Windows 11", "amd64")).isEmpty();
    assertThat(RedisBinary.resourceNamesFor("Linux", "riscv64")).isEmpty();
  }

  @Test
  void everyNamedResourceIsReallyOnTheClassPath() {
    for (String os : new String[] {"Linux", "Mac OS X"}) {
      for (String arch : new String[] {"amd64", "aarch64", "i386"}) {
        for (String name : RedisBinary.resourceNamesFor(os, arch)) {
          assertThat(RedisBinary.class.getClassLoader().getResource(name)).as(name).isNotNull();
        }
      }
    }
  }
}
