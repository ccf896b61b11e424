package io.redlock.fake;

import io.redlock.internal.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A clock that moves only when told to, and a timer that runs tasks in time order as it moves.
 *
 * <p>Tasks due at the same instant run in the order they were scheduled, so a run is
 * repeatable. Tasks run on the thread that calls {@link #advance}, outside any lock; other
 * threads may schedule meanwhile.
 */
public final class FakeTime implements TimeSource {
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long now = 1_000_000_000L; // not zero, so that no code can rely on a zero origin
  private long sequence;

  private static final class Task implements Comparable<Task> {
    final long due;
    final long seq;
    final Runnable action;
    volatile boolean cancelled;

    Task(long due, long seq, Runnable action) {
      this.due = due;
      this.seq = seq;
      this.action = action;
    }

    @Override
    public int compareTo(Task other) {
      int byTime = Long.compare(due, other.due);
      return byTime != 0 ? byTime : Long.compare(seq, other.seq);
    }
  }

  @Override
  public synchronized long nanoTime() {
    return now;
  }

  @Override
  public synchronized Cancellable schedule(Runnable action, long delayNanos) {
    Task task = new Task(now + Math.max(0, delayNanos), sequence++, action);
    tasks.add(task);
    return () -> task.cancelled = true;
  }

  /** Moves the clock forward by {@code step}, running every task that falls due on the way. */
  public void advance(Duration step) {
    long target;
    synchronized (this) {
      target = now + step.toNanos();
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.due > target) {
          now = target;
          return;
        }
        tasks.poll();
        now = Math.max(now, next.due);
      }
      if (!next.cancelled) {
        next.action.run();
      }
    }
  }

  /** Moves the clock in steps of {@code step} until {@code total} has passed. */
  public void advanceInSteps(Duration total, Duration step) {
    for (Duration passed = Duration.ZERO; passed.compareTo(total) < 0; passed = passed.plus(step)) {
      advance(step);
    }
  }

  /**
   * Moves the clock from task to task until {@code future} is done: a blocking call made on
   * the test thread waits without sleeping, in fake time. Throws if nothing is scheduled that
   * could complete it.
   */
  @Override
  public void await(java.util.concurrent.Future<?> future) throws InterruptedException {
    while (!future.isDone()) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      long due = -1;
      long from;
      synchronized (this) {
        from = now;
        for (Task task : tasks) {
          if (!task.cancelled && (due == -1 || task.due < due)) {
            due = task.due;
          }
        }
      }
      if (due == -1) {
        throw new IllegalStateException("waiting for a future that nothing scheduled completes");
      }
      advance(Duration.ofNanos(Math.max(0, due - from)));
    }
  }

  /** Runs every task that is due now, without moving the clock. */
  public void runDue() {
    advance(Duration.ZERO);
  }

  /** Tasks scheduled and neither run nor cancelled. */
  public synchronized int pendingTasks() {
    List<Task> live = new ArrayList<>();
    for (Task task : tasks) {
      if (!task.cancelled) {
        live.add(task);
      }
    }
    return live.size();
  }
}
