package io.redlock.torture;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.FaultLog;
import io.redlock.testkit.History;
import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.SafetyChecker;
import io.redlock.testkit.Violation;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A Jepsen-style run against real Redis: N redis-server processes, each client reaching them
 * through its own fault proxies, clients that lock and work, a nemesis that injects faults
 * (at random, or as scripted by a {@link FaultPlan}), and {@link SafetyChecker} deciding on the
 * recorded history. A {@link TortureListener} hears what happens while it runs.
 *
 * <p>Each client has its own {@link Redlock} (its own connections, timer and restart guard),
 * unless {@link TortureOptions#redlocks()} has a few shared. Clients run as threads of this
 * JVM or, with {@link TortureOptions#processes()}, spread over separate JVM processes
 * ({@link ClientProcess}) whose histories are merged at the end. All
 * instants are {@link System#nanoTime()} values, which on Linux compare across processes.
 */
public final class TortureRun {

  /** How a run is doing, about once a second. */
  public record Progress(Duration elapsed, long attempts, long acquisitions, int faults) {}

  private TortureRun() {}

  static RedlockConfig config(TortureOptions options, List<String> nodes) {
    return RedlockConfig.builder()
        .nodes(nodes)
        .ttl(options.ttl())
        // the window of the restart guard: one ttl, as every client uses the same one
        .maxTtl(options.ttl())
        .restartGuard(options.restartGuard())
        .retryCount(3)
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(10))
        .connectTimeout(Duration.ofSeconds(2))
        .fencing(options.fencing())
        .build();
  }

  /**
   * How long the restart guard of the run's clients holds a restarted node back: their
   * {@code maxTtl} (the run's ttl) plus its drift margin.
   */
  public static Duration restartGuardWindow(TortureOptions options) {
    RedlockConfig config = config(options, List.of("redis://127.0.0.1:6379")); // nodes unused
    return config.maxTtl().plus(config.driftFor(config.maxTtl()));
  }

  /**
   * The quorum of the run's clients over its {@link TortureOptions#nodes()} nodes, as
   * {@link RedlockConfig#quorum()} counts it.
   *
   * @since 0.1.0
   */
  public static int quorum(TortureOptions options) {
    List<String> nodes = new java.util.ArrayList<>();
    for (int i = 0; i < options.nodes(); i++) {
      nodes.add("redis://127.0.0.1:" + (6379 + i)); // only their number matters
    }
    return config(options, nodes).quorum();
  }

  /**
   * Runs the torture with random faults ({@link FaultPlan#random()}) and returns what
   * happened; every server, proxy and client process it started is stopped when it returns,
   * also when it throws.
   */
  public static TortureResult run(TortureOptions options, Consumer<Progress> progress)
      throws InterruptedException {
    return run(options, FaultPlan.random(), progressOnly(progress));
  }

  /** A listener that hands {@code progress} every progress report and ignores the rest. */
  static TortureListener progressOnly(Consumer<Progress> progress) {
    return new TortureListener() {
      @Override
      public void progress(Progress now) {
        progress.accept(now);
      }
    };
  }

  /**
   * Runs the torture with the faults of {@code plan}, telling {@code listener} what happens,
   * and returns what happened; every server, proxy and client process it started is stopped
   * when it returns, also when it throws.
   *
   * @throws IllegalArgumentException if a scripted step names a node the run does not have
   */
  public static TortureResult run(TortureOptions options, FaultPlan plan, TortureListener listener)
      throws InterruptedException {
    if (plan instanceof FaultPlan.Script script) {
      for (FaultPlan.Step step : script.steps()) {
        if (step.action() != FaultPlan.Action.PAUSE_CLIENT && step.node() >= options.nodes()) {
          throw new IllegalArgumentException(
              "step " + step + " names a node beyond the " + options.nodes() + " of the run");
        }
      }
    }
    History history = new History();
    TortureCounters counters = new TortureCounters();
    // Declared fresh after start, as 'redlock init' does for a new cluster: the nodes count
    // at once; a node restarted empty by the nemesis loses the marker and is held back.
    try (RedisServers servers =
            RedisServers.builder()
                .count(options.nodes())
                .appendOnly(options.persistence())
                .fresh(true)
                .start();
        ProxiedFleet proxies = ProxiedFleet.of(servers, new FaultLog())) {
      List<String> resources = new ArrayList<>();
      for (int i = 0; i < options.resources(); i++) {
        resources.add(options.resourcePrefix() + i);
      }
      Setting setting =
          new Setting(options, servers, proxies, resources, history, counters, plan, listener);
      try (Redlock probe = Redlock.create(config(options, setting.urisFor("warm-up")))) {
        awaitUsable(probe, options);
      }
      return options.processes() == 0 ? inThreads(setting) : inProcesses(setting);
    }
  }

  /** What one run works with, handed from {@link #run} to the way its clients run. */
  private record Setting(
      TortureOptions options,
      RedisServers servers,
      ProxiedFleet proxies,
      List<String> resources,
      History history,
      TortureCounters counters,
      FaultPlan plan,
      TortureListener listener) {

    Nemesis nemesis(List<? extends ClientHandle> clients, long end) {
      return new Nemesis(servers, proxies, clients, options, end, plan, listener);
    }

    /** The URIs through which the client (or Redlock) of this name reaches the nodes. */
    List<String> urisFor(String name) {
      return options.proxies() ? proxies.urisFor(name) : servers.uris();
    }
  }

  private static TortureResult inThreads(Setting setting) throws InterruptedException {
    TortureOptions options = setting.options();
    List<Redlock> redlocks = new ArrayList<>();
    try {
      // Each client its own Redlock, reaching the nodes through its own proxies; or a few
      // Redlocks shared round robin, each through proxies of its own (or none: see proxies).
      int count = options.redlocks() == 0 ? options.clients() : options.redlocks();
      for (int k = 0; k < count; k++) {
        String proxiesName = options.redlocks() == 0 ? options.clientPrefix() + k : "redlock-" + k;
        redlocks.add(Redlock.create(config(options, setting.urisFor(proxiesName))));
      }
      List<TortureClient> clients = new ArrayList<>();
      FencedStore store = options.fencing() ? new FencedStore() : null;
      long start = System.nanoTime();
      long end = start + options.duration().toNanos();
      for (int i = 0; i < options.clients(); i++) {
        clients.add(
            new TortureClient(
                options.clientPrefix() + i,
                redlocks.get(i % count),
                setting.resources(),
                options,
                setting.history(),
                setting.counters(),
                options.seed() * 1_000 + i,
                end,
                setting.listener(),
                store));
      }
      List<Thread> threads = new ArrayList<>();
      for (TortureClient client : clients) {
        threads.add(new Thread(client, "torture-" + client.name()));
      }
      Nemesis nemesis = setting.nemesis(clients, end);
      HeapMeter heap = new HeapMeter();
      setting.listener().started(setting.servers(), start);
      runAll(threads, nemesis, start, setting.counters(), setting.listener(), heap);
      return result(
          options, start, setting.counters(), nemesis, setting.history(), store, heap.end());
    } finally {
      redlocks.forEach(Redlock::close);
    }
  }

  private static TortureResult inProcesses(Setting setting) throws InterruptedException {
    TortureOptions options = setting.options();
    List<String> resources = setting.resources();
    Path dir;
    try {
      dir = Files.createTempDirectory("redlock-torture-");
    } catch (IOException e) {
      throw new IllegalStateException("could not create a directory for client histories", e);
    }
    List<Process> processes = new ArrayList<>();
    List<RemoteClient> clients = new ArrayList<>();
    List<Thread> readers = new ArrayList<>();
    List<long[]> progressOf = new java.util.concurrent.CopyOnWriteArrayList<>();
    try {
      long start = System.nanoTime();
      for (int p = 0; p < options.processes(); p++) {
        List<String> command =
            new ArrayList<>(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m",
                    "-cp",
                    System.getProperty("java.class.path"),
                    ClientProcess.class.getName(),
                    dir.resolve("history-" + p + ".tsv").toString(),
                    Long.toString(options.duration().toMillis()),
                    Long.toString(options.ttl().toMillis()),
                    Long.toString(options.work().toMillis()),
                    Boolean.toString(options.restartGuard()),
                    Boolean.toString(options.pauseBetweenCheckAndWrite()),
                    Long.toString(options.seed() * 100 + p),
                    String.join(",", resources)));
        List<String> names = new ArrayList<>();
        List<String> clientNodes = new ArrayList<>();
        for (int i = p; i < options.clients(); i += options.processes()) {
          String name = "p" + p + "-" + options.clientPrefix() + i;
          names.add(name);
          clientNodes.add(name + "=" + String.join(",", setting.urisFor(name)));
        }
        // The node URIs carry the servers' password: in the environment, which only this
        // user can read, not on the command line, which ps shows everyone.
        ProcessBuilder builder =
            new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put(ClientProcess.NODES_ENV, String.join(" ", clientNodes));
        Process process = builder.start();
        processes.add(process);
        PrintStream commands =
            new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        List<RemoteClient> mine = new ArrayList<>();
        for (String name : names) {
          mine.add(new RemoteClient(name, commands));
        }
        clients.addAll(mine);
        long[] totals = new long[2];
        progressOf.add(totals);
        Thread reader = new Thread(() -> follow(process, mine, totals), "torture-process-" + p);
        reader.setDaemon(true);
        reader.start();
        readers.add(reader);
      }
      long end = start + options.duration().toNanos();
      Nemesis nemesis = setting.nemesis(clients, end);
      setting.listener().started(setting.servers(), start);
      Thread nemesisThread = new Thread(nemesis, "torture-nemesis");
      nemesisThread.start();
      try {
        for (Process process : processes) {
          while (process.isAlive()) {
            Thread.sleep(1_000);
            long attempts = 0;
            long acquisitions = 0;
            for (long[] totals : progressOf) {
              synchronized (totals) {
                attempts += totals[0];
                acquisitions += totals[1];
              }
            }
            setting
                .listener()
                .progress(
                    new Progress(
                        Duration.ofNanos(System.nanoTime() - start),
                        attempts,
                        acquisitions,
                        nemesis.records().size()));
          }
          if (process.exitValue() != 0) {
            throw new IllegalStateException(
                "a client process failed with exit status "
                    + process.exitValue()
                    + " (its errors are above)");
          }
        }
      } finally {
        nemesisThread.interrupt();
        nemesisThread.join();
      }
      for (int p = 0; p < processes.size(); p++) {
        try {
          HistoryFile.read(
              dir.resolve("history-" + p + ".tsv"), setting.history(), setting.counters());
        } catch (IOException e) {
          throw new IllegalStateException("could not read client process " + p + "'s history", e);
        }
      }
      return result(options, start, setting.counters(), nemesis, setting.history(), null, null);
    } catch (IOException e) {
      throw new IllegalStateException("could not start a client process: " + e.getMessage(), e);
    } finally {
      processes.forEach(Process::destroyForcibly);
      for (Process process : processes) {
        process.waitFor();
      }
      try (var files = Files.list(dir)) {
        for (Path file : files.toList()) {
          Files.deleteIfExists(file);
        }
        Files.deleteIfExists(dir);
      } catch (IOException e) {
        // a leftover file in the temporary directory is harmless
      }
    }
  }

  /** Reads a client process's reports of who holds what and its totals, until it ends. */
  private static void follow(Process process, List<RemoteClient> clients, long[] totals) {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] words = line.split(" ");
        if (words[0].equals("P") && words.length == 3) {
          synchronized (totals) {
            totals[0] = Long.parseLong(words[1]);
            totals[1] = Long.parseLong(words[2]);
          }
          continue;
        }
        for (RemoteClient client : clients) {
          if (words.length >= 2 && client.name().equals(words[1])) {
            client.holds(words[0].equals("H") && words.length == 3 ? words[2] : null);
          }
        }
      }
    } catch (IOException e) {
      // the process ended
    }
  }

  private static void runAll(
      List<Thread> threads,
      Nemesis nemesis,
      long start,
      TortureCounters counters,
      TortureListener listener,
      HeapMeter heap)
      throws InterruptedException {
    Thread nemesisThread = new Thread(nemesis, "torture-nemesis");
    threads.forEach(Thread::start);
    nemesisThread.start();
    try {
      while (threads.stream().anyMatch(Thread::isAlive) || nemesisThread.isAlive()) {
        Thread.sleep(1_000);
        if (heap != null) {
          heap.sample();
        }
        listener.progress(
            new Progress(
                Duration.ofNanos(System.nanoTime() - start),
                counters.attempts(),
                counters.acquired(),
                nemesis.records().size()));
      }
    } finally {
      nemesisThread.interrupt();
      threads.forEach(Thread::interrupt);
      for (Thread thread : threads) {
        thread.join();
      }
      nemesisThread.join();
    }
  }

  private static TortureResult result(
      TortureOptions options,
      long start,
      TortureCounters counters,
      Nemesis nemesis,
      History history,
      FencedStore store,
      TortureResult.ClientHeap heap) {
    List<Violation> violations = new ArrayList<>(SafetyChecker.check(history));
    TortureResult.Fenced fenced = null;
    if (store != null) {
      // A fenced write that ends after its lease, with no later holder having touched the
      // resource, is safe: the store took it because nobody had read since. The fencing
      // checker judges a fenced run instead (tokens in grant order, every overtaken access
      // refused, no valid holder refused); overlapping leases and work still count.
      int before = violations.size();
      violations.removeIf(v -> v.kind() == Violation.Kind.WORK_AFTER_LEASE_ENDED);
      int lateAlone = before - violations.size();
      List<FencedStore.Access> accesses = store.accesses();
      FencingChecker.Report report = FencingChecker.check(history.leases(), accesses);
      violations.addAll(report.violations());
      List<TortureResult.Refusal> refusals = new ArrayList<>();
      for (FencedStore.Access access : accesses) {
        if (!access.accepted()) {
          refusals.add(
              new TortureResult.Refusal(
                  access.nanos(),
                  access.client(),
                  access.resource(),
                  access.token(),
                  access.seen()));
        }
      }
      fenced =
          new TortureResult.Fenced(
              counters.committedWrites(),
              report.overtaken(),
              lateAlone,
              counters.committedWrites() - store.total(),
              refusals);
    }
    return new TortureResult(
        options,
        Duration.ofNanos(System.nanoTime() - start),
        counters.attempts(),
        counters.acquired(),
        counters.lostBeforeWrite(),
        counters.failures(),
        nemesis.records(),
        history,
        List.copyOf(violations),
        fenced,
        heap);
  }

  /**
   * The heap of this JVM, where the clients run in threads: after a full GC at the start and
   * the end, and the most in use at the once-a-second samples in between.
   */
  private static final class HeapMeter {
    private final double start = afterGc();
    private double most = start;

    void sample() {
      most = Math.max(most, inUse());
    }

    TortureResult.ClientHeap end() {
      double end = afterGc();
      return new TortureResult.ClientHeap(start, Math.max(most, end), end);
    }

    private static double inUse() {
      return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
          / (1024.0 * 1024.0);
    }

    private static double afterGc() {
      System.gc();
      return inUse();
    }
  }

  /**
   * Waits until a lock can be taken at all: the servers were just started, so the restart
   * guard holds them back for a ttl. The run's clock starts after this.
   */
  private static void awaitUsable(Redlock redlock, TortureOptions options)
      throws InterruptedException {
    Duration limit = options.ttl().multipliedBy(2).plusSeconds(10);
    long giveUp = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() - giveUp < 0) {
      var lease = redlock.tryAcquire("torture:warm-up:" + options.seed(), options.ttl());
      if (lease.isPresent()) {
        lease.get().release();
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "no lock could be taken on the fresh servers within " + limit.toMillis() + " ms");
  }
}
