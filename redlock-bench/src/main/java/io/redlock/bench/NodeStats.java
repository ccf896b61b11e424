package io.redlock.bench;

import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What one Redis server has done so far, as the held-lease scenario compares it between two
 * moments: its process's CPU time (from {@code /proc/<pid>/stat}), its command counts ({@code
 * INFO commandstats}: every command, also those a script runs) and the keys it expired
 * ({@code expired_keys}).
 *
 * <p>Each sample is one {@code AUTH} and one {@code INFO all} on a connection of its own
 * ({@link RedisServers#command}); {@link #since} takes the harness's own commands out.
 *
 * @param cpuNanos the process's user + system CPU time
 * @param calls calls per command name ({@code eval}, {@code get}, ...)
 * @param expiredKeys keys the server expired since it started
 */
record NodeStats(double cpuNanos, Map<String, Long> calls, long expiredKeys) {

  /** Clock ticks per second of {@code /proc}'s CPU times (USER_HZ, 100 on Linux). */
  private static final double TICKS_PER_SECOND = 100;

  /** Samples server {@code i} of {@code servers}. */
  static NodeStats sample(RedisServers servers, int i) {
    double cpu = cpuNanos(servers.pid(i));
    String info = String.valueOf(servers.command(i, "INFO", "all"));
    Map<String, Long> calls = new HashMap<>();
    long expired = 0;
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("cmdstat_")) {
        String name = line.substring("cmdstat_".length(), line.indexOf(':'));
        int at = line.indexOf("calls=") + "calls=".length();
        int comma = line.indexOf(',', at);
        calls.put(name, Long.parseLong(line.substring(at, comma < 0 ? line.length() : comma)));
      } else if (line.startsWith("expired_keys:")) {
        expired = Long.parseLong(line.substring("expired_keys:".length()).trim());
      }
    }
    return new NodeStats(cpu, Map.copyOf(calls), expired);
  }

  /**
   * CPU time of process {@code pid} from {@code /proc/<pid>/stat} (utime + stime), or from
   * {@link ProcessHandle} where there is no {@code /proc}; {@code NaN} if neither can tell.
   */
  static double cpuNanos(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    if (Files.isReadable(stat)) {
      try {
        String text = Files.readString(stat);
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        return ticks * (1e9 / TICKS_PER_SECOND);
      } catch (IOException | RuntimeException e) {
        // fall back below
      }
    }
    return ProcessHandle.of(pid)
        .flatMap(process -> process.info().totalCpuDuration())
        .map(d -> (double) d.toNanos())
        .orElse(Double.NaN);
  }

  /** Calls of {@code command} between {@code earlier} and this sample. */
  long calls(NodeStats earlier, String command) {
    return calls.getOrDefault(command, 0L) - earlier.calls.getOrDefault(command, 0L);
  }

  /**
   * Every command the server ran between {@code earlier} and this sample, those scripts ran
   * included, without the harness's own: the {@code INFO} of {@code earlier} and the {@code
   * AUTH} of this one (an {@code INFO} reply counts the commands before it, not itself).
   */
  long commandsSince(NodeStats earlier) {
    long total = 0;
    for (Map.Entry<String, Long> e : calls.entrySet()) {
      total += e.getValue() - earlier.calls.getOrDefault(e.getKey(), 0L);
    }
    return total - 2;
  }

  /** Scripts run ({@code EVAL} and {@code EVALSHA}) between {@code earlier} and this sample. */
  long scriptsSince(NodeStats earlier) {
    return calls(earlier, "eval") + calls(earlier, "evalsha");
  }
}
