package io.redlock.bench;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The paths beyond the short unfenced cycle, measured side by side in one run, and written
 * into the marked section of {@code docs/performance.md} (which {@link LoadHarness} keeps):
 *
 * <ul>
 *   <li>{@code fenced}: fenced leases and leases on two resources against the plain lease, the
 *       Lettuce fan-out floor and the fenced floor ({@link FencedFloor}: this library's fenced
 *       scripts from raw Lettuce, with and without the restart guard's check), 1 thread
 *       (latency) and 64 threads (throughput, CPU per cycle), each client in a JVM of its own
 *       ({@link ForkedClient}); with {@code
 *       --baseline-jar}, the same clients once more from another build's benchmark jar (the
 *       commit before a change), so that the change is measured in the same run;
 *   <li>{@code threads}: 10,000 threads on the blocking API, each acquiring, holding with
 *       auto-extension and releasing, once on virtual threads and once on platform threads
 *       ({@link ThreadsRun}, in a JVM of JDK 21 or later given by {@code --threads-java});
 *   <li>{@code cli}: the command line's fixed cost, {@code redlock --version} and {@code
 *       redlock exec --no-wait RESOURCE true} on three local nodes, started as the launcher
 *       of the repository root starts it and as a bare {@code java -jar} ({@link CliTiming}).
 * </ul>
 *
 * <pre>
 * ./bench --paths                        # builds, then runs this with the defaults
 * java -cp redlock-bench/target/benchmarks.jar io.redlock.bench.PathsHarness \
 *     --out docs/performance.md --parts fenced,threads,cli --threads-java $JDK21/bin/java
 * </pre>
 *
 * <p>Not a test: nothing runs it but this main method.
 */
public final class PathsHarness {

  /** This project's Redlock, each lease on two resources (the lock goes by a script). */
  static final String REDLOCK_MULTIKEY = "redlock-multikey";

  /** The floor of a fenced cycle: this library's fenced scripts from raw Lettuce. */
  static final String LETTUCE_FENCED_FANOUT = "lettuce-fenced-fanout";

  /** The same floor with the restart guard's check in the lock script skipped. */
  static final String LETTUCE_FENCED_NOCHECK = "lettuce-fenced-fanout-nocheck";

  /** The parts of the section, in its order: each measured on its own, each kept when not. */
  static final List<String> PARTS = List.of("fenced", "threads", "cli");

  /** The suffix of a client run from {@code --baseline-jar}. */
  static final String BASELINE = "@base";

  private PathsHarness() {}

  /** The command line. */
  static final class Options {
    int rounds = 3;
    Duration duration = Duration.ofSeconds(5);
    Duration warmup = Duration.ofSeconds(3);
    int threads = 64;
    Path out = Path.of("docs/performance.md");
    Set<String> parts = new LinkedHashSet<>(PARTS);
    Path baselineJar;
    String baselineName = "main";
    String threadsJava;
    int vthreads = 10_000;
    Duration vttl = Duration.ofSeconds(3);
    Duration vhold = Duration.ofSeconds(4);
    Duration vwarmup = Duration.ofSeconds(6);
    Duration vwindow = Duration.ofSeconds(12);
    Path launcher = Path.of("redlock");
    Path cliJar = Path.of("redlock-cli/target/redlock.jar");
    int cliRuns = 10;
    String commandLine;

    static Options parse(String[] args) {
      Options o = new Options();
      o.commandLine = String.join(" ", args);
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (arg.equals("--help") || arg.equals("-h")) {
          System.out.println(usage());
          System.exit(0);
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(arg + " needs a value\n" + usage());
        }
        String value = args[++i];
        switch (arg) {
          case "--rounds" -> o.rounds = Integer.parseInt(value);
          case "--duration" -> o.duration = LoadHarness.Options.duration(value);
          case "--warmup" -> o.warmup = LoadHarness.Options.duration(value);
          case "--threads" -> o.threads = Integer.parseInt(value);
          case "--out" -> o.out = Path.of(value);
          case "--parts" -> o.parts = parts(value);
          case "--baseline-jar" -> o.baselineJar = Path.of(value);
          case "--baseline-name" -> o.baselineName = value;
          case "--threads-java" -> o.threadsJava = value;
          case "--vthreads" -> o.vthreads = Integer.parseInt(value);
          case "--vttl" -> o.vttl = LoadHarness.Options.duration(value);
          case "--vhold" -> o.vhold = LoadHarness.Options.duration(value);
          case "--vwarmup" -> o.vwarmup = LoadHarness.Options.duration(value);
          case "--vwindow" -> o.vwindow = LoadHarness.Options.duration(value);
          case "--launcher" -> o.launcher = Path.of(value);
          case "--cli-jar" -> o.cliJar = Path.of(value);
          case "--cli-runs" -> o.cliRuns = Integer.parseInt(value);
          default -> throw new IllegalArgumentException("unknown option " + arg + "\n" + usage());
        }
      }
      return o;
    }

