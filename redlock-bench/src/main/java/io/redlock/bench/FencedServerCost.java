package io.redlock.bench;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where the servers' time goes in a lease cycle, fenced against unfenced: 64 threads acquire
 * and release resources of their own on five local nodes (declared fresh, restart guard on),
 * one client after the other, and each node's {@code INFO commandstats} is read at the start
 * and the end of a measured window. Printed per cycle, summed over the five nodes: the calls
 * and the microseconds of each command, the commands that scripts run included (a script's own
 * figure includes the time of the commands it runs), and the servers' CPU time from {@code
 * /proc}. A profile, not a benchmark of record: run it alone on a quiet machine.
 *
 * <p>The clients: {@code redlock}, {@code redlock-fenced} and the fenced floor {@code
 * lettuce-fenced-fanout} ({@link FencedFloor}: the same scripts from raw Lettuce). With a
 * client's name as the second argument, only that client runs: a profiler attached to the JVM
 * then sees one path alone.
 *
 * <pre>{@code
 * java -cp redlock-bench/target/benchmarks.jar io.redlock.bench.FencedServerCost \
 *     [window-seconds [client [warm-up-seconds]]]
 * }</pre>
 */
final class FencedServerCost {
  private FencedServerCost() {}

  private static final int THREADS = 64;

  public static void main(String[] args) throws Exception {
    Duration window = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 10);
    String only = args.length > 1 ? args[1] : null;
    Duration warmup = Duration.ofSeconds(args.length > 2 ? Long.parseLong(args[2]) : 3);
    List<String> names =
        List.of(Results.OURS, LoadHarness.REDLOCK_FENCED, PathsHarness.LETTUCE_FENCED_FANOUT);
    if (only != null && !names.contains(only)) {
      throw new IllegalArgumentException(
          "client: expected one of " + String.join(", ", names) + ", got '" + only + "'");
    }
    try (RedisServers servers = RedisServers.start(5)) {
      if (!Redlock.init(config(servers), true).complete()) {
        throw new IllegalStateException("could not declare the servers fresh");
      }
      // Declared once, here: the clients below must not declare them again (see Adapters).
      System.setProperty(Adapters.DECLARED, "true");
      Adapters.Retry retry =
          new Adapters.Retry(Duration.ofMillis(2), Duration.ofMillis(1), Duration.ofSeconds(10));
      // A client of this library beside them, as in production: its restart guard's probes
      // admit the nodes in their records, which the floor's lock script checks (it probes
      // nothing itself), and keep the records current; the first lease waits for them.
      try (Redlock guard = Redlock.create(config(servers))) {
        guard.acquire("bench:cost:admitted", Adapters.TTL).close();
        for (String name : only == null ? names : List.of(only)) {
          try (LockUnderTest client = Adapters.create(name, servers.uris(), retry)) {
            System.out.print(profile(name, client, servers, window, warmup));
          }
        }
      }
    }
  }

  private static RedlockConfig config(RedisServers servers) {
    return RedlockConfig.builder()
        .nodes(servers.uris())
        .ttl(Adapters.TTL)
        .retryCount(1_000_000)
        .retryDelay(Duration.ofMillis(2))
        .retryJitter(Duration.ofMillis(1))
        .maxWait(Duration.ofSeconds(10))
        .build();
  }

  private static String profile(
      String name, LockUnderTest client, RedisServers servers, Duration window, Duration warmup)
      throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong cycles = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      String resource = "bench:cost:" + name + ":" + t;
      Thread worker =
          new Thread(
              () -> {
                while (!stop.get()) {
                  try (AutoCloseable held = client.lock(resource)) {
                    (held == null ? failures : cycles).incrementAndGet();
                  } catch (Exception e) {
                    if (failures.getAndIncrement() == 0) {
                      System.err.println(name + ": the first failed cycle: " + e);
                    }
                  }
                }
              },
              "cost-" + t);
      worker.start();
      workers.add(worker);
    }
    Thread.sleep(warmup.toMillis());
    CpuMeter meter = new CpuMeter(List.of());
    List<Map<String, double[]>> before = sample(servers);
    double cpuBefore = serverCpu(servers);
    double[] clientBefore = meter.sample();
    long cyclesBefore = cycles.get();
    long failuresBefore = failures.get();
    Thread.sleep(window.toMillis());
    List<Map<String, double[]>> after = sample(servers);
    double cpuAfter = serverCpu(servers);
    double[] clientAfter = meter.sample();
    long done = cycles.get() - cyclesBefore;
    long failed = failures.get() - failuresBefore;
    stop.set(true);
    for (Thread worker : workers) {
      worker.join();
    }

    Map<String, double[]> perCycle = new TreeMap<>();
    for (int i = 0; i < after.size(); i++) {
      for (Map.Entry<String, double[]> e : after.get(i).entrySet()) {
        double[] was = before.get(i).getOrDefault(e.getKey(), new double[2]);
        double[] sum = perCycle.computeIfAbsent(e.getKey(), k -> new double[2]);
        sum[0] += (e.getValue()[0] - was[0]) / done;
        sum[1] += (e.getValue()[1] - was[1]) / done;
      }
    }
    StringBuilder md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "%n%s: %d threads, %d cycles in %ds (%.0f a second), %d failed; server CPU per"
                + " cycle, five nodes: %.1f µs; client CPU per cycle without the JIT compiler"
                + " threads: %.1f µs%n%n",
            name,
            THREADS,
            done,
            window.toSeconds(),
            done / (double) window.toSeconds(),
            failed,
            (cpuAfter - cpuBefore) / 1e3 / done,
            ((clientAfter[0] - clientBefore[0]) - (clientAfter[2] - clientBefore[2]))
                / 1e3
                / done));
    md.append("| Command | Calls per cycle | µs per cycle |\n| --- | ---: | ---: |\n");
    for (Map.Entry<String, double[]> e : perCycle.entrySet()) {
      if (e.getValue()[0] >= 0.01) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %.2f | %.1f |%n",
                e.getKey(),
                e.getValue()[0],
                e.getValue()[1]));
      }
    }
    return md.toString();
  }

  /** Each node's commands: name to {calls, microseconds}. */
  private static List<Map<String, double[]>> sample(RedisServers servers) {
    List<Map<String, double[]>> nodes = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      Map<String, double[]> commands = new HashMap<>();
      String info = String.valueOf(servers.command(i, "INFO", "commandstats"));
      for (String line : info.split("\r?\n")) {
        if (line.startsWith("cmdstat_")) {
          String command = line.substring("cmdstat_".length(), line.indexOf(':'));
          commands.put(command, new double[] {field(line, "calls="), field(line, "usec=")});
        }
      }
      nodes.add(commands);
    }
    return nodes;
  }

  private static double field(String line, String name) {
    int at = line.indexOf(name) + name.length();
    int comma = line.indexOf(',', at);
    return Double.parseDouble(line.substring(at, comma < 0 ? line.length() : comma));
  }

  private static double serverCpu(RedisServers servers) {
    double sum = 0;
    for (int i = 0; i < servers.size(); i++) {
      sum += NodeStats.cpuNanos(servers.pid(i));
    }
    return sum;
  }
}
