package io.redlock.lettuce;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * The order in which one node's extensions are written: batch scripts ({@link
 * BatchedExtensions}) and extensions of one lease ({@link LettuceNodeClient#extend}) are
 * written in the order they were sent, and at most {@link #MAX_SCRIPTS_IN_FLIGHT} batch scripts
 * are written and unanswered at a time; the others wait here, oldest first, and everything
 * behind a waiting script waits too. Locks, fenced locks, confirmations and releases do not
 * come here: they are written at once, ahead of the extensions waiting.
 *
 * <p>Why. The node runs one connection's requests in the order they were written, and a batch
 * script of a thousand keys keeps it busy for about a millisecond. Written at once, the batches
 * that fall due together (a hundred scripts for 100,000 leases) held up every lock and release
 * sent behind them for as long, past the node timeout (docs/performance.md, "Many leases held
 * at once"). Waiting here, they let those overtake them.
 *
 * <p>Why that is safe. What overtakes a waiting extension is a lock or a fenced lock (of another
 * attempt, with another token), a confirmation (sent before the lease it confirms was granted,
 * so before any of its extensions) or a release (which deletes the key; an extension never
 * creates one). Extensions never overtake each other: a shorter expiry ({@code
 * Lease.releaseAfter}, an {@code extend} with a shorter ttl) sent after a batch still runs after
 * it, as the per-node order of {@link LettuceNodeClient} asks.
 *
 * <p>An entry whose caller stopped waiting before it was written is never written; entries still
 * waiting when the connection is lost fail ({@link #connectionLost}), never written on the next
 * one. After a script's answer, the next entries are written from {@code writer}, never from the
 * connection's event loop: written there, they would overtake requests other threads handed
 * over before them, which the {@link NodeBacklog}'s count of requests cut off relies on.
 *
 * <p>Thread-safe: the queue, the count of scripts in flight and the writing flag change under
 * this object's monitor; nothing is written and no future completed under it.
 */
final class ExtensionQueue {

  /**
   * Batch scripts written to the node and not yet answered, at most: {@value}. Enough that the
   * node is never idle for want of this client's next script (with two, the next was written
   * only once a busy client's writer thread got a core, and at 100,000 held leases the
   * extensions fell behind their deadlines), few enough that a lock or a release sent meanwhile
   * waits behind eight scripts at most, about eight milliseconds of the node's work, where the
   * batches falling due together were a hundred.
   */
  static final int MAX_SCRIPTS_IN_FLIGHT = 8;

  private final Executor writer;

  /** Entries not written yet, oldest first. */
  private final ArrayDeque<Entry<?>> waiting = new ArrayDeque<>();

  /** Batch scripts written on the current connection and not answered. */
  private int scriptsInFlight;

  /** Counts the connections: raised when one is lost ({@link #connectionLost}). */
  private long connection;

  /** Whether a thread is writing an entry: one at a time, so that they leave in order. */
  private boolean writing;

  /** @param writer where entries are written after an answer (never an event loop) */
  ExtensionQueue(Executor writer) {
    this.writer = writer;
  }

  /** Something written in order: a batch script, or the extension of one lease. */
  abstract static class Entry<T> extends CompletableFuture<T> {
    private final boolean script;

    /** The connection it was written on; set under the queue's monitor when it is taken. */
    private long writtenOn;

    /** @param script whether it counts towards {@link #MAX_SCRIPTS_IN_FLIGHT} */
    Entry(boolean script) {
      this.script = script;
    }

    /**
     * Hands it to Lettuce, once. A script calls {@link #scriptLeft} once Lettuce lets go of
     * it.
     */
    abstract void write();

    /** It will never be written: frees what it holds. */
    abstract void dropped();
  }

  /** Adds {@code entry} behind the others and writes what may be written now. */
  <T, E extends Entry<T>> E add(E entry) {
    synchronized (this) {
      waiting.addLast(entry);
    }
    writeWaiting();
    return entry;
  }

  /**
   * The extension of one lease that {@code send} hands to Lettuce: at once when nothing waits
   * and nobody is writing, else behind what waits, in a future of its own whose cancel, while it
   * waits, means it is never sent.
   */
  CompletionStage<Boolean> extend(Supplier<CompletionStage<Boolean>> send) {
    One one = null;
    synchronized (this) {
      if (writing || !waiting.isEmpty()) {
        one = new One(send);
        waiting.addLast(one);
      } else {
        writing = true;
      }
    }
    if (one != null) {
      writeWaiting();
      return one;
    }
    try {
      return send.get();
    } finally {
      synchronized (this) {
        writing = false;
      }
      writeWaiting(); // entries added meanwhile
    }
  }

  /**
   * Writes waiting entries, oldest first, until one is a script and {@link
   * #MAX_SCRIPTS_IN_FLIGHT} are unanswered. A thread that finds another writing leaves, and
   * that one looks again after each write, so nothing added meanwhile is left waiting.
   */
  private void writeWaiting() {
    while (true) {
      Entry<?> next;
      synchronized (this) {
        next = waiting.peekFirst();
        if (writing || next == null || (next.script && scriptsInFlight >= MAX_SCRIPTS_IN_FLIGHT)) {
          return;
        }
        waiting.pollFirst();
        if (next.script) {
          scriptsInFlight++;
        }
        next.writtenOn = connection;
        writing = true;
      }
      try {
        if (next.isDone()) {
          // Cancelled after it left the queue, before it was written.
          next.dropped();
          if (next.script) {
            scriptLeft(next, false);
          }
        } else {
          next.write();
        }
      } finally {
        synchronized (this) {
          writing = false;
        }
      }
    }
  }

  /**
   * The script {@code entry}, written, left Lettuce, or taken from the queue, was not written.
   * Waiting entries are written from here only after the node's answer ({@code answered}): a
   * script drained with a lost connection completes while Lettuce closes it, and one written
   * from that callback could stay in Lettuce until the next connection (seen with Lettuce 6.6);
   * the entries still waiting fail with the connection ({@link #connectionLost}).
   */
  void scriptLeft(Entry<?> entry, boolean answered) {
    synchronized (this) {
      if (entry.writtenOn != connection) {
        return; // counted on a connection since lost
      }
      scriptsInFlight--;
    }
    if (answered) {
      try {
        writer.execute(this::writeWaiting);
      } catch (RejectedExecutionException closing) {
        // The client closes: what waits fails with it (connectionLost).
      }
    }
  }

  /** Takes {@code entry} out of the queue: whether it was there (never written). */
  synchronized boolean remove(Entry<?> entry) {
    return waiting.remove(entry);
  }

  /**
   * The connection was lost, or the client closes: fails every entry not written yet with
   * {@code error} (an entry is never written on a later connection), and the next connection
   * starts with no script in flight. A script written on the lost one no longer holds anything
   * up: Lettuce completes it with the lost connection, or once it reconnected, and with some
   * versions (6.8) not always at all.
   */
  void connectionLost(Exception error) {
    List<Entry<?>> dropped;
    synchronized (this) {
      dropped = new ArrayList<>(waiting);
      waiting.clear();
      connection++;
      scriptsInFlight = 0;
    }
    for (Entry<?> entry : dropped) {
      entry.dropped();
      entry.completeExceptionally(error);
    }
  }

  /** Batch scripts written and not answered, and entries waiting: for tests. */
  synchronized int[] counts() {
    return new int[] {scriptsInFlight, waiting.size()};
  }

  /** The extension of one lease, waiting behind others. */
  private final class One extends Entry<Boolean> {
    private final Supplier<CompletionStage<Boolean>> send;
    private volatile CompletableFuture<Boolean> sent;

    One(Supplier<CompletionStage<Boolean>> send) {
      super(false);
      this.send = send;
    }

    @Override
    void write() {
      CompletableFuture<Boolean> reply;
      try {
        reply = send.get().toCompletableFuture();
      } catch (RuntimeException e) {
        completeExceptionally(e);
        return;
      }
      sent = reply;
      reply.whenComplete(
          (extended, error) -> {
            if (error != null) {
              completeExceptionally(error);
            } else {
              complete(extended);
            }
          });
      if (isCancelled()) {
        reply.cancel(false); // cancelled while it was being written
      }
    }

    @Override
    void dropped() {
      // Nothing was counted for it: the backlog admits an extension when it is written.
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (cancelled && !remove(this)) {
        CompletableFuture<Boolean> reply = sent;
        if (reply != null) {
          reply.cancel(false); // written: the vote's own cancel (CountedVote) says it is late
        }
      }
      return cancelled;
    }
  }
}
