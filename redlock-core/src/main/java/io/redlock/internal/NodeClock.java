package io.redlock.internal;

import java.util.Locale;

/**
 * One node's clock as a watching client measures it against its own monotonic clock, probe
 * after probe, for the restart guard's clock rules (docs/safety.md): Redis expires keys by its
 * wall clock, so a clock that leapt forward or runs fast expired keys early, as a restart
 * would have forgotten them.
 *
 * <p>Rate: over long baselines (since the first probe of the process, and a sliding window of
 * one to two {@link #WINDOW_NANOS}), a clock that ran ahead by more than {@code driftFactor} is
 * flagged. Step: between consecutive probes, a clock that gained more than {@link
 * #STEP_TOLERANCE_NANOS} beyond what its own rate over the sliding window predicts is flagged.
 * Each reading is only known to lie within its probe's round trip, and the rules flag only
 * what lies beyond that uncertainty.
 *
 * <p>Not thread-safe: the guard calls it under its monitor.
 */
final class NodeClock {
  /** The sliding baseline of the clock check spans one to two of these. */
  static final long WINDOW_NANOS = 60_000_000_000L;

  /**
   * The largest forward step of a node's clock that is not flagged: the drift margin's floor,
   * 2 ms. A lease's drift margin is this floor plus {@code driftFactor} of its ttl; the second
   * part is spent by a clock running up to {@code driftFactor} fast (the rate rule), so the
   * floor is what is left for a step, for every ttl, the shortest included.
   */
  static final long STEP_TOLERANCE_NANOS = Validity.DRIFT_FLOOR_NANOS;

  /** One reading of a node's clock: its {@code TIME}, our clock then, the round trip. */
  record Reading(long server, long local, long roundTrip) {}

  private final double driftFactor;
  private Reading last;
  private Reading anchor;
  private Reading windowStart;
  private Reading windowNext;
  private double ownRate = Double.NaN;
  private String flag;

  NodeClock(double driftFactor) {
    this.driftFactor = driftFactor;
  }

  /**
   * A new process behind the address (or the first look at one): its clock is measured afresh
   * from {@code now}; the rate measured before stands in for one interval (see {@link
   * #observe}).
   */
  void restart(Reading now) {
    flag = null;
    anchor = now;
    windowStart = now;
    windowNext = null;
    last = now;
  }

  /** Why the clock of the current process was flagged last, or {@code null}. */
  String flag() {
    return flag;
  }

  /**
   * Takes in a probe of the same process; returns why its clock is flagged now, or {@code
   * null}. Compares the node's clock with ours: over the baselines since the first probe of this
   * process and over the sliding window (a rate beyond {@code driftFactor}), then since the
   * last probe against the node's own rate over the sliding window (a step beyond {@link
   * #STEP_TOLERANCE_NANOS}). In the first interval after the baselines restarted (at the first
   * probe of a process, or at a flag), the sliding window ends where it starts and gives no
   * rate: the step is then measured against the rate last measured over it (the same clock
   * before the flag, or the host's clock under the process before), for that one interval.
   * In the interval after a flag it caused, and in the first after the guard first saw the
   * node, there is none: the rate rule over that interval, which allows {@code driftFactor} of
   * it, is the only check there.
   * Redis expires keys by its wall clock: a clock that leapt forward or runs fast expired keys
   * early, as a restart would have forgotten them.
   */
  String observe(Reading now) {
    Reading previous = last;
    String flagged = null;
    Reading fast = ranAhead(anchor, now) ? anchor : ranAhead(windowStart, now) ? windowStart : null;
    if (fast != null) {
      long elapsed = now.local() - fast.local();
      flagged =
          String.format(
              Locale.ROOT,
              "ran ahead by %s in %s (%.2f%%, more than driftFactor %.2f%%)",
              Durations.formatNanos(excess(fast, now)),
              Durations.formatNanos(elapsed),
              100.0 * excess(fast, now) / elapsed,
              100.0 * driftFactor);
    } else if (previous != null) {
      Reading base = windowStart;
      double rate =
          GuardRules.fastestRate(
              previous.server() - base.server(),
              previous.local() - base.local(),
              uncertainty(base, previous));
      if (!Double.isNaN(rate)) {
        ownRate = rate;
      } else {
        // The baseline restarted at the previous probe (a new process, a flag) and gives no
        // rate yet: the rate measured before stands in for it. A flag steps the clock, it does
        // not change its rate; a new process behind the address runs on its host's clock.
        // Used once: should it be wrong (a process moved to a host whose clock runs faster),
        // the flag it causes restarts the baseline, and judging the next interval by it again
        // would flag the node at every probe; it is measured anew instead. A node never
        // measured has none: in its first interval the rate rule is the only check.
        rate = ownRate;
        ownRate = Double.NaN;
      }
      long step =
          GuardRules.leastStepAtRate(
              rate,
              now.server() - previous.server(),
              now.local() - previous.local(),
              uncertainty(previous, now));
      if (step > STEP_TOLERANCE_NANOS) {
        flagged =
            String.format(
                Locale.ROOT,
                "jumped forward by at least %.2f ms in %s beyond its own rate (more than %s)",
                step / 1e6,
                Durations.formatNanos(now.local() - previous.local()),
                Durations.formatNanos(STEP_TOLERANCE_NANOS));
      }
    }
    if (flagged != null) {
      flag = flagged;
      anchor = now;
      windowStart = now;
      windowNext = null;
      last = now;
      return flagged;
    }
    if (windowNext == null) {
      windowNext = now;
    } else if (now.local() - windowNext.local() >= WINDOW_NANOS) {
      windowStart = windowNext;
      windowNext = now;
    }
    last = now;
    return null;
  }

  /** Whether the node's clock certainly ran ahead of ours by more than {@code driftFactor}. */
  private boolean ranAhead(Reading from, Reading to) {
    long localDelta = to.local() - from.local();
    if (localDelta <= 0) {
      return false;
    }
    return GuardRules.ranAhead(
        to.server() - from.server(),
        localDelta,
        uncertainty(from, to),
        (long) (localDelta * driftFactor));
  }

  /** How far apart on our clock two readings may really have been, beyond their midpoints. */
  private static long uncertainty(Reading from, Reading to) {
    return from.roundTrip() / 2 + to.roundTrip() / 2 + 2;
  }

  private static long excess(Reading from, Reading to) {
    return (to.server() - from.server()) - (to.local() - from.local());
  }
}
