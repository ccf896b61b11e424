package io.redlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One implementation holding many locks, in a JVM of its own started for one measurement and
 * ended after it: its heap holds that implementation's locks and nothing else, and no state
 * (a watchdog's table, a JIT profile) carries over from another size or another client.
 *
 * <p>The child takes {@code <impl> <uris,...> <count> <ttl ms> <prefix> <settle ms>}. It
 * builds the implementation, warms it up (takes and releases {@link #WARM_UP} locks, so that
 * the classes and objects of the lock path exist before the baseline), collects garbage and
 * reads the heap in use, takes {@code count} locks, waits {@code settle} (every watchdog runs
 * at least once), collects garbage and reads the heap again, then answers {@code held <heap
 * before> <heap held> <acquire nanos>}. On {@code window <nanos>} it meters its own CPU time
 * over that long and answers {@code done <cpu nanos> <window nanos> <lost>}. On {@code beside
 * <count>} it takes and releases {@code count} locks of its own on the client that holds the
 * locks and as many on a {@linkplain HeldLocks#peer() peer} that holds none, in turn, and
 * answers {@code attempts} with the p50, p99 and longest time of each side in nanoseconds and
 * the attempts that failed ({@link Beside}). On {@code exit} it ends without releasing (the
 * harness deletes the keys). Every other line it prints goes
 * to the harness's standard error.
 */
final class HeldClient implements AutoCloseable {
  /** Locks taken and released before the baseline heap is read. */
  static final int WARM_UP = 500;

  /** What the child reports once its locks are held. */
  record Held(long heapBefore, long heapHeld, long acquireNanos) {}

  /** What the child reports after the measured window. */
  record Window(long cpuNanos, long windowNanos, long lost) {}

  /** Single attempts on one side: p50, p99 and the longest, in nanoseconds; how many failed. */
  record Attempts(long p50Nanos, long p99Nanos, long maxNanos, int failed, int count) {

    /** The figures of {@code nanos} (sorted here) with {@code failed} of them failed. */
    static Attempts of(long[] nanos, int failed) {
      long[] sorted = nanos.clone();
      Arrays.sort(sorted);
      int n = sorted.length;
      return new Attempts(
          sorted[(n - 1) / 2], sorted[(int) Math.ceil(n * 0.99) - 1], sorted[n - 1], failed, n);
    }

    String line() {
      return p50Nanos + " " + p99Nanos + " " + maxNanos + " " + failed + " " + count;
    }

    static Attempts parse(String[] v, int from) {
      return new Attempts(
          Long.parseLong(v[from]),
          Long.parseLong(v[from + 1]),
          Long.parseLong(v[from + 2]),
          Integer.parseInt(v[from + 3]),
          Integer.parseInt(v[from + 4]));
    }
  }

  /**
   * Locks taken beside the held ones: on the client that holds them ({@code holding}), whose
   * connections also carry their extensions, and on a peer with connections of its own.
   */
  record Beside(Attempts holding, Attempts peer) {}

  private final String name;
  private final Process process;
  private final BufferedReader answers;
  private final Writer requests;

  /** A client over a child already started (for a test of the harness's side). */
  HeldClient(String name, Process process) {
    this.name = name;
    this.process = process;
    this.answers =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
  }

  /**
   * Starts the child with this JVM's class path, the heap bound {@code maxHeap} (as in
   * {@code -Xmx}) and nothing else from this JVM's options.
   */
  static HeldClient start(
      String impl,
      List<String> uris,
      int count,
      Duration ttl,
      String prefix,
      Duration settle,
      String maxHeap)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx" + maxHeap);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(HeldClient.class.getName());
    command.add(impl);
    command.add(String.join(",", uris));
    command.add(Integer.toString(count));
    command.add(Long.toString(ttl.toMillis()));
    command.add(prefix);
    command.add(Long.toString(settle.toMillis()));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    return new HeldClient(impl, process);
  }

  /** Waits until the child holds its locks. */
  Held awaitHeld() throws IOException {
    String[] v = awaitAnswer("held ", ANSWER_LIMIT).split(" ");
    return new Held(Long.parseLong(v[0]), Long.parseLong(v[1]), Long.parseLong(v[2]));
  }

  /** Has the child meter itself for {@code window}; returns what it measured. */
  Window measure(Duration window) throws IOException {
    requests.write("window " + window.toNanos() + "\n");
    requests.flush();
    String[] v = awaitAnswer("done ", window.plus(ANSWER_LIMIT)).split(" ");
    return new Window(Long.parseLong(v[0]), Long.parseLong(v[1]), Long.parseLong(v[2]));
  }

  /**
   * Has the child take and release {@code count} locks on its holding client and as many on a
   * peer, in turn (see the class comment).
   */
  Beside beside(int count) throws IOException {
    requests.write("beside " + count + "\n");
    requests.flush();
    String[] v = awaitAnswer("attempts ", ANSWER_LIMIT).split(" ");
    return new Beside(Attempts.parse(v, 0), Attempts.parse(v, 5));
  }

  /**
   * How long the child may take to hold its locks or to take those beside them (the slowest
   * seen, Redisson taking 100,000 locks, took about a minute), and to answer after its window.
   */
  static final Duration ANSWER_LIMIT = Duration.ofMinutes(10);

  /**
   * The child's answer that starts with {@code prefix}; the child is stopped if it gives none
   * within {@code limit} (a hung child would otherwise hang the whole run).
   */
  String awaitAnswer(String prefix, Duration limit) throws IOException {
    AtomicBoolean answered = new AtomicBoolean();
    AtomicBoolean stopped = new AtomicBoolean();
    CompletableFuture.delayedExecutor(limit.toMillis(), TimeUnit.MILLISECONDS)
        .execute(
            () -> {
              if (!answered.get()) {
                stopped.set(true);
                process.destroyForcibly();
              }
            });
    try {
      for (String line = answers.readLine(); line != null; line = answers.readLine()) {
        if (line.startsWith(prefix)) {
          return line.substring(prefix.length()).trim();
        }
        if (line.startsWith(NOT_HELD)) {
          throw new CouldNotHold(line.substring(NOT_HELD.length()).trim());
        }
        System.err.println("  [" + name + "] " + line);
      }
    } finally {
      answered.set(true);
    }
    throw new IOException(
        stopped.get()
            ? name
                + " gave no answer "
                + prefix.trim()
                + " within "
                + limit.toSeconds()
                + " s: stopped"
            : name + "'s JVM ended before answering " + prefix.trim());
  }

  /** What the child answers instead of {@code held} when it could not take every lock. */
  private static final String NOT_HELD = "not-held ";

  /** The child could not take every lock; {@link #getMessage()} says why, on one line. */
  static final class CouldNotHold extends IOException {
    CouldNotHold(String reason) {
      super(reason);
    }
  }

  /** The failure's message and its innermost cause's, on one line, at most 400 characters. */
  static String reason(Throwable failure) {
    Throwable cause = failure;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    String text =
        failure.getMessage() + ": " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
    text = text.replaceAll("\\s+", " ");
    return text.length() <= 400 ? text : text.substring(0, 400) + "...";
  }

  /** Ends the child (its locks stay on the nodes until the harness deletes them). */
  @Override
  public void close() {
    try {
      requests.write("exit\n");
      requests.flush();
    } catch (IOException ignored) {
      // already gone
    }
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** Heap in use after two full collections, in bytes. */
  static long heapAfterGc() throws InterruptedException {
    for (int i = 0; i < 2; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Attempts on a peer before the measured ones: its connections up, its code compiled. */
  static final int PEER_WARM_UP = 200;

  /**
   * One pair of attempts (holding client, then peer) starts every 10 ms at most: a light load
   * of its own, about 200 locks a second. Unpaced, the attempts took a core's worth of CPU
   * on a machine that the servers and the extensions of 100,000 leases already kept near full,
   * and the held leases' extensions fell behind because of the probe itself.
   */
  static final long BESIDE_PACE_NANOS = 10_000_000L;

  /**
   * {@code count} attempts on {@code holding} and as many on a new peer, one after the other in
   * turn (so that both meet the same moments of the held locks' extensions), each first every
   * other pair, each on a resource of its own under {@code prefix}, paced ({@link
   * #BESIDE_PACE_NANOS}).
   */
  private static Beside besideHeld(HeldLocks holding, String prefix, int count) {
    try (HeldLocks peer = holding.peer()) {
      long next = System.nanoTime();
      for (int i = 0; i < PEER_WARM_UP; i++) {
        next = pace(next);
        peer.takeAndRelease(prefix + "warm:" + i);
      }
      long[] mine = new long[count];
      long[] theirs = new long[count];
      int mineFailed = 0;
      int theirsFailed = 0;
      for (int i = 0; i < count; i++) {
        next = pace(next);
        // Each goes first every other pair: the first lock after the pause meets threads
        // that went idle, the second finds them awake.
        boolean holdingFirst = i % 2 == 0;
        long t0 = System.nanoTime();
        boolean first =
            (holdingFirst ? holding : peer)
                .takeAndRelease(prefix + (holdingFirst ? "h:" : "p:") + i);
        long t1 = System.nanoTime();
        boolean second =
            (holdingFirst ? peer : holding)
                .takeAndRelease(prefix + (holdingFirst ? "p:" : "h:") + i);
        long t2 = System.nanoTime();
        mine[i] = holdingFirst ? t1 - t0 : t2 - t1;
        theirs[i] = holdingFirst ? t2 - t1 : t1 - t0;
        mineFailed += (holdingFirst ? first : second) ? 0 : 1;
        theirsFailed += (holdingFirst ? second : first) ? 0 : 1;
      }
      return new Beside(Attempts.of(mine, mineFailed), Attempts.of(theirs, theirsFailed));
    }
  }

  /** Waits until {@code next}; returns the start of the following slot. */
  private static long pace(long next) {
    long wait = next - System.nanoTime();
    if (wait > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(wait);
    }
    return Math.max(next, System.nanoTime() - BESIDE_PACE_NANOS) + BESIDE_PACE_NANOS;
  }

  /** The child: see the class comment. */
  public static void main(String[] args) throws Exception {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    String impl = args[0];
    List<String> uris = Arrays.asList(args[1].split(","));
    int count = Integer.parseInt(args[2]);
    Duration ttl = Duration.ofMillis(Long.parseLong(args[3]));
    String prefix = args[4];
    Duration settle = Duration.ofMillis(Long.parseLong(args[5]));
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    int status = 0;
    try {
      HeldLocks locks = HeldLocks.create(impl, uris, ttl);
      locks.hold(prefix + "warm:", WARM_UP);
      locks.releaseAll();
      long before = heapAfterGc();
      long started = System.nanoTime();
      try {
        locks.hold(prefix, count);
      } catch (HeldLocks.NotAcquired e) {
        // One lock could not be taken: a result, not a crash.
        e.printStackTrace();
        out.println(NOT_HELD + reason(e));
        System.exit(1);
      }
      long acquired = System.nanoTime() - started;
      Thread.sleep(settle.toMillis());
      long held = heapAfterGc();
      out.printf(Locale.ROOT, "held %d %d %d%n", before, held, acquired);
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine();
          line != null && !line.equals("exit");
          line = in.readLine()) {
        if (line.startsWith("beside ")) {
          int attempts = Integer.parseInt(line.substring("beside ".length()).trim());
          Beside beside = besideHeld(locks, prefix + "beside:", attempts);
          out.println("attempts " + beside.holding().line() + " " + beside.peer().line());
          continue;
        }
        long window = Long.parseLong(line.substring("window ".length()).trim());
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        Thread.sleep(window / 1_000_000L);
        long cpu1 = os.getProcessCpuTime();
        long t1 = System.nanoTime();
        out.printf(Locale.ROOT, "done %d %d %d%n", cpu1 - cpu0, t1 - t0, locks.lost());
      }
      // No release and no close: the harness deletes the keys, so that no implementation's
      // release of many locks is timed or waited for.
    } catch (Exception | Error e) {
      e.printStackTrace();
      status = 1;
    }
    System.exit(status); // Redisson and Lettuce may leave non-daemon threads behind
  }
}
