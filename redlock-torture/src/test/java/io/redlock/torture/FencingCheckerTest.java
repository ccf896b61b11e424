package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fencing checker reports broken tokens and a broken store, and passes a sound run. */
class FencingCheckerTest {

  private static final long MS = 1_000_000;

  /** A lease on "r" granted at {@code from} ms, valid until {@code until} ms, with a token. */
  private static LeaseRecord lease(String client, long from, long until, long token) {
    return new LeaseRecord(
        client, "r", "lease-" + client, from * MS, until * MS, until * MS, false, token);
  }

  private static FencedStore.Access read(
      String client, long at, long token, long seen, boolean accepted) {
    return new FencedStore.Access(
        at * MS, client, "r", "lease-" + client, token, seen, false, accepted);
  }

  private static FencedStore.Access write(
      String client, long at, long token, long seen, boolean accepted) {
    return new FencedStore.Access(
        at * MS, client, "r", "lease-" + client, token, seen, true, accepted);
  }

  @Test
  void aPausedHolderOvertakenAndRefusedIsNoViolation() {
    // a reads, pauses past its lease; b is granted, reads and writes; a's write is refused.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 1), lease("b", 120, 220, 2)),
            List.of(
                read("a", 10, 1, 0, true),
                read("b", 130, 2, 1, true),
                write("b", 140, 2, 2, true),
                write("a", 150, 1, 2, false)));
    assertThat(report.violations()).isEmpty();
    assertThat(report.overtaken()).isEqualTo(1);
    assertThat(report.staleRefused()).isEqualTo(1);
  }

  @Test
  void aTokenThatGoesBackIsAViolationEvenWhenTheStoreRefusedNothingWrongly() {
    // b is granted after a but with a lower token: it never gets to use the resource.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 5), lease("b", 120, 220, 3)),
            List.of(read("a", 10, 5, 0, true), write("a", 20, 5, 5, true)));
    assertThat(report.violations())
        .extracting(Violation::kind)
        .containsExactly(Violation.Kind.FENCING_TOKEN_NOT_INCREASING);
    assertThat(report.violations().get(0).description())
        .contains("b was granted token 3 after a had been granted token 5");
  }

  @Test
  void aRepeatedTokenIsAViolation() {
    // A fencing token that is always 1, say.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 1), lease("b", 120, 220, 1), lease("c", 240, 340, 1)),
            List.of());
    assertThat(report.violations())
        .extracting(Violation::kind)
        .containsExactly(
            Violation.Kind.FENCING_TOKEN_NOT_INCREASING,
            Violation.Kind.FENCING_TOKEN_NOT_INCREASING);
  }

  @Test
  void aValidHolderRefusedIsAViolation() {
    // The same constant token seen by the store: b's read is refused while b is valid.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 1), lease("b", 120, 220, 1)),
            List.of(
                read("a", 10, 1, 0, true),
                write("a", 20, 1, 1, true),
                read("b", 130, 1, 1, false)));
    assertThat(report.violations())
        .extracting(Violation::kind)
        .contains(Violation.Kind.VALID_HOLDER_REFUSED);
    assertThat(report.staleRefused()).isZero();
  }

  @Test
  void aStaleWriteTheStoreTookIsAViolation() {
    // A store that does not check the token on writes lets a's stale write through.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 1), lease("b", 120, 220, 2)),
            List.of(
                read("a", 10, 1, 0, true),
                read("b", 130, 2, 1, true),
                write("a", 150, 1, 2, true),
                write("b", 160, 2, 2, true)));
    assertThat(report.violations())
        .extracting(Violation::kind)
        .containsExactly(Violation.Kind.STALE_ACCESS_ACCEPTED);
    assertThat(report.overtaken()).isEqualTo(1);
  }

  @Test
  void aLateWriteWithNoSuccessorReadYetIsNotOvertaken() {
    // a writes after its lease ended, but b, granted, has not read yet: b reads a's update.
    FencingChecker.Report report =
        FencingChecker.check(
            List.of(lease("a", 0, 100, 1), lease("b", 120, 220, 2)),
            List.of(
                read("a", 10, 1, 0, true),
                write("a", 125, 1, 1, true),
                read("b", 130, 2, 1, true),
                write("b", 140, 2, 2, true)));
    assertThat(report.violations()).isEmpty();
    assertThat(report.overtaken()).isZero();
  }
}
