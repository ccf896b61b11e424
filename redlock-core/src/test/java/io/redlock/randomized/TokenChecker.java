package io.redlock.randomized;

import io.redlock.randomized.History.LeaseRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The property of fencing: successive holders of a resource get strictly increasing tokens.
 * Leases whose valid intervals are not empty do not overlap (the {@link OverlapChecker}
 * checks that), so ordering them by grant orders them as holders; each must carry a larger
 * token than every earlier one on a resource they share. A lease whose holder learned of it
 * only after its validity had ended (a paused client) held nothing and is left out.
 */
final class TokenChecker {
  private TokenChecker() {}

  /** Two successive holders of a resource whose tokens do not increase. */
  record Violation(String resource, LeaseRecord earlier, LeaseRecord later) {
    @Override
    public String toString() {
      return "resource '"
          + resource
          + "': token "
          + later.fencingToken
          + " not above "
          + earlier.fencingToken
          + " of an earlier holder (true time):\n    "
          + earlier
          + "\n    "
          + later;
    }
  }

  static List<Violation> check(List<LeaseRecord> leases) {
    List<LeaseRecord> held = new ArrayList<>();
    for (LeaseRecord lease : leases) {
      if (lease.granted < lease.end()) {
        held.add(lease);
      }
    }
    held.sort(Comparator.comparingLong(lease -> lease.granted));
    List<Violation> violations = new ArrayList<>();
    for (int i = 0; i < held.size(); i++) {
      LeaseRecord later = held.get(i);
      for (int j = 0; j < i; j++) {
        LeaseRecord earlier = held.get(j);
        if (later.fencingToken > earlier.fencingToken) {
          continue;
        }
        for (String resource : later.resources) {
          if (earlier.resources.contains(resource)) {
            violations.add(new Violation(resource, earlier, later));
            break;
          }
        }
      }
    }
    return violations;
  }
}
