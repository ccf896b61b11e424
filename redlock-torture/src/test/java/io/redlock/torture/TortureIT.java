package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.testkit.Violation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checker is shown to work: over the same fault schedules, the safe configuration shows no
 * violation, and configurations known to be unsafe show violations the checker reports.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TortureIT {

  private static TortureResult run(TortureOptions options) throws InterruptedException {
    TortureResult result = TortureRun.run(options, progress -> {});
    System.out.println(options + System.lineSeparator() + result.summary());
    return result;
  }

  @Test
  void everyFaultWithTheRestartGuardOnKeepsMutualExclusion() throws Exception {
    TortureResult result =
        run(
            TortureOptions.builder()
                .nodes(5)
                .clients(4)
                .resources(2)
                .duration(Duration.ofSeconds(20))
                .ttl(Duration.ofSeconds(2))
                .work(Duration.ofMillis(50))
                .faultInterval(Duration.ofMillis(1_200))
                .seed(11)
                .faults(
                    EnumSet.of(
                        Fault.KILL,
                        Fault.RESTART_EMPTY,
                        Fault.PAUSE,
                        Fault.SLOW_COMMAND,
                        Fault.PARTITION,
                        Fault.LATENCY,
                        Fault.BLACKHOLE,
                        Fault.CLIENT_PAUSE))
                .build());
    assertThat(result.violations()).isEmpty();
    assertThat(result.acquisitions()).isPositive();
    assertThat(result.faultCounts().keySet().size()).isGreaterThanOrEqualTo(4);

    Path dir = Files.createDirectories(Path.of("target", "torture"));
    HistoryJson.write(result, dir.resolve("safe.json"));
    TimelineReport.write(result, dir.resolve("safe.html"));
    assertThat(Files.readString(dir.resolve("safe.json")))
        .contains("\"leases\"", "\"faults\"", "\"violations\": [");
    assertThat(Files.readString(dir.resolve("safe.html")))
        .contains("<svg", "0 violations", "node 4", "client-3");
  }

  @Test
  void clientsInSeveralProcessesKeepMutualExclusion() throws Exception {
    TortureResult result =
        run(
            TortureOptions.builder()
                .nodes(5)
                .clients(4)
                .processes(2)
                .resources(1)
                .duration(Duration.ofSeconds(12))
                .ttl(Duration.ofSeconds(2))
                .work(Duration.ofMillis(50))
                .faultInterval(Duration.ofMillis(1_000))
                .seed(31)
                .faults(
                    EnumSet.of(
                        Fault.KILL,
                        Fault.RESTART_EMPTY,
                        Fault.PAUSE,
                        Fault.PARTITION,
                        Fault.CLIENT_PAUSE))
                .build());
    assertThat(result.violations()).isEmpty();
    assertThat(result.history().leases())
        .extracting(lease -> lease.client().substring(0, 2))
        .contains("p0", "p1");
    assertThat(result.acquisitions()).isPositive();
  }

  private static TortureOptions.Builder majorityRestarts() {
    return TortureOptions.builder()
        .nodes(3)
        .clients(2)
        .resources(1)
        .duration(Duration.ofSeconds(12))
        .ttl(Duration.ofSeconds(3))
        .work(Duration.ofMillis(1_500))
        .faultInterval(Duration.ofMillis(1_500))
        .seed(23)
        .faults(EnumSet.of(Fault.MAJORITY_RESTART));
  }

  @Test
  void aMajorityRestartedEmptyWithoutTheGuardLetsTwoClientsHoldOneLock() throws Exception {
    TortureResult result = run(majorityRestarts().restartGuard(false).build());
    assertThat(result.faultCounts().get(Fault.MAJORITY_RESTART)).isPositive();
    assertThat(result.violations())
        .extracting(Violation::kind)
        .contains(Violation.Kind.OVERLAPPING_LEASES);
    Path dir = Files.createDirectories(Path.of("target", "torture"));
    TimelineReport.write(result, dir.resolve("unsafe-majority-restart.html"));
  }

  @Test
  void theSameRestartsWithTheGuardOnKeepMutualExclusion() throws Exception {
    TortureResult result = run(majorityRestarts().restartGuard(true).build());
    assertThat(result.faultCounts().get(Fault.MAJORITY_RESTART)).isPositive();
    assertThat(result.violations()).isEmpty();
    // Safe, and not by refusing everything: the restarted nodes counted again once their
    // window had passed, and leases were granted after the first restart.
    long firstRestart =
        result.faults().stream()
            .filter(fault -> fault.fault() == Fault.MAJORITY_RESTART)
            .mapToLong(FaultRecord::nanos)
            .min()
            .orElseThrow();
    assertThat(result.history().leases())
        .as("leases granted after the first majority restart")
        .anySatisfy(lease -> assertThat(lease.grantedNanos()).isGreaterThan(firstRestart));
  }

  @Test
  void fencingTokensNeverGoBackThroughRestoredBackupsAndEvictions() throws Exception {
    // The events of a node's history that once handed a later holder a smaller token: a node
    // restarted on an old copy of its data (AOF on, so it looks durable), keys and counters
    // evicted and the policy set back, and restarts empty. The guard must keep such a node out
    // of fencing; the checker fails the run for any token that does not increase.
    TortureResult result =
        run(
            TortureOptions.builder()
                .nodes(3)
                .clients(3)
                .resources(1)
                .duration(Duration.ofSeconds(20))
                .ttl(Duration.ofSeconds(2))
                .work(Duration.ofMillis(50))
                .faultInterval(Duration.ofMillis(1_500))
                .seed(41)
                .persistence(true)
                .fencing(true)
                .faults(EnumSet.of(Fault.RESTORE_BACKUP, Fault.EVICTION, Fault.RESTART_EMPTY))
                .build());
    assertThat(result.faultCounts()).containsKeys(Fault.RESTORE_BACKUP, Fault.EVICTION);
    assertThat(result.tokenRegressions()).isZero();
    assertThat(result.violations()).isEmpty();
    assertThat(result.summary()).contains("fencing token regressions          0");
    long firstFault = result.faults().stream().mapToLong(FaultRecord::nanos).min().orElseThrow();
    // Not safe by refusing everything: fenced leases were granted after the first fault.
    assertThat(result.history().leases())
        .filteredOn(lease -> lease.fencingToken() > 0)
        .anySatisfy(lease -> assertThat(lease.grantedNanos()).isGreaterThan(firstFault));
  }

  /** Two clients on one resource, paused now and then between their check and their write. */
  private static TortureOptions.Builder pausedBetweenCheckAndWrite() {
    return TortureOptions.builder()
        .nodes(3)
        .clients(2)
        .resources(1)
        .duration(Duration.ofSeconds(8))
        .ttl(Duration.ofSeconds(1))
        .work(Duration.ofMillis(20))
        .faultInterval(Duration.ofSeconds(1))
        .seed(5)
        .faults(EnumSet.of(Fault.CLIENT_PAUSE))
        .pauseBetweenCheckAndWrite(true);
  }

  @Test
  void aClientPausedBetweenItsCheckAndItsWriteIsCaught() throws Exception {
    TortureResult result = run(pausedBetweenCheckAndWrite().build());
    assertThat(result.violations())
        .extracting(Violation::kind)
        .contains(Violation.Kind.WORK_AFTER_LEASE_ENDED);
  }

  @Test
  void withFencingTheStoreRefusesThePausedClientsStaleWritesAndLosesNoUpdate() throws Exception {
    TortureResult result = run(pausedBetweenCheckAndWrite().fencing(true).build());
    // The same pauses as above: leases still overlap in time, but the store is what a stale
    // holder writes to, and it refuses every write whose token a successor has overtaken.
    // The fencing checker (in the violations) holds the tokens to the grant order, and fails
    // the run for a stale access taken or a valid holder refused.
    assertThat(result.fenced().overtaken())
        .as("paused holders that wrote after a successor had read")
        .isPositive();
    assertThat(result.fenced().refused()).as("stale writes refused").isPositive();
    assertThat(result.fenced().committed()).isPositive();
    assertThat(result.fenced().lostUpdates()).isZero();
    assertThat(result.violations()).isEmpty();
    assertThat(result.history().leases())
        .allSatisfy(lease -> assertThat(lease.fencingToken()).isPositive());
  }
}
