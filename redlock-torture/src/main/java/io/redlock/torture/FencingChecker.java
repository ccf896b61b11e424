package io.redlock.torture;

import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides whether the fencing of a fenced torture run worked, from the leases as their clients
 * saw them and the fenced store's log of reads and writes.
 *
 * <p>It checks three things, none of which trusts the tokens to be right:
 *
 * <ul>
 *   <li>per resource, in the order the leases were granted, every lease's fencing token is
 *       larger than every earlier lease's ({@link Violation.Kind#FENCING_TOKEN_NOT_INCREASING});
 *   <li>every read or write that comes after a lease granted later has read the resource (it
 *       is <em>overtaken</em>: the paused holder overlaps its successor) is refused ({@link
 *       Violation.Kind#STALE_ACCESS_ACCEPTED});
 *   <li>no read or write is refused while its lease was still valid ({@link
 *       Violation.Kind#VALID_HOLDER_REFUSED}).
 * </ul>
 *
 * <p>"Later" is the grant order on the monotonic clock, which the tokens are meant to follow;
 * so a token sequence that goes back or repeats is reported even when the store refused
 * everything it should.
 *
 * <p>Stateless and thread-safe.
 */
final class FencingChecker {

  /**
   * What the checker found.
   *
   * @param violations every breach, in the order found
   * @param overtaken reads and writes that came after a later holder had read: the physical
   *     overlaps fencing must catch
   * @param staleRefused reads and writes refused after their lease's validity had ended
   */
  record Report(List<Violation> violations, long overtaken, long staleRefused) {
    Report {
      violations = List.copyOf(violations);
    }
  }

  private FencingChecker() {}

  static Report check(List<LeaseRecord> leases, List<FencedStore.Access> accesses) {
    List<Violation> violations = new ArrayList<>();
    Map<String, List<LeaseRecord>> byResource = new HashMap<>();
    Map<String, LeaseRecord> byLease = new HashMap<>();
    for (LeaseRecord lease : leases) {
      byResource.computeIfAbsent(lease.resource(), r -> new ArrayList<>()).add(lease);
      byLease.put(key(lease.resource(), lease.token()), lease);
    }
    for (List<LeaseRecord> group : byResource.values()) {
      group.sort(Comparator.comparingLong(LeaseRecord::grantedNanos));
      LeaseRecord highest = null;
      for (LeaseRecord lease : group) {
        if (lease.fencingToken() == 0) {
          continue; // unfenced: nothing to compare
        }
        if (highest != null && lease.fencingToken() <= highest.fencingToken()) {
          violations.add(
              new Violation(
                  Violation.Kind.FENCING_TOKEN_NOT_INCREASING,
                  lease.resource(),
                  lease.client()
                      + " was granted token "
                      + lease.fencingToken()
                      + " after "
                      + highest.client()
                      + " had been granted token "
                      + highest.fencingToken()));
        }
        if (highest == null || lease.fencingToken() > highest.fencingToken()) {
          highest = lease;
        }
      }
    }
    long overtaken = 0;
    long staleRefused = 0;
    Map<String, LeaseRecord> latestReader = new HashMap<>();
    for (FencedStore.Access access : accesses) {
      LeaseRecord lease = byLease.get(key(access.resource(), access.lease()));
      if (lease == null) {
        throw new IllegalArgumentException(
            "the store logged " + describe(access) + " under a lease the history does not have");
      }
      LeaseRecord reader = latestReader.get(access.resource());
      boolean isOvertaken =
          reader != null
              && !reader.token().equals(lease.token())
              && reader.grantedNanos() - lease.grantedNanos() > 0;
      if (isOvertaken) {
        overtaken++;
        if (access.accepted()) {
          violations.add(
              new Violation(
                  Violation.Kind.STALE_ACCESS_ACCEPTED,
                  access.resource(),
                  describe(access)
                      + " was taken after "
                      + reader.client()
                      + " (granted later, token "
                      + reader.fencingToken()
                      + ") had read it"));
        }
      }
      if (!access.accepted()) {
        if (access.nanos() - lease.validUntilNanos() < 0) {
          violations.add(
              new Violation(
                  Violation.Kind.VALID_HOLDER_REFUSED,
                  access.resource(),
                  describe(access)
                      + " was refused (store had seen token "
                      + access.seen()
                      + ") "
                      + (lease.validUntilNanos() - access.nanos()) / 1_000_000
                      + " ms before the lease's validity ended"));
        } else {
          staleRefused++;
        }
      } else if (!access.write()
          && (reader == null || lease.grantedNanos() - reader.grantedNanos() > 0)) {
        latestReader.put(access.resource(), lease);
      }
    }
    return new Report(violations, overtaken, staleRefused);
  }

  private static String key(String resource, String lease) {
    return resource + "\u0000" + lease;
  }

  private static String describe(FencedStore.Access access) {
    return (access.write() ? "a write" : "a read")
        + " by "
        + access.client()
        + " with token "
        + access.token();
  }
}
