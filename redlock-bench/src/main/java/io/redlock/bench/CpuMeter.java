package io.redlock.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
 *
 * <p>The JVM's time includes its JIT compiler threads, which keep compiling well after a short
 * warm-up, and compile more for a client with more code. Their share is sampled on its own
 * (from {@code /proc/self/task}, Linux only, {@code NaN} elsewhere), so that a report can
 * give what a cycle costs once compiled. A compiler thread that exits during a window takes
 * its time with it: the compiler's share is then undercounted, never overcounted.
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

  /** Clock ticks per second of {@code /proc}'s CPU times (USER_HZ, 100 on Linux). */
  private static final double TICKS_PER_SECOND = 100;

  private static final Path TASKS = Path.of("/proc/self/task");

  /**
   * CPU time so far, in nanoseconds: {@code [this JVM, the servers together, this JVM's JIT
   * compiler threads]}.
   */
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
    return new double[] {jvm, servers, compilerNanos()};
  }

  /** CPU time of this JVM's JIT compiler threads (named "C1/C2 CompilerThread..."). */
  private static double compilerNanos() {
    if (!Files.isDirectory(TASKS)) {
      return Double.NaN;
    }
    long ticks = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          if (!Files.readString(task.resolve("comm")).contains("CompilerThre")) {
            continue;
          }
          String stat = Files.readString(task.resolve("stat"));
          // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
          String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException exited) {
          // The thread ended between listing and reading: its time is gone with it.
        }
      }
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
    return ticks * (1e9 / TICKS_PER_SECOND);
  }
}
