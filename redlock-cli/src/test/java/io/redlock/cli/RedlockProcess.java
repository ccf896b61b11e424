package io.redlock.cli;

import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** What the tests that run {@code redlock} as a process of its own share. */
final class RedlockProcess {
  private RedlockProcess() {}

  /**
   * The exit code of {@code process}, waiting up to a minute (scaled for slow machines); a
   * process still running then is killed and the test fails.
   */
  static int exitOf(Process process) throws InterruptedException {
    Duration limit = Timing.scaled(Duration.ofSeconds(60));
    if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("redlock did not exit within " + limit);
    }
    return process.exitValue();
  }
}
