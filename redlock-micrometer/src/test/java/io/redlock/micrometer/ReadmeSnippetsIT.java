package io.redlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's snippets, run against three real redis-server processes (restart guard on),
 * and a check that the README still shows the code that runs here: each snippet's lines
 * must appear in this file in the same order, one after another (lines marked
 * {@code // test-only} are skipped).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadmeSnippetsIT {
  private static final Path README = Path.of("..", "README.md");
  private static final Path SELF =
      Path.of("src", "test", "java", "io", "redlock", "micrometer", "ReadmeSnippetsIT.java");

  private static RedisServers servers;
  private static List<String> nodes;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3);
    nodes = servers.uris();
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  /** Servers declared fresh: the restart guard counts them at once. A short ttl keeps it quick. */
  private static RedlockConfig.Builder config() {
    return RedlockConfig.builder().nodes(nodes).ttl(Duration.ofSeconds(2));
  }

  private static int holding(String key) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if (servers.command(i, "GET", key) != null) {
        count++;
      }
    }
    return count;
  }

  @Test
  void lockView() throws Exception {
    try (Redlock redlock = Redlock.create(config().build())) {
      Lock lock = redlock.asLock("orders:42");
      lock.lock();
      try {
        // only this thread, of this process and of every other, works on orders:42
        assertThat(holding("orders:42")).isGreaterThanOrEqualTo(2); // test-only
      } finally {
        lock.unlock(); // throws LeaseLostException if the lease was lost meanwhile
      }

      boolean ran = false; // test-only
      if (lock.tryLock(5, TimeUnit.SECONDS)) { // retries for at most 5 s
        try {
          // ...
          ran = true; // test-only
        } finally {
          lock.unlock();
        }
      }
      assertThat(ran).isTrue();
      assertThat(((io.redlock.RedlockLock) lock).isLocked()).isFalse();
    }
  }

  @Test
  void listener() throws Exception {
    List<String> alerts = new CopyOnWriteArrayList<>();
    RedlockListener lostLeases = new RedlockListener() {
      @Override
      public void leaseLost(RedlockEvent.LeaseLost event) {
        alerts.add(event.lease().resources() + " lost: " + event.cause());
      }
    };
    RedlockConfig config = RedlockConfig.builder()
        .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
        .listener(lostLeases)
        .build();

    try (Redlock redlock = Redlock.create(config.toBuilder().nodes(nodes).ttl(Duration.ofSeconds(2)).build())) {
      Lock warmUp = redlock.asLock("warm-up");
      assertThat(warmUp.tryLock(20, TimeUnit.SECONDS)).isTrue();
      warmUp.unlock();
      Lease lease = redlock.acquire("report", Duration.ofSeconds(1)); // never extended
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (alerts.isEmpty() && System.nanoTime() - deadline < 0) {
        Thread.sleep(10);
      }
      assertThat(alerts).containsExactly("[report] lost: EXPIRED");
      assertThat(lease.isValid()).isFalse();
    }
  }

  @Test
  void micrometer() throws Exception {
    MeterRegistry meterRegistry = new SimpleMeterRegistry();
    ObservationRegistry observationRegistry = ObservationRegistry.create();
    RedlockMetrics metrics = RedlockMetrics.builder(meterRegistry)
        .observationRegistry(observationRegistry) // optional: spans through a tracing bridge
        .build();
    Redlock redlock = Redlock.create(RedlockConfig.builder()
        .nodes(nodes)
        .ttl(Duration.ofSeconds(2)) // test-only: a short ttl keeps the test quick
        .listener(metrics)
        .build());
    try (redlock) {
      Lock lock = redlock.asLock("nightly", Duration.ofSeconds(2));
      lock.lock();
      lock.unlock();
      // the listener runs on the thread that completed the acquisition: wait for it
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (meterRegistry.get("redlock.acquire").tag("outcome", "acquired").timer().count() == 0
          && System.nanoTime() - deadline < 0) {
        Thread.sleep(10);
      }
      assertThat(meterRegistry.get("redlock.acquire").tag("outcome", "acquired").timer().count())
          .isEqualTo(1);
    }
  }

  @Test
  void theReadmeShowsTheCodeThatRunsHere() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    List<String> self = new ArrayList<>();
    for (String line : Files.readAllLines(SELF, StandardCharsets.UTF_8)) {
      if (!line.contains("// test-only") && !line.isBlank()) {
        self.add(line.strip());
      }
    }
    for (String name : List.of("lock-view", "listener", "micrometer")) {
      List<String> snippet = snippet(readme, name);
      assertThat(snippet).as(name).isNotEmpty();
      assertThat(indexOf(self, snippet)).as("README snippet " + name + " runs here").isNotNegative();
    }
    List<String> bom = snippet(readme, "bom");
    String bomPom = Files.readString(Path.of("..", "redlock-bom", "pom.xml"), StandardCharsets.UTF_8);
    assertThat(bom).contains("<artifactId>redlock-bom</artifactId>", "<type>pom</type>",
        "<scope>import</scope>");
    for (String module : List.of("redlock-core", "redlock-lettuce", "redlock-testkit",
        "redlock-micrometer")) {
      assertThat(bomPom).contains("<artifactId>" + module + "</artifactId>");
      assertThat(readme).contains("`" + module + "`");
    }
  }

  /** The stripped, non-blank lines of the code block after {@code <!-- snippet:name -->}. */
  private static List<String> snippet(String readme, String name) {
    int marker = readme.indexOf("<!-- snippet:" + name + " -->");
    assertThat(marker).as("marker " + name).isNotNegative();
    int open = readme.indexOf("```", marker);
    int start = readme.indexOf('\n', open) + 1;
    int end = readme.indexOf("```", start);
    List<String> lines = new ArrayList<>();
    for (String line : readme.substring(start, end).split("\n")) {
      if (!line.isBlank()) {
        lines.add(line.strip());
      }
    }
    return lines;
  }

  private static int indexOf(List<String> haystack, List<String> needle) {
    return java.util.Collections.indexOfSubList(haystack, needle);
  }
}
