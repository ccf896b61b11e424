package io.redlock.bench;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Turns the runs of {@link HeldHarness} into its marked section of docs/performance.md and
 * docs/performance-held.svg (cost against held leases, log-log, one line per implementation).
 */
final class HeldReport {
  private final HeldHarness.Options o;
  private final List<HeldHarness.Run> runs;
  private final List<HeldHarness.NotHeld> notHeld;
  private final String load;
  private final Instant started;
  private final double minutes;
  private final String redisVersion;

  HeldReport(
      HeldHarness.Options o,
      List<HeldHarness.Run> runs,
      List<HeldHarness.NotHeld> notHeld,
      String load,
      Instant started,
      double minutes,
      String redisVersion) {
    this.o = o;
    this.runs = List.copyOf(runs);
    this.notHeld = List.copyOf(notHeld);
    this.load = load;
    this.started = started;
    this.minutes = minutes;
    this.redisVersion = redisVersion;
  }

  /** One metric: how it is named, read and formatted. */
  private record Metric(String label, ToDoubleFunction<HeldHarness.Run> value) {}

  private static final Metric CLIENT =
      new Metric("client CPU per second", HeldHarness.Run::clientCpuMsPerSecond);
  private static final Metric SERVER =
      new Metric("server CPU per second", HeldHarness.Run::serverCpuMsPerSecond);
  private static final Metric SCRIPTS =
      new Metric("scripts per second per node", HeldHarness.Run::scriptsPerSecondPerNode);
  private static final Metric COMMANDS =
      new Metric("commands per second per node", HeldHarness.Run::commandsPerSecondPerNode);
  private static final Metric HEAP =
      new Metric("heap per held lock", HeldHarness.Run::heapBytesPerLock);
  private static final Metric PER_EXTENSION =
      new Metric("client CPU per lease extension", HeldHarness.Run::clientCpuMicrosPerExtension);
  private static final Metric SERVER_PER_EXTENSION =
      new Metric("server CPU per lease extension", HeldHarness.Run::serverCpuMicrosPerExtension);

  /** A bound on a ratio ours / peer, at one size. */
  private record Target(int held, Metric metric, String peer, String op, double bound) {}

  /**
   * What this library should reach against Redisson's watchdog on the same five nodes
   * (docs/performance.md says why these bounds).
   */
  private List<Target> targets() {
    List<Target> t = new ArrayList<>();
    int largest = o.held.get(o.held.size() - 1);
    String peer = HeldLocks.REDISSON_REDLOCK;
    t.add(new Target(largest, CLIENT, peer, "≤", 1.0));
    t.add(new Target(largest, SERVER, peer, "≤", 1.0));
    t.add(new Target(largest, HEAP, peer, "≤", 1.0));
    t.add(new Target(largest, PER_EXTENSION, peer, "≤", 0.2));
    // At the same extension rate, lease for lease: what one extension costs each side (per
    // extension made, so that a peer that falls behind does not look cheaper for it).
    String same = HeldLocks.REDISSON_REDLOCK_SAME_RATE;
    for (int held : o.held) {
      t.add(new Target(held, PER_EXTENSION, same, "≤", 1.0));
      t.add(new Target(held, SERVER_PER_EXTENSION, same, "≤", 1.0));
    }
    return t;
  }

