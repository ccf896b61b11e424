package io.redlock.randomized;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of the Redlock algorithm (DESIGN §2–3): clients with their own
 * drifting clocks, message delays and losses, node crashes and empty restarts, client pauses,
 * all driven by one seed per schedule.
 *
 * <p><b>Property checked:</b> mutual exclusion within validity — on each resource, no two
 * leases are believed valid by their holders at the same true instant (see
 * {@link OverlapChecker}), as long as the declared assumptions hold: clock drift between any
 * client and any node within the drift factor, and the restart guard on.
 *
 * <p>Settings (system properties): {@code redlock.sim.seed} (base seed),
 * {@code redlock.sim.schedules} (how many safe schedules), {@code redlock.sim.replay} and
 * {@code redlock.sim.mode} (replay one schedule with its event log). A failure prints the
 * one command that replays it.
 */
class SimulationTest {
  private static final long BASE_SEED = Long.getLong("redlock.sim.seed", 20240601L);
  private static final int SCHEDULES = Integer.getInteger("redlock.sim.schedules", 100_000);

  /** Enough for the broken runs to show violations many times over (they do in 5–50%). */
  private static final int NON_VACUITY_SCHEDULES = 1_000;

  /** The control for the restart guard: the same restarts, more schedules. */
  private static final int CONTROL_SCHEDULES = 2_000;

  /**
   * Fast clocks, with and without the guard: their clients work longer, and with the guard on
   * they wait out a node's crash for want of a majority, so fewer schedules keep the run short.
   */
  private static final int FAST_CLOCK_SCHEDULES = 500;

  /** Fenced leases under every fault, as many schedules as the safe mode. */
  private static final int FENCED_SCHEDULES = SCHEDULES;

