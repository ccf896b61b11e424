package io.redlock.torture;

import io.redlock.testkit.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The leases of one resource summed over equal slices of a run, for a report of a run too long
 * to draw each lease: per slice, how many leases began in it, how many of them were lost, by
 * how many clients, and how much of the slice some lease was valid, by client.
 *
 * <p>Not thread-safe: filled and read by one thread.
 */
final class LeaseBuckets {

  /**
   * The most slices a lane is cut into: about two pixels each on the report's plot, so that
   * the lane shows all the detail the page can, and no more.
   */
  static final int MOST = 600;

  /** The narrowest slice: one second, the finest a person reads a long run at. */
  static final long NARROWEST_NANOS = 1_000_000_000L;

  /** The slice widths chosen from, in seconds: one slice fits a round number of ticks. */
  private static final long[] WIDTHS_SECONDS = {
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 21_600, 43_200, 86_400
  };

  /** One slice: its leases and who held it for how long. */
  static final class Bucket {
    int leases;
    int lost;
    final Map<String, Long> heldNanos = new HashMap<>();

    /** The part of the slice some lease was valid, 0 to 1 (overlapping leases are capped). */
    double coverage(long width) {
      long held = heldNanos.values().stream().mapToLong(Long::longValue).sum();
      return Math.min(1.0, (double) held / width);
    }

    /** The client that held the slice longest; ties go to the first name in order. */
    String mainHolder() {
      String best = null;
      long most = -1;
      for (Map.Entry<String, Long> held : heldNanos.entrySet()) {
        long nanos = held.getValue();
        if (nanos > most || nanos == most && held.getKey().compareTo(best) < 0) {
          best = held.getKey();
          most = nanos;
        }
      }
      return best;
    }
  }

  private final long origin;
  private final long width;
  private final Bucket[] buckets;

  private LeaseBuckets(long origin, long width, int count) {
    this.origin = origin;
    this.width = width;
    this.buckets = new Bucket[count];
  }

  /**
   * The slice width for a run of {@code spanNanos}: the narrowest of the round widths, at
   * least {@link #NARROWEST_NANOS}, that cuts the span into at most {@link #MOST} slices.
   */
  static long width(long spanNanos) {
    for (long seconds : WIDTHS_SECONDS) {
      long nanos = seconds * 1_000_000_000L;
      if (slices(spanNanos, nanos) <= MOST) {
        return nanos;
      }
    }
    long day = WIDTHS_SECONDS[WIDTHS_SECONDS.length - 1] * 1_000_000_000L;
    return day * ((spanNanos / day) / MOST + 1);
  }

  private static int slices(long spanNanos, long width) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, spanNanos / width + 1));
  }

  /** The leases of each resource over {@code [origin, origin + spanNanos]}, by resource. */
  static Map<String, LeaseBuckets> of(List<LeaseRecord> leases, long origin, long spanNanos) {
    long width = width(spanNanos);
    int count = slices(spanNanos, width);
    Map<String, LeaseBuckets> lanes = new HashMap<>();
    for (LeaseRecord lease : leases) {
      lanes
          .computeIfAbsent(lease.resource(), r -> new LeaseBuckets(origin, width, count))
          .add(lease);
    }
    return lanes;
  }

  private void add(LeaseRecord lease) {
    long start = lease.grantedNanos() - origin;
    long end = Math.max(start, lease.validEndNanos() - origin);
    int first = index(start);
    Bucket at = bucket(first);
    at.leases++;
    if (lease.lost()) {
      at.lost++;
    }
    for (int i = first; i <= index(end); i++) {
      long from = Math.max(start, i * width);
      long to = Math.min(end, (i + 1) * width);
      if (to > from) {
        bucket(i).heldNanos.merge(lease.client(), to - from, Long::sum);
      }
    }
  }

  private int index(long offset) {
    return (int) Math.max(0, Math.min(buckets.length - 1, offset / width));
  }

  private Bucket bucket(int i) {
    if (buckets[i] == null) {
      buckets[i] = new Bucket();
    }
    return buckets[i];
  }

  /** The slice width, in nanoseconds. */
  long width() {
    return width;
  }

  /** The slices that saw a lease, with their index: slice {@code i} starts at {@code i * width}. */
  List<Map.Entry<Integer, Bucket>> used() {
    List<Map.Entry<Integer, Bucket>> used = new ArrayList<>();
    for (int i = 0; i < buckets.length; i++) {
      if (buckets[i] != null) {
        used.add(Map.entry(i, buckets[i]));
      }
    }
    return used;
  }
}
