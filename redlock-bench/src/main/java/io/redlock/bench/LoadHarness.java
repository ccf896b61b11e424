package io.redlock.bench;

import io.redlock.spi.NodeInfo;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The load harness: in one run, on the same local redis-server processes, measures this
 * project's Redlock against Redisson ({@code RedissonRedLock} over 5 nodes, {@code RLock} on
 * 1), a raw Lettuce {@code SET NX PX} + {@code EVALSHA} cycle on 1 node, the same cycle fanned
 * out to N nodes with a majority wait (the floor of a Redlock cycle) and, with
 * {@code --with-node}, node-redlock; then writes {@code docs/performance.md} and an SVG chart.
 *
 * <pre>
 * ./bench                                      # builds, runs JMH, then this with the defaults
 * java -cp redlock-bench/target/benchmarks.jar io.redlock.bench.LoadHarness \
 *     --rounds 3 --duration 10s --warmup 3s --out docs/performance.md
 * </pre>
 *
 * <p>Scenarios (each run once per round, implementations in a rotating order):
 * {@code latency} (1 thread, uncontended), {@code throughput} (1, 16, 64 threads on distinct
 * resources), {@code contended} (16 threads, one resource, mutual exclusion checked),
 * {@code sweep} (1 thread, N = 1, 3, 5, 7, 9 nodes). Every figure is the median of the rounds;
 * ratios are computed within each round, then their median is taken. Each Java client runs in
 * a JVM of its own ({@link ForkedClient}); node-redlock runs in Node.js ({@link NodePeer}).
 *
 * <p>Not a test: nothing runs it but this main method.
 */
public final class LoadHarness {
  static final String REDISSON_REDLOCK = "redisson-redlock";
  static final String REDISSON_RLOCK = "redisson-rlock";
  static final String LETTUCE_RAW = "lettuce-raw";
  static final String LETTUCE_FANOUT = "lettuce-fanout";

  /** This project's Redlock with fenced leases; asked for by name, not in the default set. */
  static final String REDLOCK_FENCED = "redlock-fenced";

  /**
   * The fan-out floor with the calling thread doing its own I/O ({@link OwnIo}): the
   * experiment of issue 26, asked for by name, not in the default set.
   */
  static final String OWNIO_FANOUT = "ownio-fanout";

  /** The {@code --impls} name that asks for every node-redlock line below. */
  static final String NODE_REDLOCK = "node-redlock";

  static final String NODE_REDLOCK_4 = "node-redlock-4.2.0";
  static final String NODE_REDLOCK_5 = "node-redlock-5.0.0-beta.2";

  /** The node-redlock lines measured side by side: result name to the peer's major version. */
  static final Map<String, String> NODE_LINES = nodeLines();

  private static Map<String, String> nodeLines() {
    Map<String, String> lines = new LinkedHashMap<>();
    lines.put(NODE_REDLOCK_4, "4");
    lines.put(NODE_REDLOCK_5, "5");
    return java.util.Collections.unmodifiableMap(lines);
  }

  /**
   * One client measured in a scenario: a JVM implementation, or a line of the node-redlock
   * peer (latency only). All of them take turns in one rotation, so that no client is always
   * measured first or last in a round.
   */
  private record Participant(String name, Client impl, String nodeLine) {}

  static final String LATENCY = "latency";
  static final String CONTENDED = "contended";

  private LoadHarness() {}

  /** The command line. */
  static final class Options {
    int rounds = 3;
    Duration duration = Duration.ofSeconds(10);
    Duration warmup = Duration.ofSeconds(3);
    Path out = Path.of("docs/performance.md");
    Path chart;
    Path jmh;
    int nodes = 5;
    List<Integer> threads = List.of(1, 16, 64);
    int contendedThreads = 16;
    List<Integer> sweep = List.of(1, 3, 5, 7, 9);
    Set<String> scenarios = new LinkedHashSet<>(List.of(LATENCY, "throughput", CONTENDED, "sweep"));
    Set<String> impls =
        new LinkedHashSet<>(
            List.of(
                Results.OURS,
                REDISSON_REDLOCK,
                REDISSON_RLOCK,
                LETTUCE_RAW,
                LETTUCE_FANOUT,
                NODE_REDLOCK));
    Duration retryDelay = Duration.ofMillis(2);
    Duration retryJitter = Duration.ofMillis(1);
    Duration maxWait = Duration.ofSeconds(10);
    boolean withNode;
    boolean fork = true;
    Path nodeDir = Path.of("redlock-bench/node");
    Path nodeWork = Path.of("redlock-bench/target/node-peer");
    String commandLine;