  @Test
  void manySchedulesWithinTheDeclaredBoundsKeepMutualExclusion() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.SAFE, BASE_SEED, SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
    assertThat(summary.schedules()).isEqualTo(SCHEDULES);
    assertThat(summary.commits()).as("the workload commits").isGreaterThan(SCHEDULES);
  }

  @Test
  void driftBeyondTheDeclaredBoundIsCaught() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.DRIFT_BEYOND_BOUND, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as("violations found with clocks 20% slow").isPositive();
    assertThat(summary.failures().get(0).violations()).isNotEmpty();
    System.out.println("first found:\n" + failureMessage(summary));
  }

  @Test
  void restartsWithoutTheRestartGuardAreCaught() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.RESTARTS_GUARD_OFF, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as("violations found with the guard off").isPositive();
    assertThat(summary.failures().get(0).violations()).isNotEmpty();
    System.out.println("first found:\n" + failureMessage(summary));
  }

  @Test
  void theSameRestartsWithTheRestartGuardKeepMutualExclusion() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.RESTARTS_GUARD_ON, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
  }

  @Test
  void aClusterDeclaredFreshIsHeldBackAgainOnceItsNodesRestartEmpty() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FRESH_MARKER_RESTARTS, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
  }

  @Test
  void aMarkerBoundToARestartedProcessLetsItCountAtOnceAndBreaksMutualExclusion() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(
            SimulationMode.INIT_FORCED_ON_A_USED_CLUSTER, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as("violations found after a forced init").isPositive();
    assertThat(summary.failures().get(0).violations()).isNotEmpty();
  }

  @Test
  void nodesThatPersistEveryWriteCountAtOnceAfterARestartAndKeepMutualExclusion() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.AOF_RESTARTS, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
  }

  @Test
  void nodesThatClaimPersistenceButRestartEmptyAreHeldBack() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.AOF_LOST_DIRECTORY, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
  }

  @Test
  void fencedLeasesGetStrictlyIncreasingTokensUnderEveryFault() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FENCED, BASE_SEED, FENCED_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
    assertThat(summary.commits()).as("the workload commits").isGreaterThan(FENCED_SCHEDULES);
  }

  @Test
  void fencingTokensThatAreNeverConfirmedRepeatAndAreCaught() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(
            SimulationMode.FENCED_WITHOUT_CONFIRMATION, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.tokenFailingSchedules()).as("repeated tokens found").isPositive();
    assertThat(summary.failures().get(0).tokenViolations()).isNotEmpty();
    System.out.println("first found:\n" + failureMessage(summary));
  }

  @Test
  void nodesThatLostTheirCountersTrustedAgainMakeTokensGoBackAndAreCaught() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FENCED_INIT_FORCED, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.tokenFailingSchedules()).as("schedules whose tokens went back").isPositive();
  }

  @Test
  void nodeClocksRunningFastWithoutTheRestartGuardAreCaught() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FAST_CLOCKS_GUARD_OFF, BASE_SEED, FAST_CLOCK_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as("violations found with 5% fast clocks").isPositive();
    assertThat(summary.failures().get(0).violations()).isNotEmpty();
    System.out.println("first found:\n" + failureMessage(summary));
  }

  @Test
  void nodesThatPersistEveryWriteKeepTheirCountersAcrossACrashAndTokensKeepIncreasing() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FENCED_AOF_RESTARTS, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
    assertThat(summary.commits()).as("the workload commits").isGreaterThan(CONTROL_SCHEDULES);
  }

  @Test
  void restoredCopiesForeignDataAndEvictedCountersNeverMakeTokensGoBack() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FENCED_HISTORY_FAULTS, BASE_SEED, CONTROL_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
    assertThat(summary.commits()).as("the workload commits").isGreaterThan(CONTROL_SCHEDULES);
  }

  @Test
  void countersTrustedOnceTheGuardCountsANodeAgainMakeTokensGoBackWithoutAnOverlap() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(
            SimulationMode.FENCED_COUNTERS_TRUSTED_ONCE_COUNTING, BASE_SEED, NON_VACUITY_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.tokenFailingSchedules()).as("schedules whose tokens went back").isPositive();
    // the guard kept mutual exclusion: what broke is fencing alone
    assertThat(summary.failures())
        .allSatisfy(failure -> assertThat(failure.violations()).isEmpty())
        .anySatisfy(failure -> assertThat(failure.tokenViolations()).isNotEmpty());
    System.out.println("first found:\n" + failureMessage(summary));
  }

  @Test
  void theSameFastClocksWithTheRestartGuardAreHeldBackAndKeepMutualExclusion() {
    SimulationRunner.Summary summary =
        SimulationRunner.run(SimulationMode.FAST_CLOCKS_GUARD_ON, BASE_SEED, FAST_CLOCK_SCHEDULES);
    System.out.println(summary.describe());
    assertThat(summary.failedSchedules()).as(failureMessage(summary)).isZero();
    assertThat(summary.commits())
        .as("the majority with good clocks grants leases")
        .isGreaterThan(FAST_CLOCK_SCHEDULES);
  }

  @Test
  void aSeedReplaysTheSameRun() {
    for (long index = 0; index < 20; index++) {
      long seed = SimulationRunner.seedOf(BASE_SEED, index);
      List<String> first = SimulationRun.run(SimulationMode.SAFE, seed, true).trace();
      List<String> second = SimulationRun.run(SimulationMode.SAFE, seed, true).trace();
      assertThat(second).isEqualTo(first);
    }
  }

  /** Replays one schedule with its event log: see the failure message of the tests above. */
  @Test
  void replay() {
    String seed = System.getProperty("redlock.sim.replay");
    Assumptions.assumeTrue(seed != null, "set -Dredlock.sim.replay=<seed> to replay a schedule");
    SimulationMode mode = SimulationMode.valueOf(System.getProperty("redlock.sim.mode", "SAFE"));
    QuietLogs.apply();
    SimulationRun.Outcome outcome = SimulationRun.run(mode, Long.parseLong(seed.trim()), true);
    System.out.println(outcome.schedule().describe());
    outcome.trace().forEach(line -> System.out.println("  " + line));
    System.out.println(outcome.report());
    assertThat(outcome.failed()).as(outcome.report()).isFalse();
  }

  static String replayCommand(SimulationMode mode, long seed) {
    return "./mvnw -B -o -f redlock-core/pom.xml test -Dtest=SimulationTest#replay"
        + " -Dredlock.sim.replay="
        + seed
        + (mode == SimulationMode.SAFE ? "" : " -Dredlock.sim.mode=" + mode);
  }

  private static String failureMessage(SimulationRunner.Summary summary) {
    if (summary.failures().isEmpty()) {
      return summary.describe();
    }
    SimulationRun.Outcome first = summary.failures().get(0);
    return summary.describe()
        + "\n"
        + first.report()
        + "\nreplay with: "
        + replayCommand(summary.mode(), first.schedule().seed());
  }
}
