package io.redlock.bench;

import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Many leases held at once: this project's {@code Redlock} holding 1,000, 10,000 and 100,000
 * leases on five local nodes, each on {@code autoExtend()} with a ttl of 2 s (so that each is
 * extended about once a second), beside Redisson's watchdog holding as many locks in the same
 * run ({@code RedissonRedLock} over the five nodes, and {@code RLock} on one), each
 * implementation in a JVM of its own ({@link HeldClient}) started for one measurement.
 *
 * <p>Per implementation and size: the client JVM's CPU time per second, the CPU time per
 * second of the Redis servers it uses (from {@code /proc/<pid>/stat}), the scripts, commands
 * and key extensions ({@code PEXPIRE}) per second each of its nodes ran ({@code INFO
 * commandstats}), the heap one held lock retains (heap in use after a full collection with
 * the locks held, minus the same before they were taken, divided by their number), the keys
 * that expired on any node from the first acquisition to the end of the window (an extension
 * that came too late on that node) and the leases the client itself found lost at the end.
 * The figures go into the marked section of {@code docs/performance.md} and into {@code
 * docs/performance-held.svg}; {@link LoadHarness} keeps both.
 *
 * <pre>
 * ./bench --held                                  # builds, then runs this with the defaults
 * java -cp redlock-bench/target/benchmarks.jar io.redlock.bench.HeldHarness \
 *     --held 1000,10000,100000 --window 30s --settle 12s --rounds 1
 * </pre>
 *
 * <p>Not a test: nothing runs it but this main method.
 */
public final class HeldHarness {
  private HeldHarness() {}

  /**
   * One implementation that could not take {@code held} locks in one round: one acquisition
   * failed ({@code reason}, as its client said it), and nothing was measured.
   */
  record NotHeld(String impl, int held, int round, String reason) {}

  /** One implementation holding {@code held} locks in one round, and what it cost. */
  record Run(
      String impl,
      int held,
      int round,
      int nodes,
      double clientCpuMsPerSecond,
      double serverCpuMsPerSecond,
      double scriptsPerSecondPerNode,
      double commandsPerSecondPerNode,
      double extensionsPerSecondPerNode,
      double heapBytesPerLock,
      long expiredKeys,
      long lost,
      double acquireSeconds,
      HeldClient.Beside beside) {

    /** Client CPU per lease extension, in µs. */
    double clientCpuMicrosPerExtension() {
      return clientCpuMsPerSecond * 1000 / extensionsPerSecondPerNode;
    }

    /** The servers' CPU per lease extension (on all its nodes), in µs. */
    double serverCpuMicrosPerExtension() {
      return serverCpuMsPerSecond * 1000 / extensionsPerSecondPerNode;
    }
  }

  /** The command line. */
  static final class Options {
    Path out = Path.of("docs/performance.md");
    Path chart;
    List<Integer> held = List.of(1_000, 10_000, 100_000);
    List<String> impls = HeldLocks.ALL;
    Duration window = Duration.ofSeconds(30);
    Duration settle = Duration.ofSeconds(12);
    Duration ttl = Duration.ofSeconds(2);
    int rounds = 1;
    int beside = 1_000;
    String clientHeap = "2g";
    String commandLine;

    static Options parse(String[] args) {
      Options o = new Options();
      o.commandLine = String.join(" ", args);
      if (args.length % 2 != 0) {
        throw new IllegalArgumentException("every option takes a value\n" + usage());
      }
      for (int i = 0; i < args.length; i += 2) {
        String value = args[i + 1];
        switch (args[i]) {
          case "--out" -> o.out = Path.of(value);
          case "--chart" -> o.chart = Path.of(value);
          case "--held" -> o.held = Arrays.stream(value.split(",")).map(Integer::valueOf).toList();
          case "--impls" -> o.impls = List.of(value.split(","));
          case "--window" -> o.window = LoadHarness.Options.duration(value);
          case "--settle" -> o.settle = LoadHarness.Options.duration(value);
          case "--ttl" -> o.ttl = LoadHarness.Options.duration(value);
          case "--rounds" -> o.rounds = Integer.parseInt(value);
          case "--beside" -> o.beside = Integer.parseInt(value);
          case "--client-heap" -> o.clientHeap = value;
          default ->
              throw new IllegalArgumentException("unknown option " + args[i] + "\n" + usage());
        }
      }
      if (o.rounds < 1) {
        throw new IllegalArgumentException("--rounds must be at least 1");
      }
      if (o.beside < 0) {
        throw new IllegalArgumentException(
            "--beside must be 0 (no attempts beside the held locks) or more, not " + o.beside);
      }
      for (String impl : o.impls) {
        if (!HeldLocks.ALL.contains(impl)) {
          throw new IllegalArgumentException(
              "--impls: no implementation named " + impl + "; accepted: " + HeldLocks.ALL);
        }
      }
      if (o.chart == null) {
        String name = o.out.getFileName().toString().replaceFirst("\\.md$", "") + "-held.svg";
        o.chart = o.out.resolveSibling(name);
      }
      return o;
    }