    static Options parse(String[] args) {
      Options o = new Options();
      o.commandLine = String.join(" ", args);
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        String value = null;
        int eq = arg.indexOf('=');
        if (arg.startsWith("--") && eq > 0) {
          value = arg.substring(eq + 1);
          arg = arg.substring(0, eq);
        }
        switch (arg) {
          case "--help", "-h" -> {
            System.out.println(usage());
            System.exit(0);
          }
          case "--with-node" -> o.withNode = true;
          case "--no-fork" -> o.fork = false;
          default -> {
            if (value == null) {
              if (i + 1 >= args.length) {
                throw new IllegalArgumentException(arg + " needs a value\n" + usage());
              }
              value = args[++i];
            }
            o.set(arg, value);
          }
        }
      }
      if (o.rounds < 1) {
        throw new IllegalArgumentException("--rounds must be at least 1");
      }
      if (o.chart == null) {
        String name = o.out.getFileName().toString().replaceFirst("\\.md$", "") + ".svg";
        o.chart = o.out.resolveSibling(name);
      }
      if (!o.withNode) {
        o.impls.remove(NODE_REDLOCK);
      }
      return o;
    }

    private void set(String option, String value) {
      switch (option) {
        case "--rounds" -> rounds = Integer.parseInt(value);
        case "--duration" -> duration = duration(value);
        case "--warmup" -> warmup = duration(value);
        case "--out" -> out = Path.of(value);
        case "--chart" -> chart = Path.of(value);
        case "--jmh" -> jmh = Path.of(value);
        case "--nodes" -> nodes = Integer.parseInt(value);
        case "--threads" -> threads = ints(value);
        case "--contended-threads" -> contendedThreads = Integer.parseInt(value);
        case "--sweep" -> sweep = ints(value);
        case "--scenarios" -> scenarios = new LinkedHashSet<>(List.of(value.split(",")));
        case "--impls" -> impls = new LinkedHashSet<>(List.of(value.split(",")));
        case "--retry-delay" -> retryDelay = duration(value);
        case "--retry-jitter" -> retryJitter = duration(value);
        case "--max-wait" -> maxWait = duration(value);
        case "--node-dir" -> nodeDir = Path.of(value);
        case "--node-work" -> nodeWork = Path.of(value);
        default -> throw new IllegalArgumentException("unknown option " + option + "\n" + usage());
      }
    }

    static String usage() {
      return """
          Usage: LoadHarness [options]
            --rounds 3            rounds; every figure is the median over them
            --duration 10s        measured window per implementation and scenario
            --warmup 3s           warm-up before each window (not measured)
            --out docs/performance.md   the Markdown report (the chart goes next to it, .svg)
            --chart PATH          the SVG chart (default: next to --out)
            --jmh PATH            JMH JSON result (-rf json) to quote in the report
            --nodes 5             nodes for the multi-node scenarios
            --threads 1,16,64     thread counts of the distinct-resource throughput scenario
            --contended-threads 16
            --sweep 1,3,5,7,9     node counts of the latency sweep
            --scenarios latency,throughput,contended,sweep
            --impls redlock,redisson-redlock,redisson-rlock,lettuce-raw,lettuce-fanout,node-redlock
                                  (also redlock-fenced: fenced leases, and ownio-fanout: the
                                  fan-out floor with the caller's own I/O, by name only)
            --retry-delay 2ms --retry-jitter 1ms --max-wait 10s   polling retry policy
            --no-fork             run the Java clients in this JVM (default: each in a JVM of
                                  its own, kept for the whole run, as JMH forks)
            --with-node           also measure node-redlock (needs node and npm; installs
                                  redlock-bench/node into redlock-bench/target/node-peer)
          """;
    }

