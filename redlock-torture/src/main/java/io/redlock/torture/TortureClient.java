package io.redlock.torture;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.Redlock;
import io.redlock.testkit.History;
import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.WorkRecord;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client of a torture run: it acquires a random resource, works under the lease, checks
 * the lease right before its "write", writes, and releases; everything it does goes to the
 * {@link History}.
 *
 * <p>The check-then-write is what a careful holder does. A {@linkplain #requestPause() pause}
 * stops the client for longer than its lease is valid: before the check (Redlock's
 * assumption holds: the client sees its lease is gone and does not write), or, when the run
 * asks for it, between the check and the write, which no lock can protect against.
 *
 * <p>What it acquires, fails to acquire and holds, it also tells the run's
 * {@link TortureListener}.
 *
 * <p>Runs on its own thread; {@link #requestPause()} and {@link #holding()} are thread-safe.
 */
final class TortureClient implements Runnable, ClientHandle {
  private final String name;
  private final Redlock redlock;
  private final List<String> resources;
  private final TortureOptions options;
  private final History history;
  private final TortureCounters counters;
  private final Random random;
  private final long endNanos;
  private final AtomicBoolean pauseRequested = new AtomicBoolean();
  private final AtomicReference<String> holding = new AtomicReference<>();
  private final TortureListener listener;
  private final FencedStore store; // null unless fenced

  TortureClient(
      String name,
      Redlock redlock,
      List<String> resources,
      TortureOptions options,
      History history,
      TortureCounters counters,
      long seed,
      long endNanos,
      TortureListener listener,
      FencedStore store) {
    this.listener = listener;
    this.store = store;
    this.name = name;
    this.redlock = redlock;
    this.resources = resources;
    this.options = options;
    this.history = history;
    this.counters = counters;
    this.random = new Random(seed);
    this.endNanos = endNanos;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String holding() {
    return holding.get();
  }

  @Override
  public void requestPause() {
    pauseRequested.set(true);
  }

  @Override
  public void run() {
    while (System.nanoTime() - endNanos < 0 && !Thread.currentThread().isInterrupted()) {
      try {
        cycle();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        counters.failure("unexpected: " + e.getClass().getSimpleName());
      }
    }
  }

  private void cycle() throws InterruptedException {
    String resource = resources.get(random.nextInt(resources.size()));
    counters.attempt();
    long attemptStart = System.nanoTime();
    Lease lease;
    try {
      lease = redlock.acquire(resource, options.ttl());
    } catch (LockUnavailableException e) {
      counters.failure(causeOf(e.lastOutcomes(), redlock.quorum()));
      listener.failed(name, e.lastOutcomes(), attemptStart);
      Thread.sleep(5 + random.nextInt(20));
      return;
    }
    long granted = System.nanoTime();
    long validUntil = granted + lease.remaining().toNanos();
    listener.acquired(name, Duration.ofNanos(granted - attemptStart));
    holding.set(resource);
    listener.holding(name, resource, validUntil);
    counters.granted();
    boolean lost = false;
    try {
      if (!options.pauseBetweenCheckAndWrite()) {
        pauseIfAsked(); // before the check: the check then catches the loss
      }
      if (!lease.isValid()) {
        lost = true;
        counters.lost();
        return;
      }
      long workStart = System.nanoTime();
      long read = 0;
      if (store != null) {
        OptionalLong value = store.begin(name, resource, lease.token(), lease.fencingToken());
        if (value.isEmpty()) {
          // a later holder has read: our lease ended meanwhile (the store logs the refusal)
          return;
        }
        read = value.getAsLong();
      }
      if (options.pauseBetweenCheckAndWrite()) {
        pauseIfAsked(); // between check and write: only a fenced store can catch this one
      }
      Thread.sleep(random.nextInt((int) options.work().toMillis() + 1));
      if (store != null
          && !store.commit(name, resource, lease.token(), lease.fencingToken(), read + 1)) {
        // a stale write, refused: it never reached the resource (the store logs the refusal)
        return;
      }
      if (store != null) {
        counters.committed();
      }
      history.work(new WorkRecord(name, resource, lease.token(), workStart, System.nanoTime()));
    } finally {
      long releasing = System.nanoTime();
      holding.set(null);
      listener.holding(name, null);
      lease.release();
      history.lease(
          new LeaseRecord(
              name,
              resource,
              lease.token(),
              granted,
              validUntil,
              releasing,
              lost,
              store != null ? lease.fencingToken() : 0));
    }
  }

  private void pauseIfAsked() throws InterruptedException {
    if (pauseRequested.getAndSet(false)) {
      Duration pause = options.ttl().multipliedBy(3).dividedBy(2);
      Thread.sleep(pause.toMillis());
    }
  }

  /** Why an acquisition failed, by the votes of its last attempt and the client's quorum. */
  static String causeOf(List<NodeOutcome> outcomes, int quorum) {
    // Untrusted counters are the cause only if those nodes would have made the majority.
    long granted = outcomes.stream().filter(o -> o.vote() == Vote.GRANTED).count();
    long untrusted = outcomes.stream().filter(o -> o.vote() == Vote.UNTRUSTED).count();
    if (untrusted > 0 && granted + untrusted >= quorum) {
      return "fencing: too few nodes with trusted counters";
    }
    int taken = 0;
    int guarded = 0;
    int other = 0;
    for (NodeOutcome outcome : outcomes) {
      if (outcome.vote() == Vote.TAKEN) {
        taken++;
      } else if (outcome.vote() == Vote.HELD_BACK) {
        guarded++;
      } else if (outcome.vote() != Vote.GRANTED && outcome.vote() != Vote.PENDING) {
        other++;
      }
    }
    if (taken >= guarded && taken >= other && taken > 0) {
      return "held by another client";
    }
    if (guarded >= other && guarded > 0) {
      return "nodes held back by the restart guard";
    }
    return "nodes unreachable or slow";
  }
}
