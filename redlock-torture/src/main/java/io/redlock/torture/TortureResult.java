package io.redlock.torture;

import io.redlock.testkit.History;
import io.redlock.testkit.Violation;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a torture run did and what the checker found.
 *
 * @param options the run's options
 * @param elapsed how long the clients ran
 * @param attempts acquisitions tried
 * @param acquisitions leases granted
 * @param lostBeforeWrite leases the client found invalid at its check, and so did not use
 * @param failures failed acquisitions, by cause
 * @param faults every fault injected, in order
 * @param history every lease and every piece of work
 * @param violations what the checker found; empty for a safe run
 * @param fenced with fencing, what the fenced store took, refused and lost; else null
 * @param heap the clients' heap, when they ran in the runner's JVM; else null
 */
public record TortureResult(
    TortureOptions options,
    Duration elapsed,
    long attempts,
    long acquisitions,
    long lostBeforeWrite,
    Map<String, Long> failures,
    List<FaultRecord> faults,
    History history,
    List<Violation> violations,
    Fenced fenced,
    ClientHeap heap) {

  /**
   * The heap of the JVM the clients ran in, in MiB: what a stalled node costs them shows here.
   *
   * @param startMiB in use after a full GC, before the clients started
   * @param mostMiB the most in use at a once-a-second sample during the run (garbage included)
   * @param endMiB in use after a full GC, once the clients stopped (their Redlocks still open)
   */
  public record ClientHeap(double startMiB, double mostMiB, double endMiB) {}

  /**
   * What the fenced store of a fenced run saw.
   *
   * @param committed updates the store took
   * @param overtaken reads and writes a holder tried after a holder granted later had read the
   *     resource: the physical overlaps fencing must catch (each one refused, or it is a
   *     violation)
   * @param lateAlone writes the store took after their lease had ended, because no later
   *     holder had read since: safe, and not counted as violations in a fenced run
   * @param lostUpdates updates the clients committed that are missing from the store's numbers;
   *     0 when every stale write was refused
   * @param refusals each refused read or write
   */
  public record Fenced(
      long committed, long overtaken, long lateAlone, long lostUpdates, List<Refusal> refusals) {
    public Fenced {
      refusals = List.copyOf(refusals);
    }

    /** Reads and writes the store refused because their token was stale: {@code refusals}. */
    public long refused() {
      return refusals.size();
    }
  }

  /**
   * A read or write the fenced store refused.
   *
   * @param nanos when, on the runner's monotonic clock
   * @param client the client that tried
   * @param resource what it tried to read or write
   * @param token its fencing token
   * @param seen the token the store had seen, at least as large
   */
  public record Refusal(long nanos, String client, String resource, long token, long seen) {}

  /** Faults injected, by kind (a fault with a start and an end counts once). */
  public Map<Fault, Integer> faultCounts() {
    Map<Fault, Integer> counts = new EnumMap<>(Fault.class);
    for (FaultRecord fault : faults) {
      if (!fault.phase().equals("end")) {
        counts.merge(fault.fault(), 1, Integer::sum);
      }
    }
    return counts;
  }

  /**
   * How many leases were granted a fencing token no larger than one granted before them on
   * the same resource: the failure fencing exists to prevent; 0 in a safe run.
   */
  public long tokenRegressions() {
    return violations.stream()
        .filter(v -> v.kind() == Violation.Kind.FENCING_TOKEN_NOT_INCREASING)
        .count();
  }

  /** The summary a person reads at the end of a run. */
  public String summary() {
    StringBuilder text = new StringBuilder();
    text.append(String.format(Locale.ROOT, "%-34s %d%n", "attempts", attempts));
    text.append(String.format(Locale.ROOT, "%-34s %d%n", "acquisitions", acquisitions));
    text.append(
        String.format(
            Locale.ROOT, "%-34s %d%n", "leases lost before their write", lostBeforeWrite));
    failures.forEach(
        (cause, count) ->
            text.append(String.format(Locale.ROOT, "%-34s %d%n", "failed: " + cause, count)));
    faultCounts()
        .forEach(
            (fault, count) ->
                text.append(String.format(Locale.ROOT, "%-34s %d%n", "fault: " + fault, count)));
    if (fenced != null) {
      text.append(
          String.format(Locale.ROOT, "%-34s %d%n", "fenced writes committed", fenced.committed()));
      text.append(
          String.format(Locale.ROOT, "%-34s %d%n", "stale writes refused", fenced.refused()));
      text.append(
          String.format(
              Locale.ROOT, "%-34s %d%n", "reads/writes after successor read", fenced.overtaken()));
      text.append(
          String.format(
              Locale.ROOT, "%-34s %d%n", "late writes, no successor yet", fenced.lateAlone()));
      text.append(String.format(Locale.ROOT, "%-34s %d%n", "lost updates", fenced.lostUpdates()));
      text.append(
          String.format(
              Locale.ROOT, "%-34s %d%n", "fencing token regressions", tokenRegressions()));
    }
    if (heap != null) {
      text.append(
          String.format(
              Locale.ROOT,
              "%-34s %.1f / %.1f / %.1f MiB%n",
              "client heap: start / most / end",
              heap.startMiB(),
              heap.mostMiB(),
              heap.endMiB()));
    } else {
      text.append(
          String.format(
              Locale.ROOT, "%-34s %s%n", "client heap", "not measured (client processes)"));
    }
    text.append(String.format(Locale.ROOT, "%-34s %d%n", "violations", violations.size()));
    for (Violation violation : violations.subList(0, Math.min(10, violations.size()))) {
      text.append("  ").append(violation).append(System.lineSeparator());
    }
    return text.toString();
  }
}