    static String usage() {
      return """
          Usage: HeldHarness [options]
            --held 1000,10000,100000   locks held at once, one measurement each
            --impls redlock,redisson-redlock-watchdog,redisson-redlock-same-rate,
                  redisson-rlock-watchdog,lettuce-batch-floor
            --window 30s          measured window, once every lock is held and settled
            --settle 12s          wait after the last acquisition, before the heap is read
                                  (longer than Redisson's renewal period of 10 s)
            --ttl 2s              this library's lease ttl: extended when half is left
            --rounds 1            rounds; figures are medians, ratios medians of per-round ratios
            --beside 1000         after the window, locks taken and released one at a time on
                                  the holding client and as many on a peer, a pair every
                                  10 ms; 0: none
            --client-heap 2g      -Xmx of each client JVM
            --out docs/performance.md   the report whose marked section this writes
            --chart PATH          the SVG (default: docs/performance-held.svg)
          """;
    }
  }

  public static void main(String[] args) throws Exception {
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    String load = loadAverage();
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    List<Run> runs = new ArrayList<>();
    List<NotHeld> notHeld = new ArrayList<>();
    String redisVersion;
    try (RedisServers servers = RedisServers.start(5)) {
      redisVersion =
          io.redlock.spi.NodeInfo.serverVersion(
              String.valueOf(servers.command(0, "INFO", "server")));
      for (int r = 0; r < o.rounds; r++) {
        for (int held : o.held) {
          List<String> order = new ArrayList<>(o.impls);
          Collections.rotate(order, -(r % order.size()));
          for (String impl : order) {
            try {
              Run run = measure(servers, impl, held, r, o);
              print(run);
              runs.add(run);
            } catch (HeldClient.CouldNotHold e) {
              NotHeld failed = new NotHeld(impl, held, r, e.getMessage());
              System.out.printf(
                  Locale.ROOT, "%-26s held=%,7d not held: %s%n", impl, held, e.getMessage());
              notHeld.add(failed);
            }
          }
        }
      }
    }
    double minutes = (System.nanoTime() - t0) / 60e9;
    HeldReport report = new HeldReport(o, runs, notHeld, load, started, minutes, redisVersion);
    Files.createDirectories(o.out.toAbsolutePath().getParent());
    MarkedSection.HELD.write(o.out, report.section());
    Files.writeString(o.chart, report.svg(), StandardCharsets.UTF_8);
    System.out.println(report.section());
    System.out.println("wrote " + o.out + " and " + o.chart);
    System.exit(0);
  }

  private static Run measure(RedisServers servers, String impl, int held, int round, Options o)
      throws IOException, InterruptedException {
    List<String> uris = servers.uris();
    int nodes = HeldLocks.nodes(impl, uris);
    String prefix = "held:" + impl + ":" + held + ":" + round + ":";
    System.out.printf(Locale.ROOT, "%n== %s holding %,d (round %d) ==%n", impl, held, round + 1);
    NodeStats[] first = sampleAll(servers, nodes);
    HeldClient.Held taken;
    HeldClient.Window window;
    HeldClient.Beside beside = null;
    NodeStats[] before;
    NodeStats[] after;
    long windowStart;
    long windowEnd;
    try (HeldClient client =
        HeldClient.start(impl, uris, held, o.ttl, prefix, o.settle, o.clientHeap)) {
      taken = client.awaitHeld();
      alignToRenewal(servers);
      before = sampleAll(servers, nodes);
      windowStart = System.nanoTime();
      window = client.measure(o.window);
      after = sampleAll(servers, nodes);
      windowEnd = System.nanoTime();
      if (o.beside > 0) {
        beside = client.beside(o.beside);
      }
    } finally {
      for (int i = 0; i < nodes; i++) {
        try {
          deleteKeys(servers, i, prefix);
        } catch (RuntimeException e) {
          // Not to hide why the measurement ended; the next one uses keys of its own.
          System.err.printf("could not delete %s* on server %d: %s%n", prefix, i, e);
        }
      }
    }
    double seconds = (windowEnd - windowStart) / 1e9;
    double serverCpu = 0;
    double scripts = 0;
    double commands = 0;
    double extensions = 0;
    long expired = 0;
    for (int i = 0; i < nodes; i++) {
      serverCpu += after[i].cpuNanos() - before[i].cpuNanos();
      scripts += after[i].scriptsSince(before[i]);
      commands += after[i].commandsSince(before[i]);
      extensions += after[i].calls(before[i], "pexpire");
      expired += after[i].expiredKeys() - first[i].expiredKeys();
    }
    if (expired > 0) {
      // Where and when: taking the locks and settling, or the measured window.
      long[] settling = new long[nodes];
      long[] measured = new long[nodes];
      for (int i = 0; i < nodes; i++) {
        settling[i] = before[i].expiredKeys() - first[i].expiredKeys();
        measured[i] = after[i].expiredKeys() - before[i].expiredKeys();
      }
      System.out.printf(
          Locale.ROOT,
          "expired keys per node: while taking the locks and settling %s, in the window %s%n",
          Arrays.toString(settling),
          Arrays.toString(measured));
    }
    return new Run(
        impl,
        held,
        round,
        nodes,
        window.cpuNanos() / 1e6 / (window.windowNanos() / 1e9),
        serverCpu / 1e6 / seconds,
        scripts / nodes / seconds,
        commands / nodes / seconds,
        extensions / nodes / seconds,
        (taken.heapHeld() - taken.heapBefore()) / (double) held,
        expired,
        window.lost(),
        taken.acquireNanos() / 1e9,
        beside);
  }

