package io.redlock.testkit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides whether a {@link History} kept mutual exclusion.
 *
 * <p>It reports every pair of leases on the same resource whose valid intervals
 * ({@code [granted, min(ended, validUntil)]}) overlap, every pair of pieces of work under
 * different leases on the same resource that overlap, and every piece of work that finished
 * after its own lease's valid interval ended. Intervals are compared on the monotonic clock;
 * touching ends do not overlap.
 *
 * <p>Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class SafetyChecker {

  private SafetyChecker() {}

  public static List<Violation> check(History history) {
    List<Violation> violations = new ArrayList<>();
    List<LeaseRecord> leases = history.leases();
    Map<String, LeaseRecord> byToken = new HashMap<>();
    for (LeaseRecord lease : leases) {
      byToken.put(lease.token() + "\u0000" + lease.resource(), lease);
    }
    for (List<LeaseRecord> group : groupBy(leases, LeaseRecord::resource).values()) {
      group.sort(Comparator.comparingLong(LeaseRecord::grantedNanos));
      for (int i = 0; i < group.size(); i++) {
        LeaseRecord a = group.get(i);
        for (int j = i + 1; j < group.size(); j++) {
          LeaseRecord b = group.get(j);
          if (b.grantedNanos() - a.validEndNanos() >= 0) {
            break; // sorted by start: no later lease can overlap a either
          }
          if (!a.token().equals(b.token())) {
            violations.add(
                new Violation(
                    Violation.Kind.OVERLAPPING_LEASES,
                    a.resource(),
                    describe(a) + " overlaps " + describe(b)));
          }
        }
      }
    }
    List<WorkRecord> work = history.work();
    for (List<WorkRecord> group : groupBy(work, WorkRecord::resource).values()) {
      group.sort(Comparator.comparingLong(WorkRecord::startNanos));
      for (int i = 0; i < group.size(); i++) {
        WorkRecord a = group.get(i);
        for (int j = i + 1; j < group.size(); j++) {
          WorkRecord b = group.get(j);
          if (b.startNanos() - a.endNanos() >= 0) {
            break;
          }
          if (!a.token().equals(b.token())) {
            violations.add(
                new Violation(
                    Violation.Kind.OVERLAPPING_WORK,
                    a.resource(),
                    describe(a) + " overlaps " + describe(b)));
          }
        }
      }
    }
    for (WorkRecord piece : work) {
      LeaseRecord lease = byToken.get(piece.token() + "\u0000" + piece.resource());
      if (lease != null && piece.endNanos() - lease.validEndNanos() > 0) {
        violations.add(
            new Violation(
                Violation.Kind.WORK_AFTER_LEASE_ENDED,
                piece.resource(),
                describe(piece)
                    + " finished "
                    + millis(piece.endNanos() - lease.validEndNanos())
                    + " after its lease ended: "
                    + describe(lease)));
      }
    }
    return violations;
  }

  private static <T> Map<String, List<T>> groupBy(
      List<T> items, java.util.function.Function<T, String> key) {
    Map<String, List<T>> groups = new HashMap<>();
    for (T item : items) {
      groups.computeIfAbsent(key.apply(item), k -> new ArrayList<>()).add(item);
    }
    return groups;
  }

  private static String describe(LeaseRecord lease) {
    return "lease "
        + shortToken(lease.token())
        + " of "
        + lease.client()
        + " [valid for "
        + millis(lease.validEndNanos() - lease.grantedNanos())
        + (lease.lost() ? ", lost" : "")
        + "]";
  }

  private static String describe(WorkRecord work) {
    return "work of "
        + work.client()
        + " under "
        + shortToken(work.token())
        + " ("
        + millis(work.endNanos() - work.startNanos())
        + ")";
  }

  private static String shortToken(String token) {
    return token.length() > 8 ? token.substring(0, 8) : token;
  }

  private static String millis(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.1f ms", nanos / 1e6);
  }
}
