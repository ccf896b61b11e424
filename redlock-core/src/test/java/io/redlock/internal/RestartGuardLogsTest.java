package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.FreshMarker;
import io.redlock.fake.FakeTime;
import io.redlock.fake.SimulatedNode;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restart guard logs nothing while it holds its monitor: transport threads take it, and a
 * slow appender would stall them. Every line it writes is written with the monitor released.
 */
class RestartGuardLogsTest {
  private static final int SIMPLE_LOGGER_DEBUG = 10;

  /** Sets the slf4j-simple logger's level, which another test may have raised; returns it. */
  private static int level(Logger logger, int level) throws ReflectiveOperationException {
    for (Class<?> type = logger.getClass(); type != null; type = type.getSuperclass()) {
      try {
        Field field = type.getDeclaredField("currentLogLevel");
        field.setAccessible(true);
        int before = field.getInt(logger);
        field.setInt(logger, level);
        return before;
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new AssertionError("not the slf4j-simple binding: " + logger.getClass());
  }

  @Test
  void everyLineIsWrittenWithTheMonitorReleased() throws Exception {
    FakeTime time = new FakeTime();
    List<SimulatedNode> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(new SimulatedNode("sim://logs" + i, time));
    }
    // one of each line the guard writes from a probe, a raise or a tick
    nodes.get(0).memory(new NodeInfo.Memory(1_000_000, "allkeys-lru")); // may evict: WARN
    nodes.get(1).refuseInfo("NOPERM this user has no permissions to run the 'info' command");
    nodes.get(2).refuseRegister("NOPERM this user has no permissions to run the 'eval' command");
    nodes.get(0).maxTtlRegister(Duration.ofSeconds(20), Duration.ofSeconds(3)); // widens: WARN
    // node 0 counts at once, so that its clock's flag is said (a held-back node's is not)
    nodes.get(0).putPersistent(FreshMarker.key(""), FreshMarker.value(nodes.get(0).runId()));

    AtomicReference<Object> monitor = new AtomicReference<>();
    List<String> underMonitor = new ArrayList<>();
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStream checking =
        new OutputStream() {
          @Override
          public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
          }

          @Override
          public synchronized void write(byte[] b, int off, int len) {
            Object guard = monitor.get();
            if (guard != null && Thread.holdsLock(guard)) {
              underMonitor.add(new String(b, off, len, StandardCharsets.UTF_8));
            }
            captured.write(b, off, len);
          }
        };
    Logger logger = LoggerFactory.getLogger(RestartGuard.class);
    int levelBefore = level(logger, SIMPLE_LOGGER_DEBUG);
    PrintStream original = System.err;
    // slf4j-simple writes to whatever System.err is at each line
    System.setErr(new PrintStream(checking, true, StandardCharsets.UTF_8));
    RestartGuard guard;
    try {
      guard =
          new RestartGuard(
              List.<NodeClient>copyOf(nodes),
              time,
              true,
              10_000,
              0.01,
              FreshMarker.key(""),
              FreshMarker.maxTtlKey(""));
      monitor.set(guard);
      guard.start();
      time.advanceInSteps(Duration.ofSeconds(2), Duration.ofMillis(500));
      nodes.get(0).jumpClock(Duration.ofSeconds(30)); // clock flagged: WARN
      time.advanceInSteps(Duration.ofSeconds(2), Duration.ofMillis(500));
      nodes.get(0).restartEmpty(); // restarted: WARN, held back: INFO
      // the wider value lapses from the register (the restart forgot it): INFO
      time.advanceInSteps(Duration.ofSeconds(10), Duration.ofMillis(500));
      guard.close();
    } finally {
      System.setErr(original);
      level(logger, levelBefore);
    }
    String text = captured.toString(StandardCharsets.UTF_8);
    assertThat(text)
        .as("each kind of line was written, so each was checked")
        .contains("may evict lock keys")
        .contains("refused the restart guard's probe")
        .contains("refused the raise of the max-ttl register")
        .contains("longer than this client's")
        .contains("restarted (run_id changed)")
        .contains("held back:")
        .contains("clock ran ahead by")
        .contains("the longest maxTtl in the cluster's register is now")
        .contains("DEBUG");
    assertThat(underMonitor).as("written while holding the guard's monitor").isEmpty();
  }
}
