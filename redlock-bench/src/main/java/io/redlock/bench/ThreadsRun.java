package io.redlock.bench;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Many threads on the blocking API, each in a loop: acquire a resource of its own, arm
 * auto-extension, hold the lease (sleep), release. Run by {@link PathsHarness} in a JVM of its
 * own, once with virtual threads (JDK 21 and later) and once with platform threads, same
 * settings; prints one {@code threads-run} line with the figures.
 *
 * <p>Reported: cycles completed per second in the measured window, acquisitions that failed,
 * leases lost (an extension that did not come in time), the heap in use after a full GC with
 * every thread holding or acquiring (less the heap after a full GC before the threads
 * started), and the {@code jdk.VirtualThreadPinned} events a JFR recording saw over the
 * whole run with a threshold of 0 (a virtual thread that blocked while pinned to its
 * carrier), with the innermost frame of this project's code in each.
 *
 * <pre>
 * java -cp benchmarks.jar io.redlock.bench.ThreadsRun virtual 10000 3s 4s 5s 20s redis://...
 * </pre>
 *
 * <p>Arguments: {@code virtual|platform}, threads, ttl, hold, warm-up, window, node URIs
 * (comma-separated). Not a test: nothing runs it but {@link PathsHarness}.
 */
public final class ThreadsRun {
  private ThreadsRun() {}

  public static void main(String[] args) throws Exception {
    boolean virtual = args[0].equals("virtual");
    int threads = Integer.parseInt(args[1]);
    Duration ttl = LoadHarness.Options.duration(args[2]);
    Duration hold = LoadHarness.Options.duration(args[3]);
    Duration warmup = LoadHarness.Options.duration(args[4]);
    Duration window = LoadHarness.Options.duration(args[5]);
    List<String> uris = Arrays.asList(args[6].split(","));
    if (virtual && Runtime.version().feature() < 21) {
      System.out.println(
          "threads-run skipped: JDK " + Runtime.version() + " has no virtual threads");
      return;
    }
    Recording recording = new Recording();
    recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
    recording.start();

    RedlockConfig config =
        RedlockConfig.builder().nodes(uris).ttl(ttl).retryCount(1_000_000).build();
    long heapBefore = heapAfterGc();
    AtomicLong cycles = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong lost = new AtomicLong();
    long[] bounds = new long[2];
    try (Redlock redlock = Redlock.create(config)) {
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> workers = new ArrayList<>(threads);
      for (int t = 0; t < threads; t++) {
        String resource = "bench:threads:" + (virtual ? "v" : "p") + ":" + t;
        Runnable loop =
            () -> {
              try {
                go.await();
                // Spread the first acquisitions over one hold, as a service's would be.
                Thread.sleep(ThreadLocalRandom.current().nextLong(hold.toMillis() + 1));
                while (System.nanoTime() - bounds[1] < 0) {
                  Lease lease;
                  try {
                    lease = redlock.acquire(resource, ttl);
                  } catch (LockUnavailableException e) {
                    failed.incrementAndGet();
                    continue;
                  }
                  lease.onLost(e -> lost.incrementAndGet());
                  lease.autoExtend();
                  Thread.sleep(hold.toMillis());
                  lease.release();
                  long now = System.nanoTime();
                  if (now - bounds[0] >= 0 && now - bounds[1] < 0) {
                    cycles.incrementAndGet();
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (RuntimeException e) {
                failed.incrementAndGet();
                System.err.println("threads-run: " + e);
              }
            };
        workers.add(virtual ? unstartedVirtual(loop) : platform(loop, t));
      }
      workers.forEach(Thread::start);
      long start = System.nanoTime();
      bounds[0] = start + warmup.toNanos();
      bounds[1] = bounds[0] + window.toNanos();
      go.countDown(); // publishes bounds to the workers
      TimeUnit.NANOSECONDS.sleep(bounds[0] + window.toNanos() / 2 - System.nanoTime());
      long heapHolding = heapAfterGc();
      for (Thread worker : workers) {
        worker.join(Math.max(1, (bounds[1] - System.nanoTime()) / 1_000_000) + 60_000);
      }
      recording.stop();
      Path jfr = Files.createTempFile("threads-run", ".jfr");
      recording.dump(jfr);
      Map<String, Integer> pinned = pinnedEvents(jfr);
      Files.deleteIfExists(jfr);
      int pinnedTotal = pinned.values().stream().mapToInt(Integer::intValue).sum();
      System.out.printf(
          Locale.ROOT,
          "threads-run %s threads=%d jdk=%s cycles/s=%.1f failed=%d lost=%d"
              + " heap-bytes=%d heap-per-thread=%d pinned=%d where=%s%n",
          virtual ? "virtual" : "platform",
          threads,
          Runtime.version().feature(),
          cycles.get() / (window.toNanos() / 1e9),
          failed.get(),
          lost.get(),
          heapHolding - heapBefore,
          (heapHolding - heapBefore) / threads,
          pinnedTotal,
          pinned.isEmpty() ? "-" : pinned.toString().replace(' ', '_'));
    }
    System.exit(0);
  }

  /** A virtual thread, made by reflection: this module compiles for Java 17. */
  private static Thread unstartedVirtual(Runnable task) {
    try {
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      Method unstarted =
          Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class);
      return (Thread) unstarted.invoke(builder, task);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("no virtual threads on JDK " + Runtime.version(), e);
    }
  }

  private static Thread platform(Runnable task, int index) {
    // A small stack: 10,000 platform threads reserve this much address space each.
    Thread thread = new Thread(null, task, "threads-run-" + index, 256 * 1024);
    thread.setDaemon(true);
    return thread;
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /**
   * The pinned events of the recording, counted by the innermost frame of this project's code
   * on their stacks (or the innermost frame, if none is).
   */
  private static Map<String, Integer> pinnedEvents(Path jfr) throws java.io.IOException {
    Map<String, Integer> where = new TreeMap<>();
    for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
      if (!event.getEventType().getName().equals("jdk.VirtualThreadPinned")) {
        continue;
      }
      String frame = "?";
      if (event.getStackTrace() != null) {
        for (RecordedFrame f : event.getStackTrace().getFrames()) {
          String name = f.getMethod().getType().getName() + "." + f.getMethod().getName();
          if (frame.equals("?")) {
            frame = name;
          }
          if (name.startsWith("io.redlock.") && !name.startsWith("io.redlock.bench.")) {
            frame = name;
            break;
          }
        }
      }
      where.merge(frame, 1, Integer::sum);
    }
    return where;
  }
}