    /** {@code --parts}: some of {@link #PARTS}, comma-separated. */
    static Set<String> parts(String value) {
      Set<String> parts = new LinkedHashSet<>(List.of(value.split(",", -1)));
      if (parts.isEmpty() || !PARTS.containsAll(parts)) {
        throw new IllegalArgumentException(
            "--parts " + value + ": accepted are one or more of " + String.join(",", PARTS));
      }
      return parts;
    }

    static String usage() {
      return """
          Usage: PathsHarness [options]
            --parts fenced,threads,cli   what to measure
            --rounds 3 --duration 5s --warmup 3s --threads 64    (fenced)
            --baseline-jar PATH   also run the fenced part's clients from this benchmark jar
            --baseline-name main  what to call that build in the report
            --threads-java PATH   a java of JDK 21 or later for the threads part (default: this
                                  JVM's, if it is 21 or later; else the part is skipped)
            --vthreads 10000 --vttl 3s --vhold 4s --vwarmup 6s --vwindow 12s   (threads)
            --launcher redlock --cli-jar redlock-cli/target/redlock.jar --cli-runs 10   (cli)
            --out docs/performance.md
          """;
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
    String load = loadAverage();
    Instant started = Instant.now();
    String previous =
        Files.exists(o.out)
            ? MarkedSection.PATHS.of(Files.readString(o.out, StandardCharsets.UTF_8))
            : "";
    String unkept = unkeptParts(previous, o.parts);
    if (!unkept.isEmpty()) {
      System.err.println(unkept);
      System.exit(2);
      return;
    }
    String made =
        String.format(
            Locale.ROOT,
            "Made on %s, load average at start %s, by `PathsHarness %s`.%n%n",
            started,
            load,
            absolutePathsShortened(o.commandLine));
    Map<String, String> measured = new LinkedHashMap<>();
    for (String part : o.parts) {
      String text =
          switch (part) {
            case "fenced" -> fenced(o);
            case "threads" -> threads(o);
            default -> CliTiming.section(o);
          };
      if (text != null) {
        measured.put(part, text);
      }
    }
    String md = parts(previous, measured, made);
    String section =
        MarkedSection.PATHS.begin()
            + "\n"
            + String.format(
                Locale.ROOT,
                "## Paths beyond the short cycle%n%nMade by `PathsHarness` (`./bench --paths`),"
                    + " %d cores; each part says which run made it (`--parts` measures some and"
                    + " keeps the others); every client in a JVM of its own unless said otherwise."
                    + " The machine was shared with other work during the runs: read the figures"
                    + " as ratios between clients measured minutes apart on the same servers, not"
                    + " as absolute costs.%n%n",
                Runtime.getRuntime().availableProcessors())
            + md
            + MarkedSection.PATHS.end()
            + "\n";
    MarkedSection.PATHS.write(o.out, section);
    System.out.println(section);
    System.out.println("wrote " + o.out);
    System.exit(0);
  }

  /**
   * {@code commandLine} with each absolute path shortened to its last name ({@code …/bin/java}
   * for a java): the report names no folder of the machine it ran on. Relative paths stay.
   */
  static String absolutePathsShortened(String commandLine) {
    return commandLine
        .replaceAll("(?<!\\S)/\\S*/bin/java(?!\\S)", "…/bin/java")
        .replaceAll("(?<!\\S)/(?:[^/\\s]+/)+([^/\\s]+)", "…/$1");
  }

