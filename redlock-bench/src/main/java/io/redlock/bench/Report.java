package io.redlock.bench;

import static io.redlock.bench.LoadHarness.CONTENDED;
import static io.redlock.bench.LoadHarness.LATENCY;
import static io.redlock.bench.LoadHarness.LETTUCE_FANOUT;
import static io.redlock.bench.LoadHarness.LETTUCE_RAW;
import static io.redlock.bench.LoadHarness.NODE_LINES;
import static io.redlock.bench.LoadHarness.REDISSON_REDLOCK;
import static io.redlock.bench.LoadHarness.REDISSON_RLOCK;
import static io.redlock.bench.Results.OURS;

import io.lettuce.core.resource.EpollProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Turns {@link Results} into docs/performance.md (its headline included) and the SVG chart. */
final class Report {

  private static final ToDoubleFunction<Figure> P50 = Figure::p50Micros;
  private static final ToDoubleFunction<Figure> OPS = Figure::opsPerSecond;
  private static final ToDoubleFunction<Figure> CLIENT_CPU = Figure::compiledClientCpuMicros;

  private final LoadHarness.Options o;
  private final LoadHarness.Machine machine;
  private final Results results;
  private final double minutes;

  Report(LoadHarness.Options o, LoadHarness.Machine machine, Results results, double minutes) {
    this.o = o;
    this.machine = machine;
    this.results = results;
    this.minutes = minutes;
  }

  /** A smoke run: too short or too few rounds to be quoted as a measurement. */
  boolean isSmoke() {
    return o.rounds < 3 || o.duration.toSeconds() < 10 || o.warmup.toSeconds() < 3;
  }

  /** One target of the issue: ours against a peer, as a median of per-round ratios. */
  record Target(String what, double[] perRound, String op, double bound) {
    double median() {
      return Results.median(perRound);
    }

    String verdict() {
      double m = median();
      if (Double.isNaN(m)) {
        return "not measured";
      }
      boolean met = op.equals("≤") ? m <= bound : m >= bound;
      return met ? "met" : "**not met**";
    }
  }

  List<Target> targets() {
    String tp = "threads-" + (o.threads.isEmpty() ? 64 : o.threads.get(o.threads.size() - 1));
    List<Target> t = new ArrayList<>();
    t.add(
        new Target(
            "uncontended p50, redlock / redisson-redlock (5 nodes)",
            results.ratios(LATENCY, OURS, LATENCY, REDISSON_REDLOCK, P50),
            "≤",
            0.1));
    for (String line : NODE_LINES.keySet()) {
      t.add(
          new Target(
              "uncontended p50, redlock / " + line + " (5 nodes)",
              results.ratios(LATENCY, OURS, LATENCY, line, P50),
              "≤",
              0.8));
    }
    t.add(
        new Target(
            "uncontended p50, redlock (5 nodes) / lettuce-raw (1 node)",
            results.ratios(LATENCY, OURS, LATENCY, LETTUCE_RAW, P50),
            "≤",
            1.3));
    t.add(
        new Target(
            "throughput " + tp + " distinct, redlock / redisson-redlock",
            results.ratios(tp, OURS, tp, REDISSON_REDLOCK, OPS),
            "≥",
            15));
    t.add(
        new Target(
            "throughput " + tp + " distinct, redlock (5 nodes) / lettuce-raw (1 node)",
            results.ratios(tp, OURS, tp, LETTUCE_RAW, OPS),
            "≥",
            0.5));
    String fewest = "threads-" + (o.threads.isEmpty() ? 1 : o.threads.get(0));
    for (String scenario : fewest.equals(tp) ? List.of(tp) : List.of(fewest, tp)) {
      t.add(
          new Target(
              "client CPU per cycle without the JIT compiler "
                  + scenario
                  + ", redlock / lettuce-fanout (5 nodes)",
              results.ratios(scenario, OURS, scenario, LETTUCE_FANOUT, CLIENT_CPU),
              "≤",
              1.1));
    }
    int lastN = o.sweep.isEmpty() ? 9 : o.sweep.get(o.sweep.size() - 1);
    int firstN = o.sweep.isEmpty() ? 1 : o.sweep.get(0);
    t.add(
        new Target(
            "redlock p50 at N = " + lastN + " / at N = " + firstN,
            results.ratios(
                LoadHarness.sweepScenario(lastN),
                OURS,
                LoadHarness.sweepScenario(firstN),
                OURS,
                P50),
            "≤",
            1.5));
    t.add(
        new Target(
            "contended throughput ("
                + o.contendedThreads
                + " threads, one resource), redlock / redisson-redlock",
            results.ratios(CONTENDED, OURS, CONTENDED, REDISSON_REDLOCK, OPS),
            "≥",
            3));
    return t;
  }