  String section() {
    StringBuilder md = new StringBuilder();
    md.append(MarkedSection.HELD.begin()).append('\n');
    md.append("## Many leases held at once\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "Made by `HeldHarness` (`./bench --held`) on %s, load average at start %s, %d"
                + " round(s), %.1f min, redis-server %s (5 local processes, no persistence)."
                + " Command line: `%s`.\n\n",
            started,
            load,
            o.rounds,
            minutes,
            redisVersion,
            o.commandLine.isEmpty() ? "(defaults)" : o.commandLine));
    md.append(
        String.format(
            Locale.ROOT,
            "Each implementation takes N locks (%d at a time), each kept alive by its own"
                + " watchdog, waits %d s, then is measured for %d s, in a JVM of its own"
                + " (-Xmx%s) started for that one measurement; within a round the"
                + " implementations take turns, in an order that rotates. `redlock`: this"
                + " library with its defaults (restart guard on, servers declared fresh) and a"
                + " ttl of %s, each lease on `autoExtend()`: extended when half its ttl is"
                + " left, about once a second. `redisson-redlock-watchdog`: Redisson's"
                + " `RedissonRedLock` over the same five nodes, taken with `lock()` (no lease"
                + " time), so that Redisson's watchdog renews every lock with its default"
                + " timeout (30 s: renewed every 10 s, up to 100 locks per script)."
                + " `redisson-redlock-same-rate`: the same, with the watchdog timeout set to"
                + " 1.5 times this library's ttl, so that it renews each lock as often as this"
                + " library extends each lease: the comparison lease for lease."
                + " `redisson-rlock-watchdog`: Redisson's `RLock.lock()` on one node, the"
                + " same way as the first. `lettuce-batch-floor`: the floor, this library's"
                + " extension script sent by raw Lettuce to every node for chunks of %,d keys"
                + " in the order taken, each chunk every half ttl, nothing else (no lease"
                + " judged, no node timeout, restart guard, listener or log).\n\n",
            HeldLocks.IN_FLIGHT,
            o.settle.toSeconds(),
            o.window.toSeconds(),
            o.clientHeap,
            fmtDuration(o.ttl),
            HeldFloor.CHUNK));
    md.append(
        "Client CPU is the client JVM's process CPU time per second of the window (its GC and"
            + " JIT threads included). Server CPU is the CPU time per second of the"
            + " redis-server processes the implementation uses (5, or 1 for `RLock`), from"
            + " `/proc/<pid>/stat`. Scripts and commands are per node and second, from `INFO"
            + " commandstats` (commands count those a script runs, as Redis does; the"
            + " harness's own are taken out); `redlock`'s include its restart guard's probe,"
            + " about 2 scripts and 10 commands a second per node. Lease extensions are"
            + " `PEXPIRE`s per node and second: each held lock's extensions per second. Heap"
            + " per held lock is the heap in use after a full GC with the locks held, minus"
            + " the same before they were taken, divided by N: what a lock retains, the"
            + " `Lease` or `RLock` the application keeps included. Expired keys are keys of"
            + " the run that expired on any of its nodes from the first acquisition to the"
            + " end of the window: an extension that came too late there. Lost is what the"
            + " client found lost at the end (`Lease.isValid()`; Redisson and the floor cannot tell, –).\n\n");

    md.append(
        "| Held | Implementation | Nodes | Client CPU ms/s | Server CPU ms/s | Scripts/s per"
            + " node | Commands/s per node | Lease extensions/s | Client CPU µs per"
            + " extension | Server CPU µs per extension | Heap per lock, bytes | Expired keys |"
            + " Lost | Acquired in |\n");
    md.append(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            + " ---: | ---: |\n");
    for (int held : o.held) {
      for (String impl : o.impls) {
        List<HeldHarness.Run> mine = runs(impl, held);
        if (mine.isEmpty()) {
          continue;
        }
        long lost = 0;
        boolean lostKnown = true;
        long expired = 0;
        for (HeldHarness.Run r : mine) {
          expired += r.expiredKeys();
          lostKnown &= r.lost() >= 0;
          lost += Math.max(0, r.lost());
        }
        md.append(
            String.format(
                Locale.ROOT,
                "| %,d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n",
                held,
                impl,
                mine.get(0).nodes(),
                Chart.fmt(median(mine, CLIENT)),
                Chart.fmt(median(mine, SERVER)),
                Chart.fmt(median(mine, SCRIPTS)),
                Chart.fmt(median(mine, COMMANDS)),
                Chart.fmt(median(mine, r -> r.extensionsPerSecondPerNode())),
                Chart.fmt(median(mine, PER_EXTENSION)),
                Chart.fmt(median(mine, SERVER_PER_EXTENSION)),
                Chart.fmt(median(mine, HEAP)),
                expired,
                lostKnown ? Long.toString(lost) : "–",
                String.format(Locale.ROOT, "%.1f s", median(mine, r -> r.acquireSeconds()))));
      }
    }
    md.append('\n');
    for (HeldHarness.NotHeld n : notHeld) {
      md.append(
          String.format(
              Locale.ROOT,
              "Not measured: `%s` could not hold %,d in round %d, and its client ended: %s%n%n",
              n.impl(),
              n.held(),
              n.round() + 1,
              n.reason().replace("|", "\\|")));
    }

