package io.redlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The held-lease section says when an implementation could not take every lock: a
 * measurement that never happened is named, fails the target, and gets the floor line.
 */
class HeldReportTest {
  private static final HeldHarness.Options OPTIONS =
      HeldHarness.Options.parse(
          new String[] {"--held", "1000,100000", "--impls", "redlock,redisson-redlock-same-rate"});

  @Test
  void aMeasurementThatCouldNotTakeEveryLockIsNamedAndFailsItsTarget() {
    String reason =
        "lock 87,635 of 100,000 could not be acquired: LockUnavailableException: a majority"
            + " (3 of 5) was not reached | 11 attempts";
    String section =
        report(List.of(new HeldHarness.NotHeld(HeldLocks.REDLOCK, 100_000, 1, reason))).section();

    assertThat(section)
        .contains(
            "Not measured: `redlock` could not hold 100,000 in round 2, and its client ended:"
                + " lock 87,635 of 100,000 could not be acquired")
        .contains("reached \\| 11 attempts")
        .contains(
            "| measurements in which redlock could not take every lease, every size | = 0 | 1 |"
                + " **not met** |")
        .contains("Floor at 100,000 held: at 1,000 held, with nothing lost");
  }

  @Test
  void everyLockTakenMeetsTheTargetAndNeedsNoFloor() {
    String section = report(List.of()).section();

    assertThat(section)
        .doesNotContain("Not measured:")
        .contains(
            "| measurements in which redlock could not take every lease, every size | = 0 | 0 |"
                + " met |")
        .doesNotContain("Floor at");
  }

  @Test
  void locksTakenBesideTheHeldOnesAreTabledAndJudgedAtTheLargestSize() {
    HeldHarness.Run slow =
        withBeside(run(HeldLocks.REDLOCK, 100_000, 0, 320, 940, 106_491), 30, 12);
    HeldHarness.Run quick = withBeside(run(HeldLocks.REDLOCK, 1_000, 0, 40, 20, 1_066), 4, 4);
    HeldReport report =
        new HeldReport(
            OPTIONS, List.of(quick, slow), List.of(), "0.5", Instant.EPOCH, 1.0, "6.2.11");

    assertThat(report.section())
        .contains("| 100,000 | redlock | 0.30 | 30.0 | 60.0 | 2 | 0.30 | 12.0 | 24.0 | 0 | 2.50× |")
        .contains("| 1,000 | redlock | 0.30 | 4.00 | 8.00 | 2 | 0.30 | 4.00 | 8.00 | 0 | 1.00× |")
        .contains(
            "| p99 of a lock taken beside 100,000 held, redlock, holding client / peer | ≤ 1.50 |"
                + " 2.50× | **not met** |");
  }

  @Test
  void withoutAttemptsBesideTheTargetIsNotMeasured() {
    assertThat(report(List.of()).section())
        .doesNotContain("Holding client p50")
        .contains("holding client / peer | ≤ 1.50 | – | not measured |");
  }

  @Test
  void eachTargetIsReadAgainstTheFloorOfTheSameRun() {
    HeldHarness.Options options =
        HeldHarness.Options.parse(
            new String[] {
              "--held", "100000", "--impls", "redlock,redisson-redlock-watchdog,lettuce-batch-floor"
            });
    List<HeldHarness.Run> runs =
        List.of(
            run(HeldLocks.REDLOCK, 100_000, 0, 320, 940, 106_000),
            run(HeldLocks.REDISSON_REDLOCK, 100_000, 0, 220, 259, 20_000),
            run(HeldLocks.FLOOR, 100_000, 0, 150, 900, 100_000));
    String section =
        new HeldReport(options, runs, List.of(), "0.5", Instant.EPOCH, 1.0, "6.2.11").section();

    assertThat(section)
        .contains(
            "| client CPU per second at 100,000 held, / redisson-redlock-watchdog | ≤ 1.00 |"
                + " 0.682× | 2.13× | **the floor meets the bound: the library's own cost** |")
        .contains(
            "| server CPU per second at 100,000 held, / redisson-redlock-watchdog | ≤ 1.00 |"
                + " 3.47× | 1.04× | the floor misses the bound too |")
        .contains(
            "| client CPU per lease extension at 100,000 held, / redisson-redlock-watchdog |"
                + " ≤ 0.20 | 0.136× | 2.01× | **the floor meets the bound")
        .doesNotContain("heap per held lock at 100,000 held, / ");
  }

  /** {@code run} with 2,000 attempts each side, p50 0.3 ms, the longest twice the p99. */
  private static HeldHarness.Run withBeside(
      HeldHarness.Run run, double holdingP99, double peerP99) {
    return new HeldHarness.Run(
        run.impl(),
        run.held(),
        run.round(),
        run.nodes(),
        run.clientCpuMsPerSecond(),
        run.serverCpuMsPerSecond(),
        run.scriptsPerSecondPerNode(),
        run.commandsPerSecondPerNode(),
        run.extensionsPerSecondPerNode(),
        run.heapBytesPerLock(),
        run.expiredKeys(),
        run.lost(),
        run.acquireSeconds(),
        new HeldClient.Beside(attempts(holdingP99, 2), attempts(peerP99, 0)));
  }

  private static HeldClient.Attempts attempts(double p99Millis, int failed) {
    long p99 = (long) (p99Millis * 1e6);
    return new HeldClient.Attempts(300_000, p99, 2 * p99, failed, 2_000);
  }

  private static HeldReport report(List<HeldHarness.NotHeld> notHeld) {
    List<HeldHarness.Run> runs =
        List.of(
            run(HeldLocks.REDLOCK, 1_000, 0, 40, 20, 1_066),
            run("redisson-redlock-same-rate", 1_000, 0, 50, 30, 1_980),
            run(HeldLocks.REDLOCK, 1_000, 1, 42, 18, 1_067),
            run("redisson-redlock-same-rate", 1_000, 1, 70, 34, 1_980),
            run(HeldLocks.REDLOCK, 100_000, 0, 320, 940, 106_491),
            run("redisson-redlock-same-rate", 100_000, 0, 610, 812, 61_190),
            run("redisson-redlock-same-rate", 100_000, 1, 320, 426, 30_323));
    return new HeldReport(OPTIONS, runs, notHeld, "0.5 0.5 0.5", Instant.EPOCH, 25.0, "6.2.11");
  }

  private static HeldHarness.Run run(
      String impl, int held, int round, double client, double servers, double extensions) {
    return new HeldHarness.Run(
        impl,
        held,
        round,
        5,
        client,
        servers,
        extensions / 1_000,
        extensions * 2,
        extensions,
        500,
        0,
        impl.equals(HeldLocks.REDLOCK) ? 0 : -1,
        1.0,
        null);
  }
}
