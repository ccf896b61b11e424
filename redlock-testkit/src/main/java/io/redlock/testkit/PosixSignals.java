package io.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends SIGSTOP and SIGCONT to one process, by pid, and waits until the kernel shows the effect.
 *
 * <p>Java can only send SIGTERM and SIGKILL itself, so the signal goes through the shell's
 * {@code kill} builtin ({@code /bin/sh} exists on every Linux and macOS). The pid is passed as a
 * positional argument, never spliced into the script, so no quoting is involved. On Linux the
 * call returns only once {@code /proc/<pid>/stat} shows the process stopped (or no longer
 * stopped), because {@code kill(2)} merely queues the signal; tests that send a command right
 * after {@code pause} must not race the delivery.
 *
 * <p>Thread-safe: stateless.
 */
final class PosixSignals {

  private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(5);
  private static final char GONE = 0;

  private PosixSignals() {}

  static void stop(long pid) {
    send("STOP", pid);
    awaitStopped(pid, true);
  }

  static void resume(long pid) {
    send("CONT", pid);
    awaitStopped(pid, false);
  }

  private static void send(String signal, long pid) {
    try {
      Process kill =
          new ProcessBuilder(
                  "/bin/sh", "-c", "kill -" + signal + " \"$1\"", "sh", Long.toString(pid))
              .redirectErrorStream(true)
              .start();
      String output;
      try (InputStream in = kill.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
        throw new IllegalStateException("kill -" + signal + " " + pid + " did not finish");
      }
      if (kill.exitValue() != 0) {
        throw new IllegalStateException(
            "kill -"
                + signal
                + " "
                + pid
                + " failed with exit code "
                + kill.exitValue()
                + ": "
                + output);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Could not run /bin/sh to send SIG" + signal + " to " + pid, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while sending SIG" + signal + " to " + pid, e);
    }
  }

  private static void awaitStopped(long pid, boolean stopped) {
    Path stat = Paths.get("/proc", Long.toString(pid), "stat");
    if (!Files.isDirectory(stat.getParent())) {
      return; // no procfs (macOS): the signal was sent, delivery cannot be observed
    }
    long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
    while (true) {
      char state = state(stat);
      if (state == GONE || state == 'Z' || state == 'X' || isStopped(state) == stopped) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "Process "
                + pid
                + " did not become "
                + (stopped ? "stopped" : "running")
                + " within "
                + SETTLE_TIMEOUT.toMillis()
                + " ms");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  private static boolean isStopped(char state) {
    return state == 'T' || state == 't';
  }

  /** Field 3 of /proc/PID/stat, after the parenthesised command name, is the state letter. */
  private static char state(Path stat) {
    try {
      String line = Files.readString(stat, StandardCharsets.US_ASCII);
      int afterName = line.lastIndexOf(')');
      return line.charAt(afterName + 2);
    } catch (NoSuchFileException e) {
      return GONE; // exited meanwhile: there is nothing left to wait for
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read " + stat, e);
    }
  }
}