  /**
   * Why a run of {@code parts} would drop parts of the {@code previous} paths section that it
   * does not measure, or an empty string: a section written before its parts were marked holds
   * them unmarked, and only a run of every part replaces it whole.
   */
  static String unkeptParts(String previous, Set<String> parts) {
    if (previous.isEmpty()
        || parts.containsAll(PARTS)
        || PARTS.stream()
            .anyMatch(part -> previous.contains(MarkedSection.pathsPart(part).begin()))) {
      return "";
    }
    return "--parts "
        + String.join(",", parts)
        + ": the paths section of the report has no marked parts (written before parts were"
        + " kept), so the parts not measured would be lost; run every part ("
        + String.join(",", PARTS)
        + "), or mark them in the report as <!-- paths-PART:begin --> ... <!-- paths-PART:end -->";
  }

  /**
   * The parts of the section in {@link #PARTS} order: each one {@code measured} (part name to
   * its Markdown, a heading and an empty line first) with {@code made} after its heading, each
   * other one as {@code previous} (the section as it was) holds it, or nothing if it holds none.
   */
  static String parts(String previous, Map<String, String> measured, String made) {
    StringBuilder md = new StringBuilder();
    for (String part : PARTS) {
      MarkedSection marked = MarkedSection.pathsPart(part);
      String text = measured.get(part);
      if (text == null) {
        String kept = marked.of(previous);
        md.append(kept.isEmpty() ? "" : kept + "\n");
        continue;
      }
      int heading = text.indexOf("\n\n") + 2;
      md.append(marked.begin())
          .append('\n')
          .append(text, 0, heading)
          .append(made)
          .append(text, heading, text.length())
          .append(marked.end())
          .append("\n\n");
    }
    return md.toString();
  }

  // ---------------------------------------------------------------------------------------
  // fenced and multi-key

