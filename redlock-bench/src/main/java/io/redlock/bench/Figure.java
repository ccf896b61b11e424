package io.redlock.bench;

import org.HdrHistogram.Histogram;

/**
 * What one implementation did in one scenario in one round.
 *
 * @param p50Micros median acquire+release latency, µs
 * @param p99Micros 99th percentile, µs
 * @param p999Micros 99.9th percentile, µs
 * @param opsPerSecond completed acquire+release cycles per second of the measured window
 * @param count cycles measured
 * @param failures acquisitions that gave up (retry budget spent) or threw, in the window
 * @param violations times a second holder was inside the critical section (must be 0)
 * @param lostUpdates increments of the shared non-atomic counter that were lost (must be 0)
 * @param clientCpuMicros CPU time of the client process per measured cycle, µs ({@code NaN}
 *     when not measured)
 * @param serverCpuMicros CPU time of the Redis servers per measured cycle, µs
 * @param compilerCpuMicros CPU time of the client JVM's JIT compiler threads per measured cycle,
 *     µs, a part of {@code clientCpuMicros} ({@code NaN} when not measured)
 */
record Figure(
    double p50Micros,
    double p99Micros,
    double p999Micros,
    double opsPerSecond,
    long count,
    long failures,
    long violations,
    long lostUpdates,
    double clientCpuMicros,
    double serverCpuMicros,
    double compilerCpuMicros) {

  /**
   * The client's CPU per cycle without its JIT compiler: what a cycle costs once compiled
   * ({@code NaN} when either part is not measured).
   */
  double compiledClientCpuMicros() {
    // Off Linux the compiler's share is not measured: the whole JVM figure stands in for it.
    return Double.isNaN(compilerCpuMicros) ? clientCpuMicros : clientCpuMicros - compilerCpuMicros;
  }

  /**
   * @param cpuFrom {@link CpuMeter#sample()} at the start of the window
   * @param cpuTo the same at its end
   */
  static Figure of(
      Histogram nanos,
      double seconds,
      long failures,
      long violations,
      long lostUpdates,
      double[] cpuFrom,
      double[] cpuTo) {
    long count = nanos.getTotalCount();
    return new Figure(
        count == 0 ? Double.NaN : nanos.getValueAtPercentile(50) / 1000.0,
        count == 0 ? Double.NaN : nanos.getValueAtPercentile(99) / 1000.0,
        count == 0 ? Double.NaN : nanos.getValueAtPercentile(99.9) / 1000.0,
        count / seconds,
        count,
        failures,
        violations,
        lostUpdates,
        count == 0 ? Double.NaN : (cpuTo[0] - cpuFrom[0]) / count / 1000.0,
        count == 0 ? Double.NaN : (cpuTo[1] - cpuFrom[1]) / count / 1000.0,
        count == 0 ? Double.NaN : (cpuTo[2] - cpuFrom[2]) / count / 1000.0);
  }
}
