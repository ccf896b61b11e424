package io.redlock.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The node timeouts of every {@link Round} of one engine, on one timer task at a time.
 *
 * <p>Every round lasts the same node timeout, so deadlines come in the order rounds start: a
 * queue in start order is also in deadline order. One timer task is pending for the oldest
 * round in flight; when it fires, it expires the rounds whose deadline passed, drops those that
 * settled, and re-arms for the next. A round costs a queue insertion, not a timer task of its
 * own: no timer queue operation, and no wake-up of the timer thread, per round (the profile
 * in docs/profiling.md showed one wake-up per cycle when each round had its own task). A round
 * never expires before its deadline, and at most one timer task is pending.
 *
 * <p>Note on concurrency: the queue and the armed flag are guarded by this object's monitor;
 * rounds are expired outside it, so that no callback runs under it.
 */
final class RoundTimeouts {
  private final TimeSource time;
  private final long timeoutNanos;

  /** Rounds in start order; package-private so that its test reads it under the monitor. */
  final ArrayDeque<Round> inFlight = new ArrayDeque<>();

  private boolean armed;

  public RoundTimeouts(TimeSource time, long timeoutNanos) {
    this.time = time;
    this.timeoutNanos = timeoutNanos;
  }

  TimeSource time() {
    return time;
  }

  long timeoutNanos() {
    return timeoutNanos;
  }

  /** Starts {@code round}'s node timeout now. */
  void add(Round round) {
    synchronized (this) {
      // Settled rounds at the head are dropped here too, so that the queue stays short even
      // while the timer task waits for an older, slow round.
      while (!inFlight.isEmpty() && inFlight.peekFirst().isSettled()) {
        inFlight.pollFirst();
      }
      round.deadlineNanos = time.nanoTime() + timeoutNanos;
      inFlight.addLast(round);
      armLocked();
    }
  }

  private void check() {
    List<Round> expired = new ArrayList<>();
    synchronized (this) {
      armed = false;
      long now = time.nanoTime();
      while (!inFlight.isEmpty()) {
        Round head = inFlight.peekFirst();
        if (head.isSettled()) {
          inFlight.pollFirst();
        } else if (head.deadlineNanos - now <= 0) {
          expired.add(inFlight.pollFirst());
        } else {
          break;
        }
      }
      armLocked();
    }
    for (Round round : expired) {
      round.expire();
    }
  }

  private void armLocked() {
    if (!armed && !inFlight.isEmpty()) {
      armed = true;
      time.schedule(this::check, inFlight.peekFirst().deadlineNanos - time.nanoTime());
    }
  }
}
