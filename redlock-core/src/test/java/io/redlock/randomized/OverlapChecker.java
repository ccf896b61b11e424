package io.redlock.randomized;

import io.redlock.randomized.History.LeaseRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * The property: mutual exclusion within validity. For each resource, the intervals during
 * which holders believed they held it — from the grant to the earlier of the validity end (by
 * the holder's own clock, converted to true time) and the release — must not overlap in true
 * time between two different leases. Commits happen only inside such intervals, so no two
 * commits of different leases can overlap either.
 */
final class OverlapChecker {
  private OverlapChecker() {}

  /** Two leases on one resource whose valid intervals overlap. */
  record Violation(String resource, LeaseRecord first, LeaseRecord second) {
    @Override
    public String toString() {
      return "resource '"
          + resource
          + "' held by two leases at once (true time):\n    "
          + first
          + "\n    "
          + second;
    }
  }

  static List<Violation> check(List<LeaseRecord> leases) {
    List<Violation> violations = new ArrayList<>();
    for (int i = 0; i < leases.size(); i++) {
      LeaseRecord a = leases.get(i);
      for (int j = i + 1; j < leases.size(); j++) {
        LeaseRecord b = leases.get(j);
        if (a.granted < b.end() && b.granted < a.end()) {
          for (String resource : a.resources) {
            if (b.resources.contains(resource)) {
              violations.add(new Violation(resource, a, b));
              break;
            }
          }
        }
      }
    }
    return violations;
  }
}
