package io.redlock.cli;

import io.lettuce.core.resource.DefaultClientResources;
import org.slf4j.LoggerFactory;

/**
 * The class initialization a one-shot {@code redlock exec} needs before it connects (SLF4J's
 * binding; Lettuce's client resources, with Netty's native transport and DNS resolver), begun
 * on a thread of its own while picocli builds the command line and parses the arguments on the
 * main thread. On two cores it takes 20 to 30 ms off a run of {@code exec --no-wait} (see
 * docs/performance.md, "The command line's fixed cost, and class-data sharing").
 *
 * <p>The main thread runs picocli and nothing of these libraries until {@link #await()}, which
 * {@code exec} calls first: two threads initializing classes whose static initializers depend
 * on each other can deadlock, and no library promises that its own cannot. So each library is
 * initialized by one thread, with the other waiting. Without {@link #begin()}, {@link #await()}
 * returns at once (a test that runs a command in its own JVM).
 */
final class WarmUp {

  private static Thread thread;
  private static Throwable failure;

  private WarmUp() {}

  /** Starts the warm-up thread. Called once, by {@code main}, before anything else runs. */
  static synchronized void begin() {
    if (thread != null) {
      return;
    }
    thread = new Thread(WarmUp::run, "redlock-warm-up");
    thread.setDaemon(true);
    thread.start();
  }

  private static void run() {
    try {
      LoggerFactory.getILoggerFactory();
      Class.forName(DefaultClientResources.class.getName(), true, WarmUp.class.getClassLoader());
    } catch (Throwable e) {
      synchronized (WarmUp.class) {
        failure = e;
      }
    }
  }

  /**
   * Waits for the warm-up to end; rethrows, as an {@link IllegalStateException} naming it, what
   * failed there (the libraries could not start: the main thread would fail the same way, with
   * a less clear message).
   */
  static void await() throws InterruptedException {
    Thread started;
    synchronized (WarmUp.class) {
      started = thread;
    }
    if (started == null) {
      return;
    }
    started.join();
    synchronized (WarmUp.class) {
      if (failure != null) {
        throw new IllegalStateException("the Redis client could not start: " + failure, failure);
      }
    }
  }
}
