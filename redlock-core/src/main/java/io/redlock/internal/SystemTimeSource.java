package io.redlock.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link System#nanoTime()} and one daemon timer thread, shared by every node timeout, retry
 * delay and watchdog of one {@code Redlock}: never a thread per lease or per request.
 *
 * <p>Thread-safe.
 */
public final class SystemTimeSource implements TimeSource, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SystemTimeSource.class);

  private final ScheduledThreadPoolExecutor timer;

  public SystemTimeSource() {
    timer =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "redlock-timer");
              thread.setDaemon(true);
              return thread;
            });
    // Lease watchdogs and retries are cancelled before their time (a release, a cancelled
    // acquisition); drop them from the queue at once instead of letting them pile up.
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public Cancellable schedule(Runnable task, long delayNanos) {
    ScheduledFuture<?> future;
    try {
      future =
          timer.schedule(
              () -> {
                try {
                  task.run();
                } catch (RuntimeException | Error e) {
                  log.error("timer task failed", e);
                }
              },
              Math.max(0, delayNanos),
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // Closed: the Redlock that owns this timer closed its node clients first, so every
      // request still being made (a late release) fails at once and needs no timeout. A task
      // due now is a hand-off (see LockEngine.dispatch) whose caller waits for it: it runs
      // here rather than never. A later task (a retry, a watchdog) is dropped.
      if (delayNanos <= 0) {
        try {
          task.run();
        } catch (RuntimeException | Error failure) {
          log.error("timer task failed", failure);
        }
      } else {
        log.debug("timer closed, task dropped");
      }
      return () -> {};
    }
    return () -> future.cancel(false);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