  /**
   * Waits until node 0 extended a key, then half of Redisson's renewal period ({@link
   * #RENEWAL_PERIOD}): Redisson renews all of its locks at once every 10 s, so a window that
   * starts there and lasts a multiple of 10 s holds a whole number of its renewals, not one
   * more or less by chance. This library extends continuously: the wait changes nothing for
   * it.
   */
  private static void alignToRenewal(RedisServers servers) throws InterruptedException {
    long first = NodeStats.sample(servers, 0).calls().getOrDefault("pexpire", 0L);
    long deadline = System.nanoTime() + 2 * RENEWAL_PERIOD.toNanos();
    while (System.nanoTime() < deadline
        && NodeStats.sample(servers, 0).calls().getOrDefault("pexpire", 0L) == first) {
      Thread.sleep(50);
    }
    Thread.sleep(RENEWAL_PERIOD.toMillis() / 2);
  }

  /** Redisson's renewal period with its default watchdog timeout: a third of 30 s. */
  static final Duration RENEWAL_PERIOD = Duration.ofSeconds(10);

  private static NodeStats[] sampleAll(RedisServers servers, int nodes) {
    NodeStats[] stats = new NodeStats[nodes];
    for (int i = 0; i < nodes; i++) {
      stats[i] = NodeStats.sample(servers, i);
    }
    return stats;
  }

  /**
   * Deletes the keys under {@code prefix} on server {@code i}. By {@code SCAN}, not {@code
   * KEYS}: a key already past its expiry and not yet reclaimed (the client stopped extending it
   * when it closed) is reclaimed now, by the scan that meets it, where {@code KEYS} skips it and
   * the server's expiry cycle would reclaim it later, counted as a key that expired during the
   * next measurement (2,636 keys of the floor in one probe, 1,308 of them on each of two nodes,
   * all while the next implementation took its locks).
   */
  static void deleteKeys(RedisServers servers, int i, String prefix) {
    String pattern = prefix.replace("*", "\\*").replace("?", "\\?").replace("[", "\\[") + "*";
    String cursor = "0";
    do {
      List<?> reply =
          (List<?>) servers.command(i, "SCAN", cursor, "MATCH", pattern, "COUNT", "10000");
      cursor = String.valueOf(reply.get(0));
      List<?> keys = (List<?>) reply.get(1);
      if (!keys.isEmpty()) {
        String[] unlink = new String[keys.size() + 1];
        unlink[0] = "UNLINK";
        for (int k = 0; k < keys.size(); k++) {
          unlink[k + 1] = String.valueOf(keys.get(k));
        }
        servers.command(i, unlink);
      }
    } while (!cursor.equals("0"));
  }

  private static void print(Run r) {
    System.out.printf(
        Locale.ROOT,
        "%-26s held=%,7d client=%7.1f ms/s servers=%7.1f ms/s scripts/node=%8.1f/s"
            + " commands/node=%9.0f/s extensions/node=%8.0f/s heap/lock=%6.0f B expired=%d"
            + " lost=%d acquire=%.1f s%s%n",
        r.impl(),
        r.held(),
        r.clientCpuMsPerSecond(),
        r.serverCpuMsPerSecond(),
        r.scriptsPerSecondPerNode(),
        r.commandsPerSecondPerNode(),
        r.extensionsPerSecondPerNode(),
        r.heapBytesPerLock(),
        r.expiredKeys(),
        r.lost(),
        r.acquireSeconds(),
        r.beside() == null
            ? ""
            : String.format(
                Locale.ROOT,
                " beside: holding p99=%.2f ms max=%.1f failed=%d, peer p99=%.2f ms max=%.1f"
                    + " failed=%d",
                r.beside().holding().p99Nanos() / 1e6,
                r.beside().holding().maxNanos() / 1e6,
                r.beside().holding().failed(),
                r.beside().peer().p99Nanos() / 1e6,
                r.beside().peer().maxNanos() / 1e6,
                r.beside().peer().failed()));
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
