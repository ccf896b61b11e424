package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SafetyCheckerTest {

  private static final long MS = 1_000_000L;

  private static LeaseRecord lease(
      String client, String token, long from, long validUntil, long ended) {
    return new LeaseRecord(client, "r", token, from * MS, validUntil * MS, ended * MS, false);
  }

  @Test
  void leasesOneAfterTheOtherAreSafe() {
    History history = new History();
    history.lease(lease("a", "t1", 0, 100, 50));
    history.lease(lease("b", "t2", 50, 150, 120));
    history.work(new WorkRecord("a", "r", "t1", 10 * MS, 40 * MS));
    history.work(new WorkRecord("b", "r", "t2", 60 * MS, 110 * MS));
    assertThat(SafetyChecker.check(history)).isEmpty();
  }

  @Test
  void overlappingValidIntervalsAreReported() {
    History history = new History();
    history.lease(lease("a", "t1", 0, 100, 200)); // valid until 100, released at 200
    history.lease(lease("b", "t2", 90, 190, 150));
    List<Violation> found = SafetyChecker.check(history);
    assertThat(found)
        .extracting(Violation::kind)
        .containsExactly(Violation.Kind.OVERLAPPING_LEASES);
    assertThat(found.get(0).description()).contains("a").contains("b");
  }

  @Test
  void aLeaseThatExpiredBeforeTheNextWasGrantedIsSafeEvenIfReleasedLater() {
    History history = new History();
    history.lease(lease("a", "t1", 0, 100, 300));
    history.lease(lease("b", "t2", 100, 200, 150));
    assertThat(SafetyChecker.check(history)).isEmpty();
  }

  @Test
  void workFinishedAfterItsLeaseEndedIsReported() {
    History history = new History();
    history.lease(lease("a", "t1", 0, 100, 100));
    history.work(new WorkRecord("a", "r", "t1", 90 * MS, 130 * MS)); // a GC pause
    assertThat(SafetyChecker.check(history))
        .extracting(Violation::kind)
        .containsExactly(Violation.Kind.WORK_AFTER_LEASE_ENDED);
  }

  @Test
  void overlappingWorkUnderDifferentLeasesIsReported() {
    History history = new History();
    history.lease(lease("a", "t1", 0, 100, 100));
    history.lease(lease("b", "t2", 100, 200, 200));
    history.work(new WorkRecord("a", "r", "t1", 90 * MS, 120 * MS));
    history.work(new WorkRecord("b", "r", "t2", 110 * MS, 130 * MS));
    assertThat(SafetyChecker.check(history))
        .extracting(Violation::kind)
        .containsExactlyInAnyOrder(
            Violation.Kind.OVERLAPPING_WORK, Violation.Kind.WORK_AFTER_LEASE_ENDED);
  }

  @Test
  void differentResourcesNeverConflict() {
    History history = new History();
    history.lease(new LeaseRecord("a", "r1", "t1", 0, 100 * MS, 100 * MS, false));
    history.lease(new LeaseRecord("b", "r2", "t2", 0, 100 * MS, 100 * MS, false));
    assertThat(SafetyChecker.check(history)).isEmpty();
  }
}