  /** A ratio between two figures of the same run that shows what the machine allows. */
  record Floor(String what, double[] perRound, String reading) {}

  List<Floor> floors() {
    String tp = "threads-" + (o.threads.isEmpty() ? 64 : o.threads.get(o.threads.size() - 1));
    int lastN = o.sweep.isEmpty() ? 9 : o.sweep.get(o.sweep.size() - 1);
    int firstN = o.sweep.isEmpty() ? 1 : o.sweep.get(0);
    String last = LoadHarness.sweepScenario(lastN);
    String first = LoadHarness.sweepScenario(firstN);
    List<Floor> f = new ArrayList<>();
    f.add(
        new Floor(
            "uncontended p50, lettuce-raw (1 node) / redisson-redlock (5 nodes)",
            results.ratios(LATENCY, LETTUCE_RAW, LATENCY, REDISSON_REDLOCK, P50),
            "a 5-node cycle 0.1× Redisson's would have to beat this 1-node cycle by this much"));
    for (String line : NODE_LINES.keySet()) {
      f.add(
          new Floor(
              "uncontended p50, lettuce-fanout / " + line + " (5 nodes)",
              results.ratios(LATENCY, LETTUCE_FANOUT, LATENCY, line, P50),
              "the Lettuce floor of a 5-node cycle against " + line + "'s whole cycle"));
    }
    f.add(
        new Floor(
            "uncontended p50, lettuce-fanout (5 nodes) / lettuce-raw (1 node)",
            results.ratios(LATENCY, LETTUCE_FANOUT, LATENCY, LETTUCE_RAW, P50),
            "the Lettuce floor of a 5-node cycle against a 1-node cycle: five servers to wake"
                + " on these cores instead of one"));
    f.add(
        new Floor(
            "uncontended p50, redlock / lettuce-fanout (5 nodes)",
            results.ratios(LATENCY, OURS, LATENCY, LETTUCE_FANOUT, P50),
            "what the algorithm adds to two fanned-out round trips"));
    f.add(
        new Floor(
            "lettuce-fanout p50 at N = " + lastN + " / at N = " + firstN,
            results.ratios(last, LETTUCE_FANOUT, first, LETTUCE_FANOUT, P50),
            "what fanning out to more local servers costs on these cores, with no algorithm"));
    f.add(
        new Floor(
            "redlock p50 / lettuce-fanout p50 at N = " + lastN,
            results.ratios(last, OURS, last, LETTUCE_FANOUT, P50),
            "what the algorithm adds at N = " + lastN));
    f.add(
        new Floor(
            "throughput " + tp + ", lettuce-fanout (5 nodes) / lettuce-raw (1 node)",
            results.ratios(tp, LETTUCE_FANOUT, tp, LETTUCE_RAW, OPS),
            "what five local servers allow against one, with no algorithm"));
    f.add(
        new Floor(
            "throughput " + tp + " distinct, lettuce-fanout / redisson-redlock (5 nodes)",
            results.ratios(tp, LETTUCE_FANOUT, tp, REDISSON_REDLOCK, OPS),
            "the Lettuce floor of a 5-node cycle against Redisson's RedLock: what a client"
                + " that only fans out and counts reaches here"));
    f.add(
        new Floor(
            "throughput " + tp + ", redlock / lettuce-fanout (5 nodes)",
            results.ratios(tp, OURS, tp, LETTUCE_FANOUT, OPS),
            "the share of that floor redlock reaches"));
    return f;
  }