    private static List<Integer> ints(String value) {
      return Arrays.stream(value.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    static Duration duration(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      if (v.endsWith("s")) {
        return Duration.ofMillis(
            (long) (Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
      }
      if (v.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
      }
      return Duration.ofSeconds(Long.parseLong(v));
    }
  }

  public static void main(String[] args) throws Exception {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    Machine machine = Machine.describe();
    int fleet = o.nodes;
    if (o.scenarios.contains("sweep")) {
      fleet = Math.max(fleet, o.sweep.stream().mapToInt(Integer::intValue).max().orElse(1));
    }
    Results results = new Results(o.rounds);
    long started = System.nanoTime();
    try (RedisServers servers = RedisServers.start(fleet)) {
      // Valkey's own version, not the Redis version it reports beside it
      String version = NodeInfo.serverVersion(String.valueOf(servers.command(0, "INFO", "server")));
      machine.redisVersion = version == null ? "?" : version;
      System.out.printf(
          Locale.ROOT,
          "%d redis-server(s) %s on %s%n",
          fleet,
          machine.redisVersion,
          java.util.stream.IntStream.range(0, fleet).mapToObj(servers::address).toList());
      runFiveNode(o, servers, results);
      if (o.scenarios.contains("sweep")) {
        runSweep(o, servers, results);
      }
    }
    double minutes = (System.nanoTime() - started) / 60e9;
    Report report = new Report(o, machine, results, minutes);
    Files.createDirectories(o.out.toAbsolutePath().getParent());
    // The sections other harnesses write (MarkedSection), each run on its own, and the own-I/O
    // experiment's record, written by hand: kept as they are.
    String kept =
        Files.exists(o.out)
            ? MarkedSection.keptIn(Files.readString(o.out, StandardCharsets.UTF_8))
            : "";
    Files.writeString(o.out, report.markdown() + kept, StandardCharsets.UTF_8);
    Files.writeString(o.chart, report.svg(), StandardCharsets.UTF_8);
    System.out.println();
    System.out.println(report.summary());
    System.out.println("wrote " + o.out + " and " + o.chart);
    System.exit(0); // Redisson and Lettuce may leave non-daemon threads behind
  }

  private static Adapters.Retry retry(Options o) {
    return new Adapters.Retry(o.retryDelay, o.retryJitter, o.maxWait);
  }

  private static void runFiveNode(Options o, RedisServers servers, Results results)
      throws InterruptedException, IOException {
    boolean any =
        o.scenarios.contains(LATENCY)
            || o.scenarios.contains("throughput")
            || o.scenarios.contains(CONTENDED);
    if (!any) {
      return;
    }
    List<String> uris = servers.uris().subList(0, o.nodes);
    List<Client> impls = new ArrayList<>();
    NodePeer node = null;
    try {
      start(
          o,
          List.of(
              Results.OURS,
              REDLOCK_FENCED,
              REDISSON_REDLOCK,
              REDISSON_RLOCK,
              LETTUCE_RAW,
              LETTUCE_FANOUT,
              OWNIO_FANOUT),
          uris,
          servers,
          impls);
      if (o.impls.contains(NODE_REDLOCK) && o.scenarios.contains(LATENCY)) {
        node = NodePeer.prepare(o.nodeDir, o.nodeWork);
      }
      Map<String, int[]> scenarios = new LinkedHashMap<>(); // name -> {threads, oneResource}
      if (o.scenarios.contains(LATENCY)) {
        scenarios.put(LATENCY, new int[] {1, 0});
      }
      if (o.scenarios.contains("throughput")) {
        for (int t : o.threads) {
          scenarios.put("threads-" + t, new int[] {t, 0});
        }
      }
      if (o.scenarios.contains(CONTENDED)) {
        scenarios.put(CONTENDED, new int[] {o.contendedThreads, 1});
      }
      for (int r = 0; r < o.rounds; r++) {
        System.out.printf(
            Locale.ROOT, "%n== round %d of %d, %d nodes ==%n", r + 1, o.rounds, o.nodes);
        for (Map.Entry<String, int[]> s : scenarios.entrySet()) {
          List<Participant> turn = new ArrayList<>();
          for (Client impl : impls) {
            turn.add(new Participant(impl.name(), impl, null));
          }
          if (s.getKey().equals(LATENCY) && node != null) {
            NODE_LINES.forEach((name, line) -> turn.add(new Participant(name, null, line)));
          }
          for (Participant p : rotate(turn, r)) {
            if (p.impl() != null) {
              String prefix = "bench:" + p.name() + ":" + s.getKey();
              Figure f =
                  p.impl()
                      .measure(prefix, s.getValue()[0], s.getValue()[1] == 1, o.warmup, o.duration);
              results.put(s.getKey(), p.name(), r, f);
              print(s.getKey(), p.name(), p.impl().nodes(), s.getValue()[0], f);
            } else {
              Figure f =
                  node.latency(
                      p.nodeLine(),
                      servers.uris().subList(0, o.nodes).stream()
                          .map(u -> Integer.parseInt(u.substring(u.lastIndexOf(':') + 1)))
                          .toList(),
                      servers.password(),
                      "bench:" + p.name() + ":latency",
                      o.warmup,
                      o.duration);
              if (f != null) {
                results.put(LATENCY, p.name(), r, f);
                print(LATENCY, p.name(), o.nodes, 1, f);
              }
            }
          }
        }
      }
    } finally {
      impls.forEach(Client::close);
    }
  }

  private static void runSweep(Options o, RedisServers servers, Results results)
      throws InterruptedException, IOException {
    for (int n : o.sweep) {
      List<String> uris = servers.uris().subList(0, n);
      List<Client> impls = new ArrayList<>();
      try {
        start(o, List.of(Results.OURS, REDISSON_REDLOCK, LETTUCE_FANOUT), uris, servers, impls);
        for (int r = 0; r < o.rounds; r++) {
          System.out.printf(
              Locale.ROOT, "%n== sweep N=%d, round %d of %d ==%n", n, r + 1, o.rounds);
          for (Client impl : rotate(impls, r)) {
            Figure f =
                impl.measure("bench:" + impl.name() + ":n" + n, 1, false, o.warmup, o.duration);
            results.put(sweepScenario(n), impl.name(), r, f);
            print(sweepScenario(n), impl.name(), n, 1, f);
          }
        }
      } finally {
        impls.forEach(Client::close);
      }
    }
  }

  /**
   * Starts, into {@code started}, each of {@code names} that {@code --impls} asks for, over
   * {@code uris}: each in a JVM of its own ({@link ForkedClient}), or with {@code --no-fork}
   * in this one.
   */
  private static void start(
      Options o, List<String> names, List<String> uris, RedisServers servers, List<Client> started)
      throws IOException {
    List<Long> pids = new ArrayList<>();
    for (int i = 0; i < uris.size(); i++) {
      pids.add(servers.pid(i));
    }
    for (String name : names) {
      if (o.impls.contains(name)) {
        started.add(
            o.fork
                ? ForkedClient.start(name, uris, pids, retry(o))
                : Client.inProcess(Adapters.create(name, uris, retry(o)), new CpuMeter(pids)));
      }
    }
  }

  static String sweepScenario(int n) {
    return "nodes-" + n;
  }

  private static <T> List<T> rotate(List<T> list, int by) {
    List<T> out = new ArrayList<>(list);
    if (!out.isEmpty()) {
      java.util.Collections.rotate(out, -(by % out.size()));
    }
    return out;
  }

  private static void print(String scenario, String impl, int nodes, int threads, Figure f) {
    System.out.printf(
        Locale.ROOT,
        "%-12s %-17s N=%d T=%-3d ops/s=%10.0f p50=%8.1fµs p99=%8.1fµs p99.9=%8.1fµs"
            + " cpu/cycle=%.0f+%.0fµs (JIT %.0fµs) failures=%d violations=%d lost=%d%n",
        scenario,
        impl,
        nodes,
        threads,
        f.opsPerSecond(),
        f.p50Micros(),
        f.p99Micros(),
        f.p999Micros(),
        f.clientCpuMicros(),
        f.serverCpuMicros(),
        f.compilerCpuMicros(),
        f.failures(),
        f.violations(),
        f.lostUpdates());
  }

  /** Where the figures were taken. */
  static final class Machine {
    String os;
    String cpu;
    int cores;
    String memory;
    String jvm;
    String loadAverage;
    String redisVersion = "?";
    String date;

    static Machine describe() {
      Machine m = new Machine();
      m.os =
          System.getProperty("os.name")
              + " "
              + System.getProperty("os.version")
              + " ("
              + System.getProperty("os.arch")
              + ")";
      m.cores = Runtime.getRuntime().availableProcessors();
      m.cpu =
          firstLine(
              Path.of("/proc/cpuinfo"),
              "model name",
              s -> s.replaceFirst("^model name\\s*:\\s*", ""));
      m.memory =
          firstLine(
              Path.of("/proc/meminfo"), "MemTotal", s -> s.replaceFirst("^MemTotal:\\s*", ""));
      m.loadAverage = firstLine(Path.of("/proc/loadavg"), "", s -> s);
      m.jvm =
          System.getProperty("java.vm.name")
              + " "
              + System.getProperty("java.version")
              + " ("
              + System.getProperty("java.vm.vendor")
              + ")";
      m.date = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
      return m;
    }

    private static String firstLine(Path file, String prefix, Function<String, String> map) {
      try {
        for (String line : Files.readAllLines(file)) {
          if (line.startsWith(prefix)) {
            return map.apply(line).trim();
          }
        }
      } catch (IOException | RuntimeException e) {
        // not Linux: unknown
      }
      return "unknown";
    }
  }
}