  private static String fenced(Options o) throws Exception {
    List<String> names =
        List.of(
            Results.OURS,
            LoadHarness.REDLOCK_FENCED,
            REDLOCK_MULTIKEY,
            LoadHarness.LETTUCE_FANOUT,
            LETTUCE_FENCED_FANOUT,
            LETTUCE_FENCED_NOCHECK);
    Set<String> floors =
        Set.of(LoadHarness.LETTUCE_FANOUT, LETTUCE_FENCED_FANOUT, LETTUCE_FENCED_NOCHECK);
    String many = "threads-" + o.threads;
    Results results = new Results(o.rounds);
    Adapters.Retry retry =
        new Adapters.Retry(Duration.ofMillis(2), Duration.ofMillis(1), Duration.ofSeconds(10));
    List<Client> clients = new ArrayList<>();
    if (!Boolean.getBoolean(Adapters.DECLARED)) {
      throw new IllegalStateException(
          "start PathsHarness with -D" + Adapters.DECLARED + "=true (./bench --paths does)");
    }
    try (RedisServers servers = RedisServers.startFresh(5)) {
      List<Long> pids = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        pids.add(servers.pid(i));
      }
      String classPath = System.getProperty("java.class.path");
      for (String name : names) {
        clients.add(ForkedClient.start(name, name, classPath, servers.uris(), pids, retry));
        if (o.baselineJar != null && !floors.contains(name)) {
          clients.add(
              ForkedClient.start(
                  name, name + BASELINE, o.baselineJar.toString(), servers.uris(), pids, retry));
        }
      }
      Map<String, Integer> scenarios = new LinkedHashMap<>();
      scenarios.put(LoadHarness.LATENCY, 1);
      scenarios.put(many, o.threads);
      for (int r = 0; r < o.rounds; r++) {
        System.out.printf(Locale.ROOT, "%n== fenced, round %d of %d ==%n", r + 1, o.rounds);
        for (Map.Entry<String, Integer> s : scenarios.entrySet()) {
          List<Client> turn = new ArrayList<>(clients);
          java.util.Collections.rotate(turn, -(r % turn.size()));
          for (Client c : turn) {
            Figure f =
                c.measure(
                    "bench:" + c.name() + ":" + s.getKey(),
                    s.getValue(),
                    false,
                    o.warmup,
                    o.duration);
            results.put(s.getKey(), c.name(), r, f);
            System.out.printf(
                Locale.ROOT,
                "%-10s %-26s ops/s=%9.0f p50=%7.1fµs cpu/cycle=%.0f+%.0fµs failures=%d%n",
                s.getKey(),
                c.name(),
                f.opsPerSecond(),
                f.p50Micros(),
                f.compiledClientCpuMicros(),
                f.serverCpuMicros(),
                f.failures());
          }
        }
      }
    } finally {
      clients.forEach(Client::close);
    }
    return fencedSection(o, results, many);
  }

  private static String fencedSection(Options o, Results results, String many) {
    String fenced = LoadHarness.REDLOCK_FENCED;
    String plain = Results.OURS;
    String floor = LoadHarness.LETTUCE_FANOUT;
    String lat = LoadHarness.LATENCY;
    StringBuilder md = new StringBuilder();
    md.append("### Fenced leases and leases on several resources\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "5 local nodes; %d round(s) of %s measured after %s of warm-up per client and"
                + " scenario, medians of the rounds. `%s`: each lease on two resources (a script"
                + " locks both). `%s`: the floor of a fenced cycle, this library's fenced lock,"
                + " confirmation and release scripts sent by raw Lettuce over the connections of"
                + " `%s`, nothing else (no validity, node timeout, guard probes or lease"
                + " bookkeeping); the lock script runs the restart guard's check of the node's"
                + " record as the defaults do, and `%s` skips it. CPU per cycle: the client's JVM"
                + " without its JIT compiler threads + the five servers, µs.%s%n%n",
            o.rounds,
            format(o.duration),
            format(o.warmup),
            REDLOCK_MULTIKEY,
            LETTUCE_FENCED_FANOUT,
            floor,
            LETTUCE_FENCED_NOCHECK,
            o.baselineJar == null
                ? ""
                : " `"
                    + BASELINE
                    + "`: the same client from the benchmark jar of "
                    + o.baselineName
                    + ", in the same rotation."));
    md.append(
        "| Client | 1 thread p50 µs | p99 µs | "
            + o.threads
            + " threads ops/s | p99 µs | CPU per cycle, 1 thread | CPU per cycle, "
            + o.threads
            + " threads |\n");
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (String impl : results.impls(lat)) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %s + %s | %s + %s |%n",
              impl,
              num(results.median(lat, impl, Figure::p50Micros)),
              num(results.median(lat, impl, Figure::p99Micros)),
              num(results.median(many, impl, Figure::opsPerSecond)),
              num(results.median(many, impl, Figure::p99Micros)),
              num(results.median(lat, impl, Figure::compiledClientCpuMicros)),
              num(results.median(lat, impl, Figure::serverCpuMicros)),
              num(results.median(many, impl, Figure::compiledClientCpuMicros)),
              num(results.median(many, impl, Figure::serverCpuMicros))));
    }
    md.append('\n');
    // Targets, each computed inside a round, then the median of the rounds.
    double[] p50Budget = new double[o.rounds];
    double[] p50Strict = new double[o.rounds];
    for (int r = 0; r < o.rounds; r++) {
      Figure f = at(results, lat, fenced, r);
      Figure u = at(results, lat, plain, r);
      Figure fan = at(results, lat, floor, r);
      p50Budget[r] =
          f == null || u == null || fan == null
              ? Double.NaN
              : f.p50Micros() / (u.p50Micros() + fan.p50Micros());
      p50Strict[r] =
          f == null || u == null || fan == null
              ? Double.NaN
              : f.p50Micros() / (u.p50Micros() + fan.p50Micros() / 2);
    }
    double[] throughput = results.ratios(many, fenced, many, plain, Figure::opsPerSecond);
    md.append("| Target | Bound | Median | Per round | Verdict |\n");
    md.append("| --- | --- | --- | --- | --- |\n");
    target(
        md,
        "fenced p50 / (unfenced p50 + fan-out floor p50): one fanned-out round trip more",
        "≤ 1",
        p50Budget,
        true,
        1);
    target(
        md,
        "fenced p50 / (unfenced p50 + half the fan-out floor's p50), the floor being a cycle of"
            + " two round trips",
        "≤ 1",
        p50Strict,
        true,
        1);
    target(
        md, "fenced / unfenced ops/s, " + o.threads + " threads", "≥ 0.60", throughput, false, 0.6);
    md.append('\n');
    md.append(floors(o, results, many));
    if (o.baselineJar != null) {
      md.append(
          "This build against "
              + o.baselineName
              + " (`"
              + BASELINE
              + "`), same run, median of per-round ratios (this build / "
              + o.baselineName
              + "):\n\n");
      md.append(
          "| Client | p50, 1 thread | ops/s, "
              + o.threads
              + " threads | client CPU per cycle, "
              + o.threads
              + " threads | server CPU per cycle, "
              + o.threads
              + " threads |\n");
      md.append("| --- | ---: | ---: | ---: | ---: |\n");
      for (String impl : List.of(plain, fenced, REDLOCK_MULTIKEY)) {
        String base = impl + BASELINE;
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %s | %s | %s |%n",
                impl,
                ratio(results.ratios(lat, impl, lat, base, Figure::p50Micros)),
                ratio(results.ratios(many, impl, many, base, Figure::opsPerSecond)),
                ratio(results.ratios(many, impl, many, base, Figure::compiledClientCpuMicros)),
                ratio(results.ratios(many, impl, many, base, Figure::serverCpuMicros))));
      }
      md.append('\n');
    }
    return md.toString();
  }

  /**
   * The fenced path against the floors of the same run: the floors' own ratio (what the fenced
   * scripts cost any client here) beside each client's ratio to its floor (what the library
   * adds).
   */
  private static String floors(Options o, Results results, String many) {
    String lat = LoadHarness.LATENCY;
    String fanout = LoadHarness.LETTUCE_FANOUT;
    ToDoubleFunction<Figure> cpu = f -> f.compiledClientCpuMicros() + f.serverCpuMicros();
    List<String[]> pairs =
        List.of(
            new String[] {LETTUCE_FENCED_FANOUT, fanout},
            new String[] {LETTUCE_FENCED_NOCHECK, fanout},
            new String[] {LoadHarness.REDLOCK_FENCED, LETTUCE_FENCED_FANOUT},
            new String[] {Results.OURS, fanout});
    StringBuilder md = new StringBuilder();
    md.append(
        "The floors of the same run, median of per-round ratios: the first two rows are what"
            + " the fenced scripts cost a client that does nothing else, the last two what this"
            + " library adds to its floor, fenced and unfenced.\n\n");
    md.append(
        "| Ratio | p50, 1 thread | ops/s, "
            + o.threads
            + " threads | CPU per cycle, "
            + o.threads
            + " threads |\n");
    md.append("| --- | ---: | ---: | ---: |\n");
    for (String[] pair : pairs) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s / %s | %s | %s | %s |%n",
              pair[0],
              pair[1],
              ratio(results.ratios(lat, pair[0], lat, pair[1], Figure::p50Micros)),
              ratio(results.ratios(many, pair[0], many, pair[1], Figure::opsPerSecond)),
              ratio(results.ratios(many, pair[0], many, pair[1], cpu))));
    }
    double floor =
        Results.median(
            results.ratios(many, LETTUCE_FENCED_FANOUT, many, fanout, Figure::opsPerSecond));
    md.append('\n');
    md.append(
        String.format(
            Locale.ROOT,
            "Throughput target against the floors: the fenced floor reaches %s× the fan-out"
                + " floor's ops/s at %d threads in this run, %s the bound of 0.60 that the"
                + " target sets for `%s` / `%s`.%n%n",
            num(floor),
            o.threads,
            Double.isNaN(floor) ? "not comparable with" : floor < 0.6 ? "below" : "at or above",
            LoadHarness.REDLOCK_FENCED,
            Results.OURS));
    return md.toString();
  }

  private static Figure at(Results results, String scenario, String impl, int round) {
    Figure[] all = results.rounds(scenario, impl);
    return all == null ? null : all[round];
  }

  private static void target(
      StringBuilder md,
      String what,
      String bound,
      double[] perRound,
      boolean atMost,
      double limit) {
    double median = Results.median(perRound);
    boolean met = atMost ? median <= limit : median >= limit;
    md.append(
        String.format(
            Locale.ROOT,
            "| %s | %s | %s | %s | %s |%n",
            what,
            bound,
            num(median),
            Arrays.stream(perRound)
                .mapToObj(PathsHarness::num)
                .reduce((a, b) -> a + ", " + b)
                .orElse(""),
            Double.isNaN(median) ? "not measured" : met ? "met" : "**not met**"));
  }

  // ---------------------------------------------------------------------------------------
  // virtual threads

  private static String threads(Options o) throws Exception {
    String java = o.threadsJava;
    if (java == null && Runtime.version().feature() >= 21) {
      java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
    StringBuilder md = new StringBuilder("### The blocking API from many threads\n\n");
    if (java == null) {
      System.err.println(
          "threads part not measured (the report keeps what it had): this JVM is JDK "
              + Runtime.version().feature()
              + " and no --threads-java of JDK 21 or later was given");
      return null;
    }
    Map<String, String> lines = new LinkedHashMap<>();
    try (RedisServers servers = RedisServers.start(5)) {
      RedlockConfig config = RedlockConfig.builder().nodes(servers.uris()).build();
      if (!Redlock.init(config, true).complete()) {
        throw new IllegalStateException("could not declare the bench servers fresh");
      }
      for (String mode : List.of("virtual", "platform")) {
        System.out.printf(Locale.ROOT, "%n== %d %s threads ==%n", o.vthreads, mode);
        List<String> command =
            List.of(
                java,
                "-Xms1g",
                "-Xmx2g",
                "-cp",
                System.getProperty("java.class.path"),
                ThreadsRun.class.getName(),
                mode,
                Integer.toString(o.vthreads),
                format(o.vttl),
                format(o.vhold),
                format(o.vwarmup),
                format(o.vwindow),
                String.join(",", servers.uris()));
        Process process =
            new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String result = null;
        try (var out =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = out.readLine(); line != null; line = out.readLine()) {
            System.out.println("  [" + mode + "] " + line);
            if (line.startsWith("threads-run")) {
              result = line;
            }
          }
        }
        process.waitFor();
        lines.put(mode, result);
      }
    }
    md.append(
        String.format(
            Locale.ROOT,
            "%,d threads, each in a loop: `acquire` (blocking) a resource of its own with a ttl of"
                + " %s, `autoExtend()`, hold it %s (sleep), `release()`; 5 local nodes, the"
                + " defaults otherwise (restart guard on, nodes declared fresh). One JVM per"
                + " kind of thread (-Xmx2g), %s of warm-up, then %s measured. Heap: in use after a"
                + " full GC in the middle of the window, less the heap after a full GC before the"
                + " threads started. Pinned: `jdk.VirtualThreadPinned` events over the whole run,"
                + " recorded by JFR with a threshold of 0.%n%n",
            o.vthreads,
            format(o.vttl),
            format(o.vhold),
            format(o.vwarmup),
            format(o.vwindow)));
    md.append(
        "| Threads | JDK | Cycles/s | Failed acquisitions | Leases lost | Heap MiB |"
            + " Heap per thread, bytes | Pinned events |\n");
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (Map.Entry<String, String> e : lines.entrySet()) {
      Map<String, String> f = fields(e.getValue());
      if (f.isEmpty()) {
        md.append("| ").append(e.getKey()).append(" | – | no result | | | | | |\n");
        continue;
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %.1f | %s | %s |%n",
              e.getKey(),
              f.get("jdk"),
              f.get("cycles/s"),
              f.get("failed"),
              f.get("lost"),
              Long.parseLong(f.get("heap-bytes")) / 1048576.0,
              f.get("heap-per-thread"),
              f.get("pinned").equals("0") ? "0" : f.get("pinned") + " (" + f.get("where") + ")"));
    }
    md.append('\n');
    return md.toString();
  }

  private static Map<String, String> fields(String line) {
    Map<String, String> f = new LinkedHashMap<>();
    if (line == null || line.startsWith("threads-run skipped")) {
      return f;
    }
    for (String word : line.split(" ")) {
      int eq = word.indexOf('=');
      if (eq > 0) {
        f.put(word.substring(0, eq), word.substring(eq + 1));
      }
    }
    return f;
  }

  // ---------------------------------------------------------------------------------------

  static String num(double v) {
    if (Double.isNaN(v)) {
      return "–";
    }
    if (Math.abs(v) >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (Math.abs(v) >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (Math.abs(v) >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.3g", v);
  }

  private static String ratio(double[] perRound) {
    return num(Results.median(perRound))
        + "× ("
        + Arrays.stream(perRound)
            .mapToObj(PathsHarness::num)
            .reduce((a, b) -> a + ", " + b)
            .orElse("")
        + ")";
  }

  static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }
}
