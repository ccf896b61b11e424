package io.redlock.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * CPU time used so far by this JVM (the clients under test, and the harness) and by the Redis
 * servers they talk to. On a machine where both share a few cores, CPU per cycle is what
 * bounds throughput: with the cores saturated, cycles per second are about the cores' time
 * divided by the CPU one cycle costs.
 *
 * <p>The servers' time comes from {@link ProcessHandle.Info#totalCpuDuration()} (clock-tick
 * resolution, 10 ms on Linux); a value that cannot be read makes the sample {@code NaN}.
 */
final class CpuMeter {
  private final com.sun.management.OperatingSystemMXBean os;
  private final List<Long> serverPids;

  CpuMeter(List<Long> serverPids) {
    this.os =
        ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean bean
            ? bean
            : null;
    this.serverPids = List.copyOf(serverPids);
  }

  /** CPU time so far, in nanoseconds: {@code [this JVM, the servers together]}. */
  double[] sample() {
    double jvm = os == null ? Double.NaN : os.getProcessCpuTime();
    if (jvm < 0) {
      jvm = Double.NaN;
    }
    double servers = 0;
    for (long pid : serverPids) {
      Optional<Duration> cpu =
          ProcessHandle.of(pid).flatMap(process -> process.info().totalCpuDuration());
      servers += cpu.map(d -> (double) d.toNanos()).orElse(Double.NaN);
    }
    return new double[] {jvm, servers};
  }
}
