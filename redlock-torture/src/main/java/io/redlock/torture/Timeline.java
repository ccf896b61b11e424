package io.redlock.torture;

import io.redlock.testkit.LeaseRecord;

/** Shared time arithmetic of the reports. */
final class Timeline {
  private Timeline() {}

  /** The earliest instant a run recorded: time zero of its reports. */
  static long origin(TortureResult result) {
    long origin = Long.MAX_VALUE;
    boolean any = false;
    for (LeaseRecord lease : result.history().leases()) {
      origin = any ? Math.min(origin, lease.grantedNanos()) : lease.grantedNanos();
      any = true;
    }
    for (FaultRecord fault : result.faults()) {
      origin = any ? Math.min(origin, fault.nanos()) : fault.nanos();
      any = true;
    }
    return any ? origin : 0;
  }

  /** The latest instant a run recorded. */
  static long last(TortureResult result) {
    long last = origin(result);
    for (LeaseRecord lease : result.history().leases()) {
      last = Math.max(last, Math.max(lease.endedNanos(), lease.validEndNanos()));
    }
    for (FaultRecord fault : result.faults()) {
      last = Math.max(last, fault.nanos());
    }
    return last;
  }
}
