package io.redlock.cli;

import io.lettuce.core.resource.DefaultClientResources;
import org.slf4j.LoggerFactory;

/**
 * The class initialization a one-shot {@code redlock exec} needs before it connects (SLF4J's
 * binding; the static state of Lettuce's client resources, with Netty's native transport and DNS
 * resolver), begun on a thread of its own while picocli builds the command line and parses the
 * arguments on the main thread. No client, connection or event loop is made here. On two cores
 * it takes 20 to 30 ms off a run of {@code exec --no-wait} (see docs/performance.md, "The
 * command line's fixed cost, and class-data sharing").
 *
 * <p>The main thread runs picocli and nothing of these libraries until {@link #await()}, which
 * {@code exec} calls first: two threads initializing classes whose static initializers depend
 * on each other can deadlock, and no library promises that its own cannot. So each library is
 * initialized by one thread, with the other waiting. Without {@link #begin()}, {@link #await()}
 * returns at once (a command run in the test's own JVM, through {@code Main.commandLine}).
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
   * failed there (a library could not start: the main thread would fail the same way, with a
   * less clear message).
   */
  static void await() throws InterruptedException {
    Thread started = started();
    if (started == null) {
      return;
    }
    started.join();
    synchronized (WarmUp.class) {
      if (failure != null) {
        throw startFailure(failure);
      }
    }
  }

  /**
   * What {@link #await()} throws for a failure of the warm-up: the error a static initializer
   * threw rather than its {@link ExceptionInInitializerError}, which has no message of its own.
   */
  static IllegalStateException startFailure(Throwable failure) {
    Throwable cause =
        failure instanceof ExceptionInInitializerError && failure.getCause() != null
            ? failure.getCause()
            : failure;
    return new IllegalStateException(
        "the logging or Redis client libraries could not start: " + cause, cause);
  }

  /**
   * Lets a warm-up that nobody awaited end before the JVM exits ({@code exec --help}, bad
   * arguments): Netty unpacks its native library to a temporary file while it loads it, and an
   * exit in between would leave the file behind. Waits at most {@code millis}; ignores a
   * failure (nothing used the libraries).
   */
  static void settle(long millis) {
    Thread started = started();
    if (started == null) {
      return;
    }
    try {
      started.join(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static synchronized Thread started() {
    return thread;
  }
}