    md.append("Ratios, `redlock` / peer, computed within each round, median of the rounds:\n\n");
    md.append(
        "| Held | Peer | Client CPU/s | Server CPU/s | Scripts/s per node | Commands/s per node |"
            + " Heap per lock | Client CPU per extension | Server CPU per extension |\n");
    md.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int held : o.held) {
      for (String peer : o.impls) {
        if (peer.equals(HeldLocks.REDLOCK) || runs(peer, held).isEmpty()) {
          continue;
        }
        md.append(String.format(Locale.ROOT, "| %,d | %s", held, peer));
        for (Metric m :
            List.of(CLIENT, SERVER, SCRIPTS, COMMANDS, HEAP, PER_EXTENSION, SERVER_PER_EXTENSION)) {
          md.append(" | ").append(fmtRatio(ratio(held, m, peer)));
        }
        md.append(" |\n");
      }
    }
    md.append('\n');

    beside(md);

    md.append("| Target | Bound | Ratio | Verdict |\n| --- | --- | --- | --- |\n");
    for (Target t : targets()) {
      double r = ratio(t.held(), t.metric(), t.peer());
      boolean met = t.op().equals("≤") ? r <= t.bound() : r >= t.bound();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s at %,d held, redlock / %s | %s %s | %s | %s |\n",
              t.metric().label(),
              t.held(),
              t.peer(),
              t.op(),
              Chart.fmt(t.bound()),
              fmtRatio(r),
              Double.isNaN(r) ? "not measured" : met ? "met" : "**not met**"));
    }
    long expired =
        runs.stream()
            .filter(r -> r.impl().equals(HeldLocks.REDLOCK))
            .mapToLong(HeldHarness.Run::expiredKeys)
            .sum();
    long lost =
        runs.stream()
            .filter(r -> r.impl().equals(HeldLocks.REDLOCK))
            .mapToLong(r -> Math.max(0, r.lost()))
            .sum();
    md.append(
        String.format(
            Locale.ROOT,
            "| keys expired on a node, redlock, every size (the peers' are in the first table)"
                + " | = 0 | %d | %s |\n",
            expired,
            expired == 0 ? "met" : "**not met**"));
    md.append(
        String.format(
            Locale.ROOT,
            "| leases lost, redlock, every size | = 0 | %d | %s |\n",
            lost,
            lost == 0 ? "met" : "**not met**"));
    int largest = o.held.get(o.held.size() - 1);
    double besideRatio = besideRatio(HeldLocks.REDLOCK, largest);
    md.append(
        String.format(
            Locale.ROOT,
            "| p99 of a lock taken beside %,d held, redlock, holding client / peer | ≤ %s | %s |"
                + " %s |\n",
            largest,
            Chart.fmt(BESIDE_BOUND),
            fmtRatio(besideRatio),
            Double.isNaN(besideRatio)
                ? "not measured"
                : besideRatio <= BESIDE_BOUND ? "met" : "**not met**"));
    long fellShort = notHeld.stream().filter(n -> n.impl().equals(HeldLocks.REDLOCK)).count();
    md.append(
        String.format(
            Locale.ROOT,
            "| measurements in which redlock could not take every lease, every size | = 0 | %d |"
                + " %s |\n\n",
            fellShort,
            fellShort == 0 ? "met" : "**not met**"));
    floors(md);
    floorReading(md);
    md.append(
        "![client CPU, server CPU and scripts per node against held leases](performance-held.svg)\n");
    md.append(MarkedSection.HELD.end()).append('\n');
    return md.toString();
  }

  /**
   * The bound on a lock's p99 taken on the client that holds many leases against the same on a
   * peer with connections of its own: the held leases' extensions may cost a lock beside them
   * about half as long again, not more.
   */
  static final double BESIDE_BOUND = 1.5;

  /** The table of locks taken beside the held ones ({@link HeldClient.Beside}), when measured. */
  private void beside(StringBuilder md) {
    if (runs.stream().noneMatch(r -> r.beside() != null)) {
      return;
    }
    md.append(
        String.format(
            Locale.ROOT,
            "A lock taken beside the held locks: after the window, with the locks still held,"
                + " %,d locks taken (no wait; this library's `tryAcquire`, Redisson's"
                + " `tryLock(0, ttl)`) and released one at a time on the client that holds"
                + " them (this library sends their extensions on connections of their own,"
                + " beside those of the locks), and as many on a peer in the same JVM with connections of its own and"
                + " no lock held, the two in turn, each first every other pair, a pair every"
                + " 10 ms at most; times in ms, medians of the rounds (the ratio: median of the rounds'"
                + " ratios). Failed: not granted (a node silent past its timeout, most often),"
                + " summed over the rounds.%n%n",
            o.beside));
    md.append(
        "| Held | Implementation | Holding client p50 | p99 | Longest | Failed | Peer p50 | p99 |"
            + " Longest | Failed | p99, holding / peer |\n");
    md.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int held : o.held) {
      for (String impl : o.impls) {
        List<HeldHarness.Run> mine =
            runs(impl, held).stream().filter(r -> r.beside() != null).toList();
        if (mine.isEmpty()) {
          continue;
        }
        md.append(String.format(Locale.ROOT, "| %,d | %s", held, impl));
        for (boolean holding : new boolean[] {true, false}) {
          java.util.function.Function<HeldHarness.Run, HeldClient.Attempts> side =
              r -> holding ? r.beside().holding() : r.beside().peer();
          md.append(" | ").append(Chart.fmt(median(mine, r -> side.apply(r).p50Nanos() / 1e6)));
          md.append(" | ").append(Chart.fmt(median(mine, r -> side.apply(r).p99Nanos() / 1e6)));
          md.append(" | ").append(Chart.fmt(median(mine, r -> side.apply(r).maxNanos() / 1e6)));
          md.append(" | ").append(mine.stream().mapToInt(r -> side.apply(r).failed()).sum());
        }
        md.append(" | ").append(fmtRatio(besideRatio(impl, held))).append(" |\n");
      }
    }
    md.append('\n');
  }

  /** The median over the rounds of {@code impl}'s p99 beside {@code held}, holding / peer. */
  private double besideRatio(String impl, int held) {
    List<HeldHarness.Run> mine = runs(impl, held).stream().filter(r -> r.beside() != null).toList();
    if (mine.isEmpty()) {
      return Double.NaN;
    }
    return median(
        mine, r -> r.beside().holding().p99Nanos() / (double) r.beside().peer().p99Nanos());
  }

  /**
   * Each target against the floor of the same run ({@link HeldFloor}): the floor's ratio to the
   * same peer, and ours to the floor. A bound the floor misses too is a cost of extending this
   * often with these scripts on these nodes; one the floor meets and ours misses is the
   * library's own. The heap target is left out: the floor keeps no lease for an application.
   */
  private void floorReading(StringBuilder md) {
    String floor = HeldLocks.FLOOR;
    if (runs.stream().noneMatch(r -> r.impl().equals(floor))) {
      return;
    }
    md.append(
        "The targets against the floor of the same run (`"
            + floor
            + "`: this library's extension scripts, chunks of "
            + HeldFloor.CHUNK
            + " keys every half ttl, sent by raw Lettuce; nothing else), the ratios computed"
            + " within each round, medians of the rounds:\n\n");
    md.append(
        "| Target | Bound | Floor / peer | redlock / floor | Reading |\n"
            + "| --- | --- | ---: | ---: | --- |\n");
    for (Target t : targets()) {
      if (t.metric() == HEAP) {
        continue;
      }
      double ours = ratio(t.held(), t.metric(), t.peer());
      double floorRatio = ratio(floor, t.held(), t.metric(), t.peer());
      double oursToFloor = ratio(HeldLocks.REDLOCK, t.held(), t.metric(), floor);
      String reading;
      if (Double.isNaN(ours) || Double.isNaN(floorRatio)) {
        reading = "not measured";
      } else if (ours <= t.bound()) {
        reading = "met";
      } else if (floorRatio > t.bound()) {
        reading = "the floor misses the bound too";
      } else {
        reading = "**the floor meets the bound: the library's own cost**";
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %s at %,d held, / %s | %s %s | %s | %s | %s |\n",
              t.metric().label(),
              t.held(),
              t.peer(),
              t.op(),
              Chart.fmt(t.bound()),
              fmtRatio(floorRatio),
              fmtRatio(oursToFloor),
              reading));
    }
    md.append('\n');
  }

  /**
   * For each size at which {@code redlock} lost leases, let keys expire or could not take every
   * lease: the CPU its cost per held lease, measured in this run at the largest size that lost
   * nothing, would need there, against the cores of this machine (which also runs the five
   * servers).
   */
  private void floors(StringBuilder md) {
    int cores = Runtime.getRuntime().availableProcessors();
    for (int held : o.held) {
      if (sound(held)) {
        continue;
      }
      int largestSound = -1;
      for (int smaller : o.held) {
        if (smaller < held && !runs(HeldLocks.REDLOCK, smaller).isEmpty() && sound(smaller)) {
          largestSound = Math.max(largestSound, smaller);
        }
      }
      if (largestSound < 0) {
        md.append(
            String.format(
                Locale.ROOT,
                "At %,d held, leases were lost or could not all be taken, and no smaller size of"
                    + " this run kept every one to"
                    + " say what they would need.%n%n",
                held));
        continue;
      }
      List<HeldHarness.Run> base = runs(HeldLocks.REDLOCK, largestSound);
      double perLease =
          (median(base, CLIENT) + median(base, SERVER)) / largestSound; // ms/s per lease
      double need = perLease * held;
      md.append(
          String.format(
              Locale.ROOT,
              "Floor at %,d held: at %,d held, with nothing lost, the client and the servers"
                  + " together used %s ms of CPU a second per thousand leases; %,d leases"
                  + " extended as often need %s ms/s, %.2f cores, on a machine of %d cores that"
                  + " runs the client and the five servers: %s%n%n",
              held,
              largestSound,
              Chart.fmt(perLease * 1000),
              held,
              Chart.fmt(need),
              need / 1000,
              cores,
              need >= 1000.0 * cores * 0.8
                  ? "at that cost, more than this machine can give (above 80 % of its cores)."
                      + " An estimate only: larger batches cost less per lease, so a loss at"
                      + " this size still needs its cause read from the run's log."
                  : "within what this machine can give, so the losses are the library's to"
                      + " explain."));
    }
  }

  /** Whether {@code redlock} took and kept every lease at {@code held} in every round. */
  private boolean sound(int held) {
    return !ourNotHeld(held)
        && runs(HeldLocks.REDLOCK, held).stream()
            .allMatch(r -> r.lost() == 0 && r.expiredKeys() == 0);
  }

  private boolean ourNotHeld(int held) {
    return notHeld.stream().anyMatch(n -> n.impl().equals(HeldLocks.REDLOCK) && n.held() == held);
  }

  private List<HeldHarness.Run> runs(String impl, int held) {
    return runs.stream().filter(r -> r.impl().equals(impl) && r.held() == held).toList();
  }

  private static double median(List<HeldHarness.Run> runs, Metric m) {
    return median(runs, m.value());
  }

  private static double median(
      List<HeldHarness.Run> runs, ToDoubleFunction<HeldHarness.Run> value) {
    return Results.median(runs.stream().mapToDouble(value).toArray());
  }

  /** Ours / {@code peer} for {@code m} at {@code held}, per round, then the median. */
  private double ratio(int held, Metric m, String peer) {
    return ratio(HeldLocks.REDLOCK, held, m, peer);
  }

  /** {@code impl} / {@code peer} for {@code m} at {@code held}, per round, then the median. */
  private double ratio(String impl, int held, Metric m, String peer) {
    List<Double> perRound = new ArrayList<>();
    for (int r = 0; r < o.rounds; r++) {
      int round = r;
      double ours = value(impl, held, round, m);
      double theirs = value(peer, held, round, m);
      // A client that made no extension has no cost per extension: no ratio that round.
      if (Double.isFinite(ours) && Double.isFinite(theirs) && theirs != 0) {
        perRound.add(ours / theirs);
      }
    }
    return perRound.isEmpty() ? Double.NaN : Results.median(perRound);
  }

  private double value(String impl, int held, int round, Metric m) {
    return runs.stream()
        .filter(r -> r.impl().equals(impl) && r.held() == held && r.round() == round)
        .mapToDouble(m.value())
        .findFirst()
        .orElse(Double.NaN);
  }

  private static String fmtRatio(double v) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.3g×", v);
  }

  private static String fmtDuration(java.time.Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
  }

  // ---- the chart ----

  private static final int PANEL_W = 330;
  private static final int H = 330;
  private static final int LEFT = 60;
  private static final int TOP = 40;
  private static final int PLOT_W = 240;
  private static final int PLOT_H = 210;

  /** Three log-log panels: client CPU, server CPU and scripts per node against held leases. */
  String svg() {
    List<Metric> panels = List.of(CLIENT, SERVER, SCRIPTS);
    List<String> units = List.of("ms/s", "ms/s", "/s");
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " font-family=\"sans-serif\" font-size=\"11\">%n",
            panels.size() * PANEL_W,
            H + 20));
    s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"10\" y=\"%d\" fill=\"#555\">held-lease scenario, %s, medians of %d"
                + " round(s); log scales</text>%n",
            H + 12,
            started,
            o.rounds));
    for (int p = 0; p < panels.size(); p++) {
      panel(s, p * PANEL_W, panels.get(p), units.get(p));
    }
    s.append("</svg>\n");
    return s.toString();
  }

  private void panel(StringBuilder s, int offset, Metric m, String unit) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    for (int held : o.held) {
      for (String impl : o.impls) {
        double v = median(runs(impl, held), m);
        if (v > 0) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    if (hi == 0) {
      return;
    }
    double yMin = Math.pow(10, Math.floor(Math.log10(lo)));
    double yMax = Math.pow(10, Math.ceil(Math.log10(hi)));
    if (yMax <= yMin) {
      yMax = yMin * 10;
    }
    double xMin = Math.log10(o.held.get(0));
    double xMax = Math.log10(o.held.get(o.held.size() - 1));
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"20\" font-size=\"13\" font-weight=\"bold\">%s (%s)</text>%n",
            offset + 10,
            escape(m.label()),
            escape(unit)));
    int x0 = offset + LEFT;
    int y0 = TOP + PLOT_H;
    s.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n"
                + "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
            x0,
            TOP,
            x0,
            y0,
            x0,
            y0,
            x0 + PLOT_W,
            y0));
    for (double v = yMin; v <= yMax * 1.0001; v *= 10) {
      double y = y(v, yMin, yMax);
      s.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
              x0,
              y,
              x0 + PLOT_W,
              y,
              x0 - 4,
              y + 4,
              Chart.fmt(v)));
    }
    for (int held : o.held) {
      double x = x(held, xMin, xMax, offset);
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
              x,
              y0 + 14,
              held >= 1000 ? (held / 1000) + "k" : Integer.toString(held)));
    }
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">leases held</text>%n",
            x0 + PLOT_W / 2,
            y0 + 30));
    for (int k = 0; k < o.impls.size(); k++) {
      String impl = o.impls.get(k);
      String colour = colour(impl);
      StringBuilder points = new StringBuilder();
      for (int held : o.held) {
        double v = median(runs(impl, held), m);
        if (!(v > 0)) {
          continue;
        }
        double x = x(held, xMin, xMax, offset);
        double y = y(v, yMin, yMax);
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        s.append(
            String.format(
                Locale.ROOT,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s, %,d held: %s %s"
                    + "</title></circle>%n",
                x,
                y,
                colour,
                escape(impl),
                held,
                Chart.fmt(v),
                escape(unit)));
      }
      s.append(
          String.format(
              Locale.ROOT,
              "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n",
              points.toString().trim(),
              colour));
      int ly = y0 + 48 + k * 15;
      s.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                  + "<text x=\"%d\" y=\"%d\">%s</text>%n",
              x0,
              ly - 9,
              colour,
              x0 + 14,
              ly,
              escape(impl)));
    }
  }

  private static double x(int held, double xMin, double xMax, int offset) {
    double share = xMax == xMin ? 0.5 : (Math.log10(held) - xMin) / (xMax - xMin);
    return offset + LEFT + share * PLOT_W;
  }

  private static double y(double v, double yMin, double yMax) {
    double share = (Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin));
    return TOP + PLOT_H - share * PLOT_H;
  }

  private static String colour(String impl) {
    return switch (impl) {
      case HeldLocks.REDLOCK -> "#1f77b4";
      case HeldLocks.REDISSON_REDLOCK -> "#d62728";
      case HeldLocks.REDISSON_RLOCK -> "#2ca02c";
      case HeldLocks.REDISSON_REDLOCK_SAME_RATE -> "#ff7f0e";
      default -> "#7f7f7f";
    };
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
