package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.netty.channel.Channel;
import io.netty.channel.epoll.Epoll;
import io.netty.handler.flush.FlushConsolidationHandler;
import org.junit.jupiter.api.Test;

/**
 * Proves which Lettuce and Netty the integration tests of this failsafe execution run on: the
 * module's own, or those a Spring Boot line pins (the executions named after Boot lines). Each
 * execution names the versions it means in system properties.
 */
class TransportVersionsIT {

  @Test
  void theLettuceAndNettyOnTheClassPathAreTheOnesThisExecutionNames() {
    String lettuce = System.getProperty("redlock.test.lettuce");
    String netty = System.getProperty("redlock.test.netty");
    assertThat(lettuce).as("redlock.test.lettuce").isNotNull();
    assertThat(netty).as("redlock.test.netty").isNotNull();
    assertThat(jarOf(RedisClient.class)).endsWith("lettuce-core-" + lettuce + ".jar");
    assertThat(jarOf(Channel.class)).endsWith("netty-transport-" + netty + ".jar");
    assertThat(jarOf(FlushConsolidationHandler.class)).endsWith("netty-handler-" + netty + ".jar");
    // the epoll transport this module ships, at the same Netty version (its JNI library must
    // match the Java classes)
    assertThat(jarOf(Epoll.class)).endsWith("netty-transport-classes-epoll-" + netty + ".jar");
  }

  private static String jarOf(Class<?> type) {
    return type.getProtectionDomain().getCodeSource().getLocation().getPath();
  }
}
