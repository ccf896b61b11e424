package io.redlock.internal;

import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The auto-extensions of one engine's leases, sent in batches: the leases whose extension
 * falls due in the same slot of time go to each node as one {@link NodeClient#extendBatch}
 * call, in chunks of at most {@link #MAX_BATCH}, instead of one request per lease and node.
 * With many leases held, what the watchdog costs then grows with the number of slots and
 * chunks, not with the number of leases times the nodes (docs/performance.md, "Many leases
 * held at once").
 *
 * <p>Slots. A lease is due when less than its threshold ({@code autoExtendThreshold} of its
 * ttl) is left. It waits in the slot that starts at or before that moment on a grid whose step
 * is the largest power of two (in nanoseconds) not above a quarter of the threshold: it is
 * extended at most a quarter of its threshold early, never late, and leases with the same ttl
 * share slots whenever they fall due within one step. A batch extends each of its leases from
 * the same instant, so leases once batched together stay together. A slot that would start
 * sooner than one node timeout from now is not used: such a lease waits for its own due time
 * (the rule that keeps the watchdog from extending back to back).
 *
 * <p>Each lease is still judged on its own: its votes are collected by a {@link Round} of its
 * own, decided by the same quorum and validity rules as an extension sent alone ({@link
 * ExtensionVerdict}), and told to the listeners, the metrics and the log as one lease's story.
 * A batch waits for its nodes longer than one request does ({@link #waitNanos}): nobody waits
 * on it, and a busy server answers a thousand keys late rather than not at all. A lease whose
 * extension too few nodes confirmed tries again in a batch too, with the others of its batch.
 * A node the restart guard holds back is not asked, and votes {@code HELD_BACK} for every
 * lease of the batch.
 *
 * <p>A lease leaves its slot when it moves to another (a caller's extension) and when it ends
 * (released or lost); the timer task is cancelled once no slot is left, so that nothing of a
 * lease stays behind it.
 *
 * <p>Note on concurrency: the slots and the armed timer task change under this object's
 * monitor, which is taken while a lease holds its own (a lease adds and removes itself from
 * its monitor), never the other way round: leases are claimed and sent outside it. A lease
 * found in a slot that falls due checks, under its own monitor, that it still waits there
 * ({@link HeldLease#claimBatched}).
 */
final class ExtensionBatcher {
  private static final Logger log = LoggerFactory.getLogger(ExtensionBatcher.class);

  /** No slot: a lease that waits in none. */
  static final long NO_SLOT = Long.MIN_VALUE;

  /**
   * The most leases one batch carries to a node: {@value}. A larger number of leases due in
   * one slot goes in several batches, each sent on its own turn of the timer thread, so that
   * node timeouts that fall due meanwhile are not held up.
   */
  static final int MAX_BATCH = 1000;

  /** The longest a batch waits for its nodes, in node timeouts: {@value} (see {@link #waitNanos}). */
  static final int MAX_WAIT_TIMEOUTS = 10;

  /** The finest grid step: about 1 ms ({@code 2^20} ns). */
  private static final long MIN_STEP_NANOS = 1L << 20;

  private final LockEngine engine;
  private final TimeSource time;
  private final TreeMap<Long, Slot> slots = new TreeMap<>();
  private Tick armed;
  private boolean closed;

  ExtensionBatcher(LockEngine engine) {
    this.engine = engine;
    this.time = engine.time();
  }

  /**
   * The slot for an extension due at {@code dueNanos} by a lease whose threshold is {@code
   * thresholdNanos}: the start of the grid step of a quarter of the threshold that holds the
   * due time, or the due time itself when that start is before {@code earliestNanos}.
   */
  static long slotFor(long dueNanos, long thresholdNanos, long earliestNanos) {
    long step = Long.highestOneBit(Math.max(MIN_STEP_NANOS, thresholdNanos / 4));
    long slot = Math.floorDiv(dueNanos, step) * step;
    return slot - earliestNanos < 0 ? dueNanos : slot;
  }

  /**
   * Puts {@code lease}, due at {@code dueNanos}, in its slot (see {@link #slotFor}), out of
   * {@code currentSlot} if it waits in another; returns the slot. Called under the lease's
   * monitor.
   */
  long add(
      HeldLease lease, long currentSlot, long dueNanos, long thresholdNanos, long earliestNanos) {
    long slot = slotFor(dueNanos, thresholdNanos, earliestNanos);
    if (slot == currentSlot) {
      return slot;
    }
    synchronized (this) {
      removeLocked(lease, currentSlot);
      if (closed) {
        return NO_SLOT;
      }
      slots.computeIfAbsent(slot, s -> new Slot()).add(lease);
      armLocked();
    }
    return slot;
  }

  /**
   * Takes {@code lease} out of {@code slot} (nothing when {@link #NO_SLOT}); called under the
   * lease's monitor when it ends or waits for its own timer instead.
   */
  void remove(HeldLease lease, long slot) {
    if (slot == NO_SLOT) {
      return;
    }
    synchronized (this) {
      removeLocked(lease, slot);
    }
  }

  private void removeLocked(HeldLease lease, long slot) {
    if (slot == NO_SLOT) {
      return;
    }
    Slot waiting = slots.get(slot);
    if (waiting != null && waiting.remove(lease) && waiting.isEmpty()) {
      slots.remove(slot);
      if (slots.isEmpty() && armed != null) {
        armed.cancelled = true;
        armed.task.cancel();
        armed = null;
      }
    }
  }

  /** Drops every waiting lease and the timer task: the engine closes (its leases are released). */
  synchronized void close() {
    closed = true;
    slots.clear();
    if (armed != null) {
      armed.cancelled = true;
      armed.task.cancel();
      armed = null;
    }
  }

  /** Arms one timer task for the earliest slot, unless one is armed for it or sooner. */
  private void armLocked() {
    if (slots.isEmpty()) {
      return;
    }
    long first = slots.firstKey();
    if (armed != null) {
      if (armed.slot - first <= 0) {
        return;
      }
      armed.cancelled = true;
      armed.task.cancel();
    }
    Tick tick = new Tick(first);
    armed = tick;
    tick.task = time.schedule(tick, first - time.nanoTime());
  }

  /** The timer task of one arming: sends the slots that are due, then arms for the next. */
  private final class Tick implements Runnable {
    final long slot;
    TimeSource.Cancellable task;
    boolean cancelled; // under the batcher's monitor: a cancel that came too late to stop it

    Tick(long slot) {
      this.slot = slot;
    }

    @Override
    public void run() {
      List<Long> dueSlots = new ArrayList<>();
      List<Slot> due = new ArrayList<>();
      synchronized (ExtensionBatcher.this) {
        if (cancelled) {
          return;
        }
        armed = null;
        long now = time.nanoTime();
        while (!slots.isEmpty() && slots.firstKey() - now <= 0) {
          var first = slots.pollFirstEntry();
          dueSlots.add(first.getKey());
          due.add(first.getValue());
        }
        armLocked();
      }
      // Chunks of at most MAX_BATCH entries, the first sent now, each other one on a turn of
      // the timer thread of its own (stale entries make a chunk smaller, never larger).
      int left = 0;
      for (Slot slot : due) {
        left += slot.size;
      }
      List<long[]> chunkSlots = new ArrayList<>();
      List<List<HeldLease>> chunks = new ArrayList<>();
      List<HeldLease> chunk = new ArrayList<>(Math.min(MAX_BATCH, left));
      long[] chunkSlot = new long[MAX_BATCH];
      for (int s = 0; s < due.size(); s++) {
        Slot slot = due.get(s);
        for (int i = 0; i < slot.size; i++) {
          chunkSlot[chunk.size()] = dueSlots.get(s);
          chunk.add(slot.leases[i]);
          left--;
          if (chunk.size() == MAX_BATCH) {
            chunks.add(chunk);
            chunkSlots.add(chunkSlot);
            chunk = new ArrayList<>(Math.min(MAX_BATCH, left));
            chunkSlot = new long[MAX_BATCH];
          }
        }
      }
      if (!chunk.isEmpty()) {
        chunks.add(chunk);
        chunkSlots.add(chunkSlot);
      }
      // The later chunks are scheduled first: a failure sending the first cannot drop them.
      for (int c = 1; c < chunks.size(); c++) {
        List<HeldLease> leases = chunks.get(c);
        long[] leaseSlots = chunkSlots.get(c);
        time.schedule(() -> send(leases, leaseSlots), 0);
      }
      if (!chunks.isEmpty()) {
        send(chunks.get(0), chunkSlots.get(0));
      }
    }
  }

  /**
   * Claims the leases of one chunk ({@code slotOf[i]} is the slot lease {@code i} was found
   * in), sends their extensions to every node that counts in one call each, and collects the
   * votes of all of them in one {@link BatchRound}.
   */
  private void send(List<HeldLease> candidates, long[] slotOf) {
    long start = time.nanoTime();
    List<HeldLease> leases = new ArrayList<>(candidates.size());
    List<ExtendRequest> requests = new ArrayList<>(candidates.size());
    long room = Long.MAX_VALUE;
    for (int i = 0; i < candidates.size(); i++) {
      HeldLease lease = candidates.get(i);
      long ttl;
      try {
        ttl = lease.claimBatched(slotOf[i], start);
      } catch (RuntimeException e) {
        // One lease's trouble (a listener's executor that refuses its loss) is its own: the
        // others of the chunk, out of their slots already, still go.
        log.warn("auto-extension of one lease not claimed: {}", e.toString());
        continue;
      }
      if (ttl > 0) {
        leases.add(lease);
        room = Math.min(room, lease.deadlineNanos() - start);
        requests.add(lease.extendRequest(ttl));
      }
    }
    if (leases.isEmpty()) {
      return;
    }
    List<NodeClient> nodes = engine.nodes();
    RestartGuard guard = engine.guard();
    try {
      BatchRound.start(
          nodes,
          engine.quorum(),
          time,
          waitNanos(engine.nodeTimeoutNanos(), room),
          leases.toArray(new HeldLease[0]),
          engine.events().on(),
          index -> sendTo(index, nodes.get(index), guard, requests));
    } catch (RuntimeException e) {
      // BatchRound.start throws only before anything of the batch can be decided (its timeout
      // could not be scheduled: the engine closes): each lease fails this extension and tries
      // again, rather than wait for it for ever.
      log.warn("auto-extension batch of {} leases not sent: {}", leases.size(), e.toString());
      for (HeldLease lease : leases) {
        lease.abandoned(e);
      }
      return;
    }
    for (HeldLease lease : leases) {
      lease.batchSent();
    }
  }

  /**
   * The leases that wait in one slot, in no particular order: each lease knows its place in
   * the array ({@link HeldLease#slotIndex}), so that it is added and taken out in constant time
   * without an entry object of a hash set per lease (a held lease moves to a new slot about
   * once per half ttl). Guarded by the batcher's monitor; once taken out of {@link #slots} to
   * be sent, only the timer thread reads it.
   */
  private static final class Slot {
    private HeldLease[] leases = new HeldLease[8];
    private int size;

    void add(HeldLease lease) {
      if (size == leases.length) {
        leases = Arrays.copyOf(leases, size * 2);
      }
      lease.slotIndex = size;
      leases[size++] = lease;
    }

    /** Takes {@code lease} out, the last lease moving to its place; whether it was here. */
    boolean remove(HeldLease lease) {
      int i = lease.slotIndex;
      if (i < 0 || i >= size || leases[i] != lease) {
        return false;
      }
      HeldLease last = leases[--size];
      leases[i] = last;
      last.slotIndex = i;
      leases[size] = null;
      return true;
    }

    boolean isEmpty() {
      return size == 0;
    }
  }

  /**
   * How long a batch waits for its nodes: half the time its earliest lease has left ({@code
   * roomNanos}), at least one node timeout and at most {@value #MAX_WAIT_TIMEOUTS}. A batch runs
   * in the background, with nobody waiting on it; a thousand keys behind other batches on a busy
   * server take longer than one command, and an answer cut off early is only sent again (the
   * server made that extension). Half the room leaves the other half for a retry before the
   * deadline; the cap keeps what a stalled node holds in flight small, and the quorum decides
   * each lease as soon as it is reached either way.
   */
  static long waitNanos(long nodeTimeoutNanos, long roomNanos) {
    return Math.max(
        nodeTimeoutNanos, Math.min(roomNanos / 2, MAX_WAIT_TIMEOUTS * nodeTimeoutNanos));
  }

  /**
   * Node {@code index}'s answers to {@code requests}, or, for a node the restart guard holds
   * back, its reason as the failure of all of them.
   */
  private static CompletionStage<List<Boolean>> sendTo(
      int index, NodeClient node, RestartGuard guard, List<ExtendRequest> requests) {
    if (guard.counts(index)) {
      return node.extendBatch(requests);
    }
    String why = guard.whyHeldBack(index);
    guard.probeIfUnknown(index);
    return CompletableFuture.failedFuture(new HeldBack(why));
  }
}
