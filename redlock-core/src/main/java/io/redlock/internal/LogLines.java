package io.redlock.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Log lines decided under a monitor, with the values they name, to be written by {@link
 * #write()} once it is released, so that a slow appender never stalls a transport thread that
 * waits for the monitor. Confined to the thread that made it.
 */
final class LogLines {
  private final List<Runnable> lines = new ArrayList<>(2);

  void add(Runnable line) {
    lines.add(line);
  }

  void write() {
    for (Runnable line : lines) {
      line.run();
    }
  }
}
