package io.redlock.randomized;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What happened in one run, in true time: every lease granted, the instant its holder's own
 * clock reaches its validity deadline, the instant it was released, and the commits done
 * under it (a commit is done only when {@code isValid()} was true at that instant). With
 * tracing on, also a readable event log for replays.
 */
final class History {
  /** One lease, as its holder saw it, in true nanoseconds since the run started. */
  static final class LeaseRecord {
    final int number;
    final int client;
    final List<String> resources;
    final long granted;
    final long validEnd;
    long released = Long.MAX_VALUE;
    long fencingToken; // 0 for an unfenced lease
    final List<Long> commits = new ArrayList<>(1);

    LeaseRecord(int number, int client, List<String> resources, long granted, long validEnd) {
      this.number = number;
      this.client = client;
      this.resources = resources;
      this.granted = granted;
      this.validEnd = validEnd;
    }

    /** When the holder stopped believing it held the lease: validity end, or release. */
    long end() {
      return Math.min(validEnd, released);
    }

    @Override
    public String toString() {
      return String.format(
          "lease#%d client%d %s%s valid [%.3fms, %.3fms)%s commits=%s",
          number,
          client,
          resources,
          fencingToken == 0 ? "" : " token=" + fencingToken,
          granted / 1e6,
          validEnd / 1e6,
          released == Long.MAX_VALUE ? "" : String.format(" released at %.3fms", released / 1e6),
          commits.stream().map(c -> String.format("%.3fms", c / 1e6)).toList());
    }
  }

  private final long origin;
  private final List<String> trace;
  final List<LeaseRecord> leases = new ArrayList<>();
  final List<Throwable> errors = new ArrayList<>();
  int failedAcquisitions;

  History(long origin, boolean tracing) {
    this.origin = origin;
    this.trace = tracing ? new ArrayList<>() : null;
  }

  /** True time since the run started, for records. */
  long since(long trueNanos) {
    return trueNanos - origin;
  }

  LeaseRecord granted(int client, List<String> resources, long trueNow, long trueValidEnd) {
    LeaseRecord lease =
        new LeaseRecord(leases.size(), client, resources, since(trueNow), since(trueValidEnd));
    leases.add(lease);
    return lease;
  }

  boolean tracing() {
    return trace != null;
  }

  void trace(long trueNow, Supplier<String> event) {
    if (trace != null) {
      trace.add(String.format("%10.3fms  %s", since(trueNow) / 1e6, event.get()));
    }
  }

  List<String> traceLines() {
    return trace == null ? List.of() : trace;
  }

  int commits() {
    int count = 0;
    for (LeaseRecord lease : leases) {
      count += lease.commits.size();
    }
    return count;
  }
}
