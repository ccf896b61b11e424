package io.redlock.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The JVM-wide registry of redis-server processes this kit started and has not yet seen exit.
 *
 * <p>A shutdown hook kills whatever is still registered when the JVM exits, so a test that
 * fails before closing its fleet never leaves a redis-server running behind the build. (A JVM
 * that is itself SIGKILLed runs no hooks; nothing in-process can cover that case.)
 *
 * <p>Thread-safe: backed by a concurrent set.
 */
final class LiveProcesses {

  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(new Thread(LiveProcesses::killAll, "redlock-testkit-reaper"));
  }

  private LiveProcesses() {}

  static void register(Process process) {
    LIVE.add(process);
  }

  static void forget(Process process) {
    LIVE.remove(process);
  }

  private static void killAll() {
    List<Process> remaining = new ArrayList<>(LIVE);
    // Signal all first, then wait, so N stragglers cost one wait rather than N.
    remaining.forEach(Process::destroyForcibly);
    for (Process process : remaining) {
      try {
        process.waitFor(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
