package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.EpollProvider;
import io.netty.channel.epoll.Epoll;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The epoll transport this module ships for Linux on x86-64 and aarch64: on such a machine the
 * connections use it without a setting, and {@code -Dio.lettuce.core.epoll=false} switches it
 * off. Runs in every failsafe execution, so also on the Netty each Spring Boot line pins (with
 * that line's epoll jar, as Boot's dependency management gives an application).
 */
class NativeTransportIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3);
  }

  @AfterAll
  static void stop() {
    servers.close();
  }

  private static boolean shippedForThisPlatform() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    return os.contains("linux") && Set.of("amd64", "x86_64", "aarch64").contains(arch);
  }

  @Test
  void onLinuxTheConnectionsUseEpollWithoutASetting() throws Exception {
    assumeTrue(shippedForThisPlatform(), "epoll is shipped for Linux on x86-64 and aarch64");
    assertThat(Epoll.isAvailable()).as("epoll loads: %s", Epoll.unavailabilityCause()).isTrue();
    assertThat(EpollProvider.isAvailable()).as("Lettuce uses epoll").isTrue();

    Set<Class<?>> channels = ConcurrentHashMap.newKeySet();
    ClientResources resources =
        ObservedResources.seeing(channel -> channels.add(channel.getClass()));
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder().nodes(servers.uris()).build(),
            new LettuceTransport(resources))) {
      try (Lease lease = redlock.acquire("native:epoll", Duration.ofSeconds(10))) {
        assertThat(lease.isValid()).isTrue();
      }
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).await(3, TimeUnit.SECONDS);
    }
    assertThat(channels)
        .isNotEmpty()
        .allSatisfy(type -> assertThat(type.getSimpleName()).isEqualTo("EpollSocketChannel"));
  }

  @Test
  void aSystemPropertySwitchesItOff() throws Exception {
    assumeTrue(shippedForThisPlatform(), "epoll is shipped for Linux on x86-64 and aarch64");
    // Lettuce reads the property once per JVM, so each answer comes from a JVM of its own.
    assertThat(epollInAFreshJvm(List.of())).isEqualTo("true");
    assertThat(epollInAFreshJvm(List.of("-Dio.lettuce.core.epoll=false"))).isEqualTo("false");
  }

  /** What {@link EpollProvider#isAvailable()} says in a new JVM on this test's class path. */
  private static String epollInAFreshJvm(List<String> options)
      throws IOException, InterruptedException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> command =
        new java.util.ArrayList<>(
            List.of(java.toString(), "-cp", System.getProperty("java.class.path")));
    command.addAll(options);
    command.add(EpollAnswer.class.getName());
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output;
    try (var in = process.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
    }
    Duration limit = Timing.scaled(Duration.ofSeconds(30));
    assertThat(process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS))
        .as("the JVM exits within %s", limit)
        .isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    return output.lines().reduce((first, second) -> second).orElse("");
  }

  /** Prints whether Lettuce would use epoll in this JVM. */
  public static final class EpollAnswer {
    public static void main(String[] args) {
      System.out.println(EpollProvider.isAvailable());
    }
  }
}
