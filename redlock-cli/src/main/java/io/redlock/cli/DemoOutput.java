package io.redlock.cli;

import java.io.PrintWriter;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Standard output of {@code redlock demo}, with a {@code \r}-updated progress line on a terminal
 * and timestamps, for the lines that report events, relative to the start of the run.
 *
 * <p>Thread-safe: the workers, the fault thread and the progress loop all print through one
 * instance; every print is synchronized so that lines and the progress line do not interleave.
 */
final class DemoOutput {
  final PrintWriter stream;
  final boolean tty;
  private int progressWidth;
  private volatile long startNanos;

  DemoOutput(PrintWriter stream, boolean tty) {
    this.stream = stream;
    this.tty = tty;
  }

  /** Sets when the run started ({@link System#nanoTime()}); {@link #timestamp()} counts from it. */
  void startClock(long startNanos) {
    this.startNanos = startNanos;
  }

  /** The wall-clock time and the seconds since the run started: {@code [12:00:01.250 +2.0s]}. */
  String timestamp() {
    return String.format(Locale.ROOT, "[%s +%.1fs]",
        LocalTime.now().truncatedTo(ChronoUnit.MILLIS), (System.nanoTime() - startNanos) / 1e9);
  }

  /** Prints a line of its own, clearing the progress line first. */
  synchronized void line(String text) {
    clearProgress();
    stream.println(text);
    stream.flush();
  }

  synchronized void progress(String text) {
    if (tty) {
      stream.print("\r" + text + " ".repeat(Math.max(0, progressWidth - text.length())));
      progressWidth = text.length();
    } else {
      stream.println(text);
    }
    stream.flush();
  }

  /** Leaves the last progress line on screen and moves to the next line. */
  synchronized void endProgress() {
    if (progressWidth > 0) {
      stream.println();
      progressWidth = 0;
    }
    stream.flush();
  }

  private void clearProgress() {
    if (progressWidth > 0) {
      stream.print("\r" + " ".repeat(progressWidth) + "\r");
      progressWidth = 0;
    }
  }
}
