package io.redlock.randomized;

import java.lang.reflect.Field;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Silences the library's logging below ERROR while schedules run: a hundred thousand runs of
 * crashes and restarts would otherwise write millions of WARN and INFO lines. Works with the
 * slf4j-simple binding of the tests, also when another test created the loggers first.
 */
final class QuietLogs {
  private static final String[] LOGGED = {
    "io.redlock.Redlock",
    "io.redlock.internal.LockEngine",
    io.redlock.Redlock.ACQUISITION_LOGGER,
    "io.redlock.internal.Round",
    "io.redlock.internal.HeldLease",
    "io.redlock.internal.RestartGuard"
  };
  private static volatile boolean applied;

  private QuietLogs() {}

  static synchronized void apply() {
    if (applied) {
      return;
    }
    applied = true;
    System.setProperty("org.slf4j.simpleLogger.log.io.redlock", "error");
    for (String name : LOGGED) {
      Logger logger = LoggerFactory.getLogger(name);
      for (Class<?> type = logger.getClass(); type != null; type = type.getSuperclass()) {
        try {
          Field level = type.getDeclaredField("currentLogLevel");
          level.setAccessible(true);
          level.setInt(logger, 40); // ERROR in slf4j-simple
          break;
        } catch (NoSuchFieldException e) {
          // look in the superclass
        } catch (ReflectiveOperationException | RuntimeException e) {
          break; // another binding: leave it as configured
        }
      }
    }
  }
}
