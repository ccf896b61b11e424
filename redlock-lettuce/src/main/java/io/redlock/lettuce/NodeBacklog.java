package io.redlock.lettuce;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests one node has not answered yet, bounded, and whether the node is set aside as
 * silent.
 *
 * <p>What is counted. A vote request counts from the moment it is handed to Lettuce until the
 * node answers it or the connection it was written on is lost: as long as Lettuce holds it
 * (a command once written stays in Lettuce's stack until its answer comes, to match answers
 * in order, even after its caller stopped waiting). Most requests free themselves: their
 * Lettuce future completes with the answer. Two kinds of request lose that signal while
 * Lettuce may still hold them: a lock request whose round cancelled it (which cancels the
 * Lettuce command too) and a request Lettuce's own timeout failed. Those move to the
 * <em>cut-off</em> part, each with its place in the order requests were handed over
 * ({@link #position()} read before, {@link #advance()} after): the node answers in the order
 * requests were written, and requests handed over from threads other than the event loop are
 * written in the order they were handed over, so once the node answers a request handed over
 * after a cut-off one was, the cut-off one was answered (or never written) and is freed.
 * Every count is an upper bound of what Lettuce holds for the votes; nothing is freed before
 * Lettuce freed it.
 *
 * <p>Bounds. A vote request (lock, extend, fence) is sent only while fewer than {@code
 * maxRequests} requests and {@code maxBytes} bytes (the characters of a request's keys and
 * arguments, plus {@link #OVERHEAD_BYTES}) wait on the node; a release or an undo while fewer
 * than twice as many do. Past its bound a request is not sent: its vote fails at once, {@code
 * STALLED}. The room kept for releases lets a node that falls behind for a moment (a busy
 * machine, a short fork) still get them, so that its keys do not outlive their leases; a node
 * that stays silent fills that room too, and then gets nothing.
 *
 * <p>A batch of extensions ({@link BatchedExtensions}) counts as one request, and its bytes in
 * a budget of their own, {@code maxBatchBytes}, freed when Lettuce lets go of its command
 * (answered, or drained with a lost connection): batches carry the extensions of every lease
 * held, tens of kilobytes each, and in the shared budget a burst of them (the extensions of
 * 60,000 leases falling due together) refused locks and releases, and then each other. In a
 * budget of their own they never crowd out locks and releases, nor the other way round.
 *
 * <p>Silence. When {@code silentAfter} requests or more in a row got no answer (cut off, or
 * refused by a bound), over at least {@code silentForNanos} from the first of them, the node
 * is set aside (both: a few late answers on a busy machine are not a stall, and a node with
 * little traffic is not set aside by one slow moment): every vote request fails at once,
 * {@code STALLED} (releases and undos are still sent while their bound allows), and
 * one sentinel request ({@code PING}) at a time asks whether it answers again. The node is
 * back once a sentinel is answered and everything cut off before it is freed. One WARN when
 * it is set aside, one INFO when it is back, with the counts in between; nothing per request.
 *
 * <p>Thread-safe: the counters are atomic; the cut-off part and the silence change under this
 * object's monitor, which the hot path (a request admitted and answered in time) never takes.
 */
final class NodeBacklog {
  private static final Logger log = LoggerFactory.getLogger(NodeBacklog.class);

  /** Bytes counted per request on top of its keys and arguments: the command's own objects. */
  static final long OVERHEAD_BYTES = 64;

  private final String name;
  private final int maxRequests;
  private final long maxBytes;
  private final long maxBatchBytes;
  private final int silentAfter;
  private final long silentForNanos;
  private final java.util.function.LongSupplier clock;

  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong batchBytes = new AtomicLong();

  /** Requests handed to Lettuce so far: their order (see the class comment). */
  private final AtomicLong handedOver = new AtomicLong();

  private final AtomicInteger unansweredInARow = new AtomicInteger();

  /** When the current row of unanswered requests began ({@link #NONE}: no row). */
  private volatile long rowSince = NONE;

  private static final long NONE = Long.MIN_VALUE;
  private final AtomicInteger peakRequests = new AtomicInteger();
  private final AtomicLong peakBytes = new AtomicLong();
  private final LongAdder refused = new LongAdder();

  /** Set while the cut-off part is not empty: read first, so the hot path takes no lock. */
  private volatile boolean anyCutOff;

  /** The cut-off requests: {place, bytes} pairs, roughly in place order. */
  private final java.util.ArrayDeque<long[]> cutOff = new java.util.ArrayDeque<>();

  private volatile boolean silent;
  private long silentSince;
  private long silentFrom;
  private long refusedAtSilence;
  private int peakAtSilence;

  NodeBacklog(
      String name,
      int maxRequests,
      long maxBytes,
      long maxBatchBytes,
      int silentAfter,
      long silentForNanos,
      java.util.function.LongSupplier clock) {
    this.name = name;
    this.maxRequests = maxRequests;
    this.maxBytes = maxBytes;
    this.maxBatchBytes = maxBatchBytes;
    this.silentAfter = silentAfter;
    this.silentForNanos = silentForNanos;
    this.clock = clock;
    this.setAside =
        "set aside: requests in a row got no answer for "
            + silentForNanos / 1_000_000L
            + " ms or more; asked again once it answers";
  }

  /** {@link #refusal()} while the node is set aside. */
  private final String setAside;

  /**
   * Admits a request of {@code size} bytes, a {@code release} (or undo) or a vote: whether it
   * may be sent (when not, {@link #refusal()} says why, and it counts as unanswered).
   */
  boolean admit(long size, boolean release) {
    if (silent && !release) {
      refuse();
      return false;
    }
    int count = takeRequest(release ? 2 * maxRequests : maxRequests);
    if (count < 0) {
      refuse();
      return false;
    }
    long total = bytes.addAndGet(size);
    if (total > (release ? 2 * maxBytes : maxBytes)) {
      bytes.addAndGet(-size);
      requests.decrementAndGet();
      refuse();
      return false;
    }
    raise(peakRequests, count);
    if (total > peakBytes.get()) {
      peakBytes.accumulateAndGet(total, Math::max);
    }
    return true;
  }

  /**
   * Admits a batch of extensions of {@code size} bytes: one request among the votes, its bytes
   * in the batches' own budget (see the class comment). When it is not admitted, {@link
   * #batchRefusal()} says why, and it counts as unanswered. An admitted batch's bytes are freed
   * by {@link #batchLeft}; the request itself is counted and freed as a vote's.
   */
  boolean admitBatch(long size) {
    if (silent) {
      refuse();
      return false;
    }
    int count = takeRequest(maxRequests);
    if (count < 0) {
      refuse();
      return false;
    }
    if (batchBytes.addAndGet(size) > maxBatchBytes) {
      batchBytes.addAndGet(-size);
      requests.decrementAndGet();
      refuse();
      return false;
    }
    raise(peakRequests, count);
    return true;
  }

  /**
   * Counts one more request if fewer than {@code most} are counted; the new count, or -1. Never
   * counts one over the bound, even for a moment: a request counted and then taken back made
   * {@link #requests()} read one above it, and refused another admission meanwhile.
   */
  private int takeRequest(int most) {
    while (true) {
      int now = requests.get();
      if (now >= most) {
        return -1;
      }
      if (requests.compareAndSet(now, now + 1)) {
        return now + 1;
      }
    }
  }

  /** Lettuce let go of an admitted batch's command (answered, drained, or refused). */
  void batchLeft(long size) {
    batchBytes.addAndGet(-size);
  }

  /** Why {@link #admitBatch} refused, for the votes' detail. */
  String batchRefusal() {
    if (silent) {
      return setAside;
    }
    return "backlog full: "
        + requests.get()
        + " requests, of which batches of extensions of "
        + batchBytes.get()
        + " bytes, wait on this node, at most "
        + maxRequests
        + " requests and "
        + maxBatchBytes
        + " bytes of batches";
  }

  /** Read just before a request is handed to Lettuce: requests handed over so far. */
  long position() {
    return handedOver.get();
  }

  /** Called just after a request was handed to Lettuce: its place in the order. */
  long advance() {
    return handedOver.incrementAndGet();
  }

  private static void raise(AtomicInteger peak, int value) {
    if (value > peak.get()) {
      peak.accumulateAndGet(value, Math::max);
    }
  }

  /** Lettuce refused an admitted request for its own bound (already {@link #left}). */
  void refusedByLettuce() {
    refuse();
  }

  private void refuse() {
    refused.increment();
    unanswered();
  }

  /** Why {@link #admit} refused, for the vote's detail. */
  String refusal() {
    if (silent) {
      return setAside; // every vote of a node set aside: made once
    }
    return "backlog full: "
        + requests.get()
        + " requests ("
        + bytes.get()
        + " bytes) wait on this node, at most "
        + maxRequests
        + " ("
        + maxBytes
        + " bytes) for a vote, twice that for a release";
  }

  /**
   * The node answered a request of {@code size} bytes, still counted by itself, whose
   * {@link #position()} was {@code before}.
   */
  void answered(long before, long size) {
    free(size);
    progress(before);
  }

  /**
   * The node answered a request (a sentinel, or one already cut off) whose {@link
   * #position()} was {@code before}: every cut-off request handed over by then is freed.
   */
  void progress(long before) {
    if (unansweredInARow.get() != 0) {
      unansweredInARow.set(0);
      rowSince = NONE;
    }
    if (anyCutOff) {
      synchronized (this) {
        long[] first;
        while ((first = cutOff.peekFirst()) != null && first[0] <= before) {
          cutOff.pollFirst();
          free(first[1]);
        }
        anyCutOff = !cutOff.isEmpty();
      }
    }
  }

  /**
   * A request left Lettuce without an answer: never written (refused by Lettuce, not
   * connected) or drained when its connection was lost.
   */
  void left(long size) {
    free(size);
  }

  private void free(long size) {
    requests.decrementAndGet();
    bytes.addAndGet(-size);
  }

  /**
   * The request of {@code size} bytes at {@code place} (its {@link #advance()}) was cut off:
   * Lettuce may still hold it, and will not say when it lets go; it stays counted until the
   * node answers a request handed over after it.
   */
  void cutOff(long place, long size) {
    synchronized (this) {
      cutOff.addLast(new long[] {place, size});
      anyCutOff = true;
    }
    unanswered();
  }

  /**
   * Its caller stopped waiting for a request, whose answer will still free it: only one more
   * request in a row without an answer in time.
   */
  void late() {
    unanswered();
  }

  private void freeCutOffLocked() {
    for (long[] each : cutOff) {
      free(each[1]);
    }
    cutOff.clear();
    anyCutOff = false;
  }

  /** One more request in a row got no answer: the node may be set aside (see the class). */
  private void unanswered() {
    if (silent) {
      return;
    }
    int row = unansweredInARow.incrementAndGet();
    long now = clock.getAsLong();
    long since = rowSince;
    if (since == NONE) {
      rowSince = now;
      since = now;
    }
    if (row < silentAfter || now - since < silentForNanos) {
      return;
    }
    boolean set;
    synchronized (this) {
      set = !silent;
      if (set) {
        silent = true;
        silentSince = now;
        silentFrom = handedOver.get();
        refusedAtSilence = refused.sum();
        peakAtSilence = requests.get();
      }
    }
    if (set) {
      log.warn(
          "node={} stalled: {} requests in a row got no answer for {}, {} requests ({} bytes)"
              + " wait on it; its votes fail at once (STALLED) until it answers again",
          name,
          row,
          elapsed(since),
          requests.get(),
          bytes.get());
      onSilent.run();
    }
  }

  private Runnable onSilent = () -> {};

  /** Called (outside any lock) each time the node is set aside: sends the first sentinel. */
  void onSilent(Runnable action) {
    this.onSilent = action;
  }

  /** Whether the node is set aside now. */
  boolean isSilent() {
    return silent;
  }

  /**
   * Sentinel {@code before} (its {@link #position()}) was answered: everything handed over
   * before it was answered too. Returns whether the node is back; when not (a request handed
   * over after it was cut off), send another.
   */
  boolean sentinelAnswered(long before) {
    progress(before);
    long since;
    long refusedMeanwhile;
    int peak;
    synchronized (this) {
      if (!silent) {
        return true;
      }
      if (anyCutOff || before < silentFrom) {
        return false;
      }
      silent = false;
      since = silentSince;
      refusedMeanwhile = refused.sum() - refusedAtSilence;
      peak = peakAtSilence;
    }
    log.info(
        "node={} answers again after {}: {} votes failed at once meanwhile, {} requests were"
            + " waiting on it when it stalled",
        name,
        elapsed(since),
        refusedMeanwhile,
        peak);
    return true;
  }

  /**
   * The connection was lost: Lettuce drained every request it held (each request still
   * counted by itself is freed by {@link #left}); the cut-off part is freed here, and the
   * silence ends: the new connection starts clean, and the restart guard holds the node back
   * until its probe is answered on it.
   */
  void connectionLost() {
    long since = 0;
    long refusedMeanwhile = 0;
    boolean wasSilent;
    synchronized (this) {
      if (anyCutOff) {
        freeCutOffLocked();
      }
      wasSilent = silent;
      if (wasSilent) {
        silent = false;
        since = silentSince;
        refusedMeanwhile = refused.sum() - refusedAtSilence;
      }
    }
    unansweredInARow.set(0);
    rowSince = NONE;
    if (wasSilent) {
      log.info(
          "node={} connection lost after {} stalled ({} votes failed at once meanwhile):"
              + " reconnecting; it counts again once the restart guard's probe is answered",
          name,
          elapsed(since),
          refusedMeanwhile);
    }
  }

  private String elapsed(long since) {
    long millis = (clock.getAsLong() - since) / 1_000_000L;
    return millis < 10_000 ? millis + " ms" : (millis / 1000) + " s";
  }

  /** Requests counted now (an upper bound of what Lettuce holds for votes). */
  int requests() {
    return requests.get();
  }

  /** Bytes counted now, batches of extensions aside. */
  long bytes() {
    return bytes.get();
  }

  /** Bytes of batches of extensions counted now. */
  long batchBytes() {
    return batchBytes.get();
  }

  /** The most requests ever counted at once (never more than twice the bound). */
  int peakRequests() {
    return peakRequests.get();
  }

  /** The most bytes ever counted at once (never more than twice the bound). */
  long peakBytes() {
    return peakBytes.get();
  }

  /** Votes failed at once, since the start. */
  long refused() {
    return refused.sum();
  }

  private final LongAdder otherRequestsNotSent = new LongAdder();

  /** A request that is not a vote (a restart guard's probe) was failed at once: set aside. */
  void otherRequestNotSent() {
    otherRequestsNotSent.increment();
  }

  /** Requests other than votes failed at once because the node was set aside, since the start. */
  long otherRequestsNotSent() {
    return otherRequestsNotSent.sum();
  }
}
