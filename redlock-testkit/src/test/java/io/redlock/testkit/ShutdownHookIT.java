package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ShutdownHookIT {

  @Test
  void serversOfAJvmThatExitsWithoutClosingAreKilled() throws Exception {
    Process child =
        new ProcessBuilder(
                javaExecutable(),
                "-cp",
                classPathOf(
                    AbandonedFleet.class,
                    RedisServers.class,
                    org.slf4j.Logger.class,
                    org.slf4j.simple.SimpleLogger.class),
                "-D" + RedisBinary.PATH_PROPERTY + "=" + RedisBinary.locate(),
                AbandonedFleet.class.getName())
            .redirectErrorStream(true)
            .start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();
    assertThat(child.exitValue()).as(output).isZero();

    List<String> servers =
        output.lines().filter(line -> line.startsWith("SERVER ")).collect(Collectors.toList());
    assertThat(servers).as(output).hasSize(2);
    List<Path> dirs = new ArrayList<>();
    try {
      for (String server : servers) {
        String[] fields = server.split(" ", 3);
        dirs.add(Paths.get(fields[2]));
        long pid = Long.parseLong(fields[1]);
        assertThat(RedisServersIT.isAlive(pid))
            .as("redis-server pid %d after its JVM exited", pid)
            .isFalse();
      }
    } finally {
      dirs.forEach(ShutdownHookIT::deleteRecursively); // the hook kills processes only
    }
  }

  private static String javaExecutable() {
    return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Built from code sources, since under failsafe java.class.path may be a manifest-only jar. */
  private static String classPathOf(Class<?>... classes) throws URISyntaxException {
    List<String> entries = new ArrayList<>();
    for (Class<?> type : classes) {
      entries.add(
          Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
    }
    return String.join(File.pathSeparator, entries);
  }

  private static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new IllegalStateException("Could not clean up " + root, e);
    }
  }
}
