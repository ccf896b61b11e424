package io.redlock.internal;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers one listener's calls on a thread of their own, in the order they were reported, so
 * that a listener that is slow or blocks delays only its own events, never a transport
 * thread, the timer, a caller or another listener.
 *
 * <p>The queue is bounded: when {@link #CAPACITY} events wait, newer ones are dropped and
 * counted ({@link #dropped()}), with a WARN the first time. Losing a metric is better than
 * holding up the lock or growing without bound behind a listener that never returns. After
 * {@link #close()}, events already queued are still delivered; later ones are dropped.
 *
 * <p>Thread-safe.
 */
final class EventQueue implements Executor, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EventQueue.class);

  /** How many events may wait for a listener before newer ones are dropped. */
  public static final int CAPACITY = 16_384;

  private final AtomicLong dropped = new AtomicLong();
  private final AtomicBoolean warned = new AtomicBoolean();
  private final ThreadPoolExecutor thread;

  public EventQueue() {
    this(CAPACITY);
  }

  EventQueue(int capacity) {
    thread =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(capacity),
            runnable -> {
              Thread t = new Thread(runnable, "redlock-events");
              t.setDaemon(true);
              return t;
            },
            (task, executor) -> drop(executor.isShutdown()));
  }

  @Override
  public void execute(Runnable event) {
    thread.execute(event);
  }

  /** How many events were dropped because the queue was full. */
  public long dropped() {
    return dropped.get();
  }

  private void drop(boolean closed) {
    if (closed) {
      log.debug("listener event after close: dropped");
      return;
    }
    long count = dropped.incrementAndGet();
    if (warned.compareAndSet(false, true)) {
      log.warn(
          "a listener falls behind: {} events wait for it, so newer events are dropped"
              + " (the lock is not affected); listeners must return quickly",
          CAPACITY);
    } else if (log.isDebugEnabled()) {
      log.debug("listener event dropped ({} so far)", count);
    }
  }

  /** Delivers what is queued, then stops; does not wait. Idempotent. */
  @Override
  public void close() {
    thread.shutdown();
  }
}