  private void floorsTable(StringBuilder md) {
    List<Floor> measured = new ArrayList<>();
    for (Floor f : floors()) {
      if (!Double.isNaN(Results.median(f.perRound()))) {
        measured.add(f);
      }
    }
    if (measured.isEmpty()) {
      return;
    }
    md.append("## Floors\n\n");
    md.append(
        "Ratios between figures of the same run that show what these cores allow,"
            + " whatever the client does (computed like the targets).\n\n");
    md.append("| Ratio | Median | Per round | Reading |\n| --- | --- | --- | --- |\n");
    for (Floor f : measured) {
      md.append("| ")
          .append(f.what())
          .append(" | ")
          .append(fmtRatio(Results.median(f.perRound())))
          .append(" | ")
          .append(perRound(f.perRound()))
          .append(" | ")
          .append(f.reading())
          .append(" |\n");
    }
    md.append('\n');
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("# Performance\n\n");
    md.append(
        "Generated by `io.redlock.bench.LoadHarness` (module `redlock-bench`); do not edit"
            + " by hand, run `./bench` again.\n\n");
    if (isSmoke()) {
      md.append("> **Smoke run, not a measurement.** These figures come from a run with ")
          .append(o.rounds)
          .append(" round(s) of ")
          .append(fmtDuration(o.duration))
          .append(" after ")
          .append(fmtDuration(o.warmup))
          .append(
              " of warm-up; a measurement"
                  + " is `./bench` with its defaults (3 rounds of 10 s after 3 s) on a quiet"
                  + " machine. Do not quote them.\n\n");
    }
    md.append(headline());
    md.append("## Machine\n\n");
    md.append("| | |\n| --- | --- |\n");
    md.append("| Date | ").append(machine.date).append(" |\n");
    md.append("| OS | ").append(machine.os).append(" |\n");
    md.append("| CPU | ")
        .append(machine.cpu)
        .append(", ")
        .append(machine.cores)
        .append(" cores available to the JVM |\n");
    md.append("| Memory | ").append(machine.memory).append(" |\n");
    md.append("| Load average at start | ").append(machine.loadAverage).append(" |\n");
    md.append("| JVM | ").append(machine.jvm).append(" |\n");
    md.append("| Redis | ")
        .append(
            machine.redisVersion.matches("[0-9].*")
                ? "redis-server " + machine.redisVersion
                : machine.redisVersion)
        .append(", local processes on 127.0.0.1 started by `RedisServers` (no persistence) |\n");
    md.append("| Peers | Redisson ")
        .append(version("org.redisson", "redisson"))
        .append(", Lettuce ")
        .append(version("io.lettuce", "lettuce-core"))
        .append(
            NODE_LINES.keySet().stream().anyMatch(line -> results.has(LATENCY, line))
                ? ", node-redlock 4.2.0 and 5.0.0-beta.2 (ioredis 5) on Node.js"
                : "")
        .append(" |\n");
    md.append("| Lettuce transport | ")
        .append(
            EpollProvider.isAvailable()
                ? "Netty epoll (native), for this library, lettuce-raw and lettuce-fanout;"
                    + " Redisson on its default NIO"
                : "Netty NIO (epoll not available)")
        .append(" |\n");
    md.append("| Run time | ")
        .append(String.format(Locale.ROOT, "%.1f", minutes))
        .append(" min |\n\n");
    md.append(
        "Everything (clients, servers, the harness) shares these cores, so the figures"
            + " compare implementations on one machine; they are not what a network of separate"
            + " hosts would give.\n\n");

    md.append("## Commands\n\n```sh\n");
    md.append("./bench                      # build, JMH (-prof gc), then the load harness\n");
    md.append("# the load harness alone, as this report was made:\n");
    md.append("java -cp redlock-bench/target/benchmarks.jar io.redlock.bench.LoadHarness ")
        .append(o.commandLine)
        .append("\n");
    md.append("# the JMH benchmarks alone:\n");
    md.append("java -jar redlock-bench/target/benchmarks.jar -prof gc\n```\n\n");
    md.append("Settings: ")
        .append(o.rounds)
        .append(" round(s); per implementation and" + " scenario ")
        .append(fmtDuration(o.warmup))
        .append(" warm-up then ")
        .append(fmtDuration(o.duration))
        .append(" measured; ttl ")
        .append(Adapters.TTL.toSeconds())
        .append(" s; polling retry ")
        .append(fmtDuration(o.retryDelay))
        .append(" ± ")
        .append(fmtDuration(o.retryJitter))
        .append(" up to ")
        .append(fmtDuration(o.maxWait))
        .append(
            ". Within a round the"
                + " implementations run one after the other, in an order that rotates from round"
                + " to round. ")
        .append(
            o.fork
                ? "Each Java client runs in a JVM of its own, kept for the whole run (as JMH"
                    + " forks a JVM per benchmark), so that no client runs on code the JIT"
                    + " compiled for another client's types.\n\n"
                : "Every Java client runs in the harness's JVM (`--no-fork`): the code they"
                    + " share is compiled for all their types at once.\n\n");

    md.append("## Targets\n\n");
    md.append(
        "Each ratio is computed within a round (both figures from the same round), and"
            + " the median of those per-round ratios is shown.\n\n");
    md.append(
        "| Target | Bound | Median ratio | Per round | Verdict |\n| --- | --- | --- | --- |"
            + " --- |\n");
    for (Target t : targets()) {
      md.append("| ")
          .append(t.what())
          .append(" | ")
          .append(t.op())
          .append(' ')
          .append(Chart.fmt(t.bound()))
          .append(" | ")
          .append(fmtRatio(t.median()))
          .append(" | ")
          .append(perRound(t.perRound()))
          .append(" | ")
          .append(t.verdict())
          .append(" |\n");
    }
    long violations = 0;
    long lost = 0;
    for (String impl : results.impls(CONTENDED)) {
      violations += results.sum(CONTENDED, impl, Figure::violations);
      lost += results.sum(CONTENDED, impl, Figure::lostUpdates);
    }
    md.append(
            "| mutual exclusion in the contended scenario (all implementations, all rounds)"
                + " | = 0 | ")
        .append(violations)
        .append(" violations, ")
        .append(lost)
        .append(" lost updates | | ")
        .append(
            results.impls(CONTENDED).isEmpty()
                ? "not measured"
                : violations == 0 && lost == 0 ? "met" : "**not met**")
        .append(" |\n\n");

    floorsTable(md);

    md.append("## Chart\n\n![p50 latency against N; throughput per implementation](")
        .append(o.out.toAbsolutePath().getParent().relativize(o.chart.toAbsolutePath()))
        .append(")\n\n");

    if (results.scenarios().contains(LATENCY)) {
      md.append("## Uncontended latency, 1 thread\n\n");
      md.append(
          "One thread acquires and releases one resource in a loop; the latency is the"
              + " whole cycle (acquire returns a valid lease, release has been confirmed).\n\n");
      latencyTable(md, LATENCY);
    }
    List<String> tps = results.scenarios().stream().filter(s -> s.startsWith("threads-")).toList();
    if (!tps.isEmpty()) {
      md.append("## Throughput on distinct resources\n\n");
      md.append(
          "T threads, each on its own resource, acquire+release in a loop; completed"
              + " cycles per second (median of rounds), and the p99 cycle latency.\n\n");
      md.append("| Implementation | Nodes |");
      for (String s : tps) {
        md.append(' ').append(s.substring(8)).append(" thread(s), ops/s | p99 µs |");
      }
      md.append("\n| --- | --- |");
      tps.forEach(s -> md.append(" --- | --- |"));
      md.append('\n');
      for (String impl : results.impls(tps.get(0))) {
        md.append("| ").append(impl).append(" | ").append(nodesOf(impl)).append(" |");
        for (String s : tps) {
          md.append(' ')
              .append(Chart.fmt(results.median(s, impl, OPS)))
              .append(" | ")
              .append(Chart.fmt(results.median(s, impl, Figure::p99Micros)))
              .append(" |");
        }
        md.append('\n');
      }
      md.append('\n');
    }
    if (results.scenarios().contains(CONTENDED)) {
      md.append("## Contended: ").append(o.contendedThreads).append(" threads, one resource\n\n");
      md.append(
          "Every thread wants the same resource; acquisitions per second (median), the"
              + " cycle latency including the wait, acquisitions that gave up within the wait"
              + " budget, and the mutual-exclusion check summed over rounds: a violation is a"
              + " second holder seen inside the critical section, a lost update an increment of a"
              + " shared non-atomic counter that went missing.\n\n");
      md.append(
          "| Implementation | Nodes | Acquisitions/s | p50 µs | p99 µs | Gave up |"
              + " Violations | Lost updates |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
      for (String impl : results.impls(CONTENDED)) {
        md.append("| ")
            .append(impl)
            .append(" | ")
            .append(nodesOf(impl))
            .append(" | ")
            .append(Chart.fmt(results.median(CONTENDED, impl, OPS)))
            .append(" | ")
            .append(Chart.fmt(results.median(CONTENDED, impl, P50)))
            .append(" | ")
            .append(Chart.fmt(results.median(CONTENDED, impl, Figure::p99Micros)))
            .append(" | ")
            .append(results.sum(CONTENDED, impl, Figure::failures))
            .append(" | ")
            .append(results.sum(CONTENDED, impl, Figure::violations))
            .append(" | ")
            .append(results.sum(CONTENDED, impl, Figure::lostUpdates))
            .append(" |\n");
      }
      md.append('\n');
    }
    cpuTable(md);
    List<Integer> swept = sweptNodes();
    if (!swept.isEmpty()) {
      md.append("## Latency against the number of nodes\n\n");
      md.append("1 thread, uncontended, over the first N servers (quorum N/2 + 1).\n\n");
      List<String> impls = results.impls(LoadHarness.sweepScenario(swept.get(0)));
      md.append("| N |");
      impls.forEach(i -> md.append(' ').append(i).append(" p50 µs | p99 µs |"));
      md.append("\n| --- |");
      impls.forEach(i -> md.append(" --- | --- |"));
      md.append('\n');
      for (int n : swept) {
        String s = LoadHarness.sweepScenario(n);
        md.append("| ").append(n).append(" |");
        for (String impl : impls) {
          md.append(' ')
              .append(Chart.fmt(results.median(s, impl, P50)))
              .append(" | ")
              .append(Chart.fmt(results.median(s, impl, Figure::p99Micros)))
              .append(" |");
        }
        md.append('\n');
      }
      md.append('\n');
    }

    md.append("## All ratios against the peers\n\n");
    md.append(
        "redlock's figure divided by the peer's, per round, then the median. For latency"
            + " (p50) lower is better for redlock; for throughput higher is better.\n\n");
    md.append(
        "| Scenario | Metric | Peer | Median | Per round |\n| --- | --- | --- | --- | --- |\n");
    for (String s : results.scenarios()) {
      if (!results.has(s, OURS)) {
        continue;
      }
      boolean latency = s.equals(LATENCY) || s.startsWith("nodes-");
      for (String peer : results.impls(s)) {
        if (peer.equals(OURS)) {
          continue;
        }
        double[] r = results.ratios(s, OURS, s, peer, latency ? P50 : OPS);
        md.append("| ")
            .append(s)
            .append(" | ")
            .append(latency ? "p50" : "ops/s")
            .append(" | ")
            .append(peer)
            .append(" | ")
            .append(fmtRatio(Results.median(r)))
            .append(" | ")
            .append(perRound(r))
            .append(" |\n");
      }
    }
    md.append('\n');

    md.append("## Allocation on the hot path (JMH)\n\n");
    md.append(jmhSection());

    md.append("## What the figures mean\n\n");
    md.append(
        """
        - **Implementations.** `redlock`: this project (Lettuce transport, restart guard on
          as in production, the servers declared fresh with `Redlock.init`, ttl 10 s).
          `redisson-redlock`: Redisson's `RedissonRedLock` over one `RedissonClient` per node
          (single-server configuration, Redisson defaults otherwise), locked with
          `tryLock(wait, leaseTime)` so that no watchdog runs. `redisson-rlock`: Redisson's
          plain `RLock` on node 1 only.
          `lettuce-raw`: `SET key token NX PX ttl` then `EVALSHA` of a compare-and-delete
          script on node 1, synchronous Lettuce API on one connection: the floor for one node,
          with no quorum and no validity bookkeeping. `lettuce-fanout`: the same two commands
          sent to every node at once, each step waiting for a majority, over connections set
          up as `redlock` sets up those of its rounds (asynchronous API, flushes consolidated,
          no Lettuce timer per command, commands encoded as its transport encodes them): the
          floor of a Redlock cycle with Lettuce, without validity, timeouts or leases.
          `node-redlock-4.2.0` and `node-redlock-5.0.0-beta.2`: the npm `redlock` package's
          two lines (the `latest` tag and the beta) over ioredis, single-threaded event loop,
          measured in the same rotation as the JVM clients (only with `--with-node`).
        - **Latency** is one acquire+release cycle as the caller sees it, in microseconds, from
          HdrHistogram (3 significant digits): p50 is the median cycle, p99 and p99.9 the
          tails. Only cycles that start after the warm-up and end inside the window count.
        - **Throughput** is cycles completed per second of the measured window, all threads
          together. Distinct resources never contend, so it measures the client and the
          servers; one resource measures hand-over under contention (waiters poll with the
          retry delay, except Redisson, which waits on pub/sub).
        - **Medians and ratios.** Every figure is the median over the rounds. A ratio is
          computed inside each round, where both sides ran minutes apart on the same servers,
          and the median of those is reported, so slow drift of the machine cancels out.
        - **Caveat.** The clients, the servers and the harness share the same cores: the
          figures rank implementations on this machine, they are not network latencies.
        """);
    return md.toString();
  }

  private void cpuTable(StringBuilder md) {
    List<String> scenarios =
        results.scenarios().stream()
            .filter(s -> s.equals(LATENCY) || s.startsWith("threads-") || s.equals(CONTENDED))
            .toList();
    if (scenarios.isEmpty()) {
      return;
    }
    md.append("## CPU per cycle\n\n");
    md.append(
        "CPU time per completed cycle during the measured window (median of rounds), in"
            + " µs: the client's JVM + the Redis servers it used, and in brackets the part of"
            + " the JVM's time its JIT compiler threads took (still compiling after the"
            + " warm-up; more for a client with more code). The JVM figure includes the"
            + " threads that drive the client ("
            + (o.fork ? "each client's own JVM" : "the harness's JVM, all clients in it")
            + "); node-redlock runs in another process and is not metered. When the"
            + " cores are saturated, cycles per second are about the cores' time divided by"
            + " this sum: it is what bounds throughput on this machine. The client CPU target"
            + " compares the JVM's time without the JIT compiler's: what a cycle costs once"
            + " compiled.\n\n");
    md.append("| Implementation | Nodes |");
    scenarios.forEach(s -> md.append(' ').append(s).append(" |"));
    md.append("\n| --- | --- |");
    scenarios.forEach(s -> md.append(" --- |"));
    md.append('\n');
    for (String impl : results.impls(scenarios.get(0))) {
      md.append("| ").append(impl).append(" | ").append(nodesOf(impl)).append(" |");
      for (String s : scenarios) {
        double client = results.median(s, impl, Figure::clientCpuMicros);
        double server = results.median(s, impl, Figure::serverCpuMicros);
        double compiler = results.median(s, impl, Figure::compilerCpuMicros);
        md.append(' ')
            .append(
                Double.isNaN(client)
                    ? "–"
                    : Chart.fmt(client)
                        + " + "
                        + Chart.fmt(server)
                        + (Double.isNaN(compiler) ? "" : " (JIT " + Chart.fmt(compiler) + ")"))
            .append(" |");
      }
      md.append('\n');
    }
    md.append('\n');
  }

  private void latencyTable(StringBuilder md, String scenario) {
    md.append(
        "| Implementation | Nodes | p50 µs | p99 µs | p99.9 µs | ops/s | p50 per round"
            + " |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (String impl : results.impls(scenario)) {
      Figure[] rounds = results.rounds(scenario, impl);
      StringJoiner per = new StringJoiner(", ");
      for (Figure f : rounds) {
        per.add(f == null ? "–" : Chart.fmt(f.p50Micros()));
      }
      md.append("| ")
          .append(impl)
          .append(" | ")
          .append(nodesOf(impl))
          .append(" | ")
          .append(Chart.fmt(results.median(scenario, impl, P50)))
          .append(" | ")
          .append(Chart.fmt(results.median(scenario, impl, Figure::p99Micros)))
          .append(" | ")
          .append(Chart.fmt(results.median(scenario, impl, Figure::p999Micros)))
          .append(" | ")
          .append(Chart.fmt(results.median(scenario, impl, OPS)))
          .append(" | ")
          .append(per)
          .append(" |\n");
    }
    md.append('\n');
  }

  private int nodesOf(String impl) {
    return impl.equals(REDISSON_RLOCK) || impl.equals(LETTUCE_RAW) ? 1 : o.nodes;
  }

  private List<Integer> sweptNodes() {
    List<Integer> out = new ArrayList<>();
    for (int n : o.sweep) {
      if (results.scenarios().contains(LoadHarness.sweepScenario(n))) {
        out.add(n);
      }
    }
    return out;
  }

  String svg() {
    List<Integer> swept = sweptNodes();
    List<String> sweepImpls =
        swept.isEmpty() ? List.of() : results.impls(LoadHarness.sweepScenario(swept.get(0)));
    double[][] p50 = new double[sweepImpls.size()][swept.size()];
    for (int k = 0; k < sweepImpls.size(); k++) {
      for (int i = 0; i < swept.size(); i++) {
        p50[k][i] = results.median(LoadHarness.sweepScenario(swept.get(i)), sweepImpls.get(k), P50);
      }
    }
    List<String> groups = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    for (String s : results.scenarios()) {
      if (s.startsWith("threads-")) {
        groups.add(s);
        labels.add(s.substring(8) + " thr");
      } else if (s.equals(CONTENDED)) {
        groups.add(s);
        labels.add("contended " + o.contendedThreads);
      }
    }
    List<String> barImpls = groups.isEmpty() ? List.of() : results.impls(groups.get(0));
    double[][] ops = new double[groups.size()][barImpls.size()];
    for (int g = 0; g < groups.size(); g++) {
      for (int k = 0; k < barImpls.size(); k++) {
        ops[g][k] = results.median(groups.get(g), barImpls.get(k), OPS);
      }
    }
    String subtitle =
        "medians of "
            + o.rounds
            + " round(s), "
            + fmtDuration(o.duration)
            + " each; "
            + machine.cores
            + " cores; "
            + machine.date
            + (isSmoke() ? "  —  SMOKE RUN, NOT A MEASUREMENT" : "");
    return Chart.svg(swept, sweepImpls, p50, labels, barImpls, ops, subtitle);
  }

  String summary() {
    StringBuilder s =
        new StringBuilder(isSmoke() ? "Summary (smoke run, not a measurement):\n" : "Summary:\n");
    for (Target t : targets()) {
      s.append(
          String.format(
              Locale.ROOT,
              "  %-80s %s %-5s median %-8s %s%n",
              t.what(),
              t.op(),
              Chart.fmt(t.bound()),
              fmtRatio(t.median()),
              t.verdict()));
    }
    return s.toString();
  }

  /**
   * The headline: one line per target ratio, with its bound. The README links here rather
   * than carrying the figures, so that only this generated page changes with a run.
   */
  private String headline() {
    StringBuilder block = new StringBuilder("## Headline\n\n");
    block.append(
        isSmoke()
            ? "Smoke run only, not a measurement: run `./bench`.\n\n"
            : "Measured "
                + machine.date.substring(0, 10)
                + " on "
                + machine.cores
                + " cores, 5 local redis-server processes, medians of "
                + o.rounds
                + " rounds (each target with its rounds under [Targets](#targets)):\n\n");
    for (Target t : targets()) {
      if (!Double.isNaN(t.median())) {
        block
            .append("- ")
            .append(t.what())
            .append(": **")
            .append(fmtRatio(t.median()))
            .append("** (target ")
            .append(t.op())
            .append(' ')
            .append(Chart.fmt(t.bound()))
            .append(")\n");
      }
    }
    return block.append('\n').toString();
  }

  private String jmhSection() {
    StringBuilder md = new StringBuilder();
    md.append(
        "`java -jar redlock-bench/target/benchmarks.jar -prof gc` (package"
            + " `io.redlock.bench.jmh`) measures what needs no network: the commands the"
            + " Lettuce transport encodes per call and per batch of 1,000 auto-extensions (its"
            + " codec and script arguments, internal to it, reached by reflection; beside them"
            + " the same batch with Lettuce's own arguments, and a batch to five nodes encoded"
            + " once against once per node), and a whole acquire+release"
            + " through the public API, `Redlock` over 5 in-memory nodes that answer at once"
            + " (the token, two rounds of 5 votes with their deadlines, validity, lease and"
            + " tracking). `gc.alloc.rate.norm` is the bytes allocated per operation; for"
            + " `FullCycleBench.acquireRelease` that is bytes per acquire+release, without the"
            + " transport.\n\n");
    if (o.jmh == null || !Files.isRegularFile(o.jmh)) {
      md.append(
          "No JMH result was given to this run (`--jmh target/jmh.json`, written by"
              + " `./bench`).\n\n");
      return md.toString();
    }
    try {
      String json = Files.readString(o.jmh);
      md.append(
          "| Benchmark | Threads | Score | Unit | Bytes allocated per op |\n"
              + "| --- | --- | --- | --- | --- |\n");
      String[] entries = json.split("\"jmhVersion\"");
      for (int i = 1; i < entries.length; i++) {
        String e = entries[i];
        String name = group(e, "\"benchmark\"\\s*:\\s*\"([^\"]+)\"");
        String threads = group(e, "\"threads\"\\s*:\\s*([0-9]+)");
        String score = group(e, "\"primaryMetric\"\\s*:\\s*\\{\\s*\"score\"\\s*:\\s*([-0-9.eE+]+)");
        String unit = group(e, "\"scoreUnit\"\\s*:\\s*\"([^\"]+)\"");
        String alloc =
            group(e, "gc\\.alloc\\.rate\\.norm\"\\s*:\\s*\\{\\s*\"score\"\\s*:\\s*([-0-9.eE+]+)");
        md.append("| ")
            .append(name.replace("io.redlock.bench.jmh.", ""))
            .append(" | ")
            .append(threads)
            .append(" | ")
            .append(num(score))
            .append(" | ")
            .append(unit)
            .append(" | ")
            .append(num(alloc))
            .append(" |\n");
      }
      md.append('\n');
    } catch (IOException e) {
      md.append("Could not read ").append(o.jmh).append(": ").append(e).append("\n\n");
    }
    return md.toString();
  }

  private static String group(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    return m.find() ? m.group(1) : "";
  }

  private static String num(String text) {
    try {
      return Chart.fmt(Double.parseDouble(text));
    } catch (NumberFormatException e) {
      return "–";
    }
  }

  /**
   * A dependency's version, from the pom.properties Maven puts in every jar (the shaded
   * benchmarks jar keeps them; its manifest no longer says).
   */
  private static String version(String groupId, String artifactId) {
    String resource = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
    try (java.io.InputStream in = Report.class.getResourceAsStream(resource)) {
      if (in == null) {
        return "?";
      }
      java.util.Properties properties = new java.util.Properties();
      properties.load(in);
      return properties.getProperty("version", "?");
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  private static String perRound(double[] values) {
    StringJoiner j = new StringJoiner(", ");
    for (double v : values) {
      j.add(fmtRatio(v));
    }
    return j.toString();
  }

  private static String fmtRatio(double v) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.3g×", v);
  }

  private static String fmtDuration(java.time.Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
  }
}
