package io.redlock.internal;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LossCause;
import io.redlock.NodeOutcome.Vote;
import io.redlock.RedlockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Lease} the engine hands out: its deadline, its state and its watchdog.
 *
 * <p>Note on concurrency: {@code state}, {@code deadline}, the watchdog task and the listeners
 * change only under this object's monitor; {@code state} and {@code deadline} are volatile so
 * that {@link #isValid()} reads them without locking. A lease becomes lost by expiry only
 * after the deadline is read again under the monitor, so an extension that moved it cannot be
 * undone by a reader that saw the old one; and an extension is accepted only if its quorum
 * came before the old deadline by the clock read under the monitor, so nobody can have seen
 * the lease invalid in between. Network requests are sent, and listeners run, outside the
 * monitor; listeners run on the engine's callback executor, never on the timer thread.
 * Extensions are chained so that at most one is being decided: a failed extension shortens
 * the deadline to what the nodes it may have reached guarantee, and two at once could not
 * compute that. The next one starts when the previous one is decided, not when every node
 * answered it; that is safe because each node runs a lease's requests in the order they were
 * sent, each written once (see {@link io.redlock.spi.NodeClient}). The chain is internal:
 * the caller's futures are copies, so cancelling one cannot break it.
 */
final class HeldLease implements Lease, BatchRound.Member {
  private static final Logger log = LoggerFactory.getLogger(HeldLease.class);

  private final LockEngine engine;
  private final List<String> resources;
  private final List<String> keys;
  private final String token;
  private final long fencingToken; // 0 when not fenced
  private final TimeSource time;

  private volatile State state = State.HELD;
  private volatile long deadline;
  private long ttlMillis;
  private LeaseLostException lostCause;
  private CompletableFuture<Void> released;
  private final CompletableFuture<Void> releasedByMajority = new CompletableFuture<>();
  private CompletableFuture<Boolean> lastExtension;
  private boolean autoExtend;
  private boolean extending;
  private TimeSource.Cancellable watch;

  /**
   * The slot of the {@link ExtensionBatcher} this lease waits in for its next auto-extension,
   * or {@link ExtensionBatcher#NO_SLOT}; an entry in any other slot is stale.
   */
  private long batchSlot = ExtensionBatcher.NO_SLOT;

  /**
   * This lease's place in the array of the batcher's slot it waits in; read and written only
   * under the batcher's monitor (another lease's removal moves it), meaningless when it waits
   * in none.
   */
  int slotIndex;

  /**
   * Whether a batch claimed this lease's auto-extension and has not decided it yet. A batch
   * claims a held lease about once per half ttl, so what a claim records is kept in fields of
   * primitive types: a future per claim, stored in a lease that lives long, would cost the
   * garbage collector's write barrier a card to refine per lease and extension (G1's
   * refinement threads took 44 of 300 ms of a client's CPU a second holding 100,000 leases,
   * in one scratch measurement; 0.7 of 193 without the futures).
   * The futures below are made only when someone waits for the batch.
   */
  private boolean batchPending;

  /** When the claimed batch started, and the ttl it extends by: set with {@code batchPending}. */
  private long batchedStart;

  private long batchedTtl;

  /**
   * The claimed batch's decision, made only for a caller's extension that must come after it
   * ({@link #extendInternal}); completed when the batch decides, or is given up.
   */
  private CompletableFuture<Boolean> batched;

  /** Whether the claimed batch's requests were handed to every node's transport (or given up). */
  private boolean batchWritten;

  /**
   * Completed once the claimed batch's requests are out ({@code batchWritten}): what a shorter
   * expiry of {@link #releaseAfter} must come after. Made only for that release.
   */
  private CompletableFuture<Void> batchOut;

  private final List<Consumer<? super LeaseLostException>> listeners = new ArrayList<>(0);

  /**
   * The round that took the keys, until every node answered it or timed out: an extension and
   * the shorter expiry of {@link #releaseAfter} go to a node only after that node answered this
   * round, since a transport may carry them on another connection than the lock (see {@link
   * LockEngine#afterLock}). Then {@code null}: a held lease keeps no round. The price
   * is one callback on the round's {@code settled} future per lease granted before its last
   * node answered (three small objects, short-lived); keeping the round instead would keep its
   * requests, with their arguments, for as long as a lease without auto-extension is held.
   */
  private Round lockRound;

  HeldLease(
      LockEngine engine,
      List<String> resources,
      List<String> keys,
      String token,
      long ttlMillis,
      long deadline,
      long fencingToken,
      Round lockRound) {
    this.engine = engine;
    this.fencingToken = fencingToken;
    this.resources = resources;
    this.keys = keys;
    this.token = token;
    this.time = engine.time();
    this.ttlMillis = ttlMillis;
    this.deadline = deadline;
    if (!lockRound.settled().isDone()) {
      this.lockRound = lockRound;
      lockRound.settled().thenRun(this::lockRoundSettled);
    }
  }

  private synchronized void lockRoundSettled() {
    lockRound = null;
  }

  @Override
  public long fencingToken() {
    if (fencingToken <= 0) {
      throw new IllegalStateException(
          "lease on "
              + resources
              + " is not fenced: fencing tokens"
              + " come with RedlockConfig.Builder.fencing(true)");
    }
    return fencingToken;
  }

  @Override
  public List<String> resources() {
    return resources;
  }

  @Override
  public String token() {
    return token;
  }

  @Override
  public State state() {
    isValid(); // a held lease past its deadline becomes lost here
    return state;
  }

  @Override
  public Duration remaining() {
    if (!isValid()) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(Math.max(0, deadline - time.nanoTime()));
  }

  @Override
  public boolean isValid() {
    if (state != State.HELD) {
      return false;
    }
    if (Validity.isValidAt(deadline, time.nanoTime())) {
      return true;
    }
    return !expireIfDue();
  }

  /** True if the lease is past its deadline when looked at under the monitor (and now lost). */
  boolean isPastDeadline() {
    return !Validity.isValidAt(deadline, time.nanoTime());
  }

  @Override
  public void ensureValid() {
    if (isValid()) {
      return;
    }
    synchronized (this) {
      if (lostCause != null) {
        throw new LeaseLostException(lostCause);
      }
      throw new IllegalStateException("lease on " + describe() + " was released");
    }
  }

  @Override
  public boolean extend(Duration ttl) throws InterruptedException {
    try {
      return extendInternal(ttl).get(); // the caller waits itself: no hand-off needed
    } catch (ExecutionException e) {
      throw rethrow(e.getCause());
    }
  }

  @Override
  public CompletableFuture<Boolean> extendAsync(Duration ttl) {
    return engine.handOff(extendInternal(ttl));
  }

  /** Like {@link #extendAsync}, completing on whatever thread decides. */
  CompletableFuture<Boolean> extendInternal(Duration ttl) {
    long newTtlMillis = engine.checkTtl(ttl);
    CompletableFuture<Boolean> previous;
    CompletableFuture<Boolean> next = new CompletableFuture<>();
    synchronized (this) {
      previous = batchPending ? batchedLocked() : lastExtension;
      lastExtension = next;
    }
    Runnable go =
        () ->
            extendNow(newTtlMillis)
                .whenComplete(
                    (extended, error) -> {
                      if (error != null) {
                        next.completeExceptionally(Futures.unwrap(error));
                      } else {
                        next.complete(extended);
                      }
                    });
    if (previous == null || previous.isDone()) {
      go.run();
    } else {
      previous.whenComplete((ignored, error) -> engine.dispatch(go));
    }
    return next;
  }

  private CompletableFuture<Boolean> extendNow(long newTtlMillis) {
    long start = time.nanoTime();
    long previousDeadline;
    Round answering;
    synchronized (this) {
      if (state == State.RELEASED) {
        return CompletableFuture.failedFuture(releasedError());
      }
      if (state == State.LOST) {
        return CompletableFuture.failedFuture(new LeaseLostException(lostCause));
      }
      previousDeadline = deadline;
      answering = lockRound;
    }
    if (!Validity.isValidAt(previousDeadline, start)) {
      expireIfDue();
      return CompletableFuture.failedFuture(lostError());
    }
    // An extension right after the lock must not overtake it on a node that has not run it.
    Round round =
        engine.countedRound(
            (index, node) ->
                engine.afterLock(answering, index, () -> node.extend(keys, token, newTtlMillis)));
    engine.events().votes(RedlockEvent.Operation.EXTEND, round);
    CompletableFuture<Boolean> decided =
        round.decision().thenApply(result -> extended(result, start, newTtlMillis));
    if (engine.events().on()) {
      decided.whenComplete(
          (ok, e) -> engine.events().extended(this, ok, e, time.nanoTime() - start));
    }
    return decided;
  }

  /** The claimed batch's decision, made on first use (see {@code batchPending}). */
  private CompletableFuture<Boolean> batchedLocked() {
    if (batched == null) {
      batched = new CompletableFuture<>();
    }
    return batched;
  }

  /** When the claimed batch's requests are out, made on first use (see {@code batchPending}). */
  private CompletableFuture<Void> batchOutLocked() {
    if (batchOut == null) {
      batchOut = new CompletableFuture<>();
    }
    return batchOut;
  }

  /** The keys and token of this lease, for a batch of extensions. */
  io.redlock.spi.ExtendRequest extendRequest(long ttlMillis) {
    return new io.redlock.spi.ExtendRequest(keys, token, ttlMillis);
  }

  /**
   * Called by the {@link ExtensionBatcher} when slot {@code slot} falls due: claims this
   * lease's auto-extension for a batch that starts at {@code start}. Returns the ttl to extend
   * by, or -1 when the batch is not to carry it: a stale entry (the lease waits in another
   * slot, or nowhere), a lease no longer held or auto-extended, one whose validity ran out
   * (then lost here), or one with an extension of its caller's still in flight (then this
   * one is chained behind it, on its own, as every extension of a lease is).
   */
  long claimBatched(long slot, long start) {
    long ttl;
    boolean expired = false;
    boolean alone = false;
    synchronized (this) {
      if (batchSlot != slot) {
        return -1;
      }
      batchSlot = ExtensionBatcher.NO_SLOT;
      if (state != State.HELD || !autoExtend || extending) {
        return -1;
      }
      ttl = ttlMillis;
      if (!Validity.isValidAt(deadline, start)) {
        expired = true;
      } else {
        extending = true;
        if (lastExtension != null && !lastExtension.isDone()) {
          alone = true;
        } else {
          batchPending = true;
          batchWritten = false;
          batchedStart = start;
          batchedTtl = ttl;
        }
      }
    }
    if (expired) {
      expireIfDue();
      return -1;
    }
    if (alone) {
      autoExtendAlone(ttl);
      return -1;
    }
    return ttl;
  }

  /**
   * The batch that claimed this lease ({@link #claimBatched}) decided it: the same verdict,
   * log lines and events as an extension sent alone.
   */
  @Override
  public void decided(Round.Result result) {
    CompletableFuture<Boolean> next;
    long start;
    long ttl;
    synchronized (this) {
      if (!batchPending) {
        return; // abandoned: its batch was not sent
      }
      batchPending = false;
      next = batched;
      start = batchedStart;
      ttl = batchedTtl;
      batched = null;
    }
    Boolean extended = null;
    Throwable error = null;
    try {
      extended = extended(result, start, ttl);
    } catch (RuntimeException e) {
      error = e;
    }
    if (engine.events().on()) {
      engine.events().extended(this, extended, error, time.nanoTime() - start);
    }
    if (next != null) { // a caller's extension waits for it
      if (error != null) {
        next.completeExceptionally(error);
      } else {
        next.complete(extended);
      }
    }
    afterAutoExtension(extended, error);
  }

  /**
   * The batch that claimed this lease could not be sent ({@code error}): the extension failed
   * as one sent alone would, and is tried again while the deadline holds.
   */
  void abandoned(Throwable error) {
    boolean pending;
    CompletableFuture<Boolean> next;
    long start;
    synchronized (this) {
      pending = batchPending;
      batchPending = false;
      next = batched; // null unless pending
      start = batchedStart;
      batched = null;
    }
    batchSent();
    if (!pending) {
      return; // claimed, but not for the batch (or decided already)
    }
    if (engine.events().on()) {
      engine.events().extended(this, null, error, time.nanoTime() - start);
    }
    if (next != null) {
      next.completeExceptionally(error);
    }
    afterAutoExtension(null, error);
  }

  /** The claimed batch's requests were handed to every node's transport, or given up. */
  void batchSent() {
    CompletableFuture<Void> out;
    synchronized (this) {
      batchWritten = true;
      out = batchOut;
      batchOut = null;
    }
    if (out != null) {
      out.complete(null);
    }
  }

  /** The deadline, for the batch that claims this lease: how long its nodes may take. */
  long deadlineNanos() {
    return deadline;
  }

  /** Every node of the batch answered or timed out: its votes, to the listeners. */
  @Override
  public void settled(Round.Result result) {
    engine.events().votes(RedlockEvent.Operation.EXTEND, result);
  }

  private boolean extended(Round.Result result, long start, long newTtlMillis) {
    long newDeadline = Validity.validUntil(start, newTtlMillis, engine.config().driftFactor());
    ExtensionVerdict verdict;
    synchronized (this) {
      if (state == State.RELEASED) {
        throw releasedError();
      }
      if (state == State.LOST) {
        throw new LeaseLostException(lostCause);
      }
      long now = time.nanoTime();
      verdict =
          ExtensionVerdict.decide(
              engine.nodes().size(),
              engine.quorum(),
              result.reached(),
              result.count(Vote.TAKEN),
              deadline,
              newDeadline,
              now);
      switch (verdict.kind()) {
        case EXTENDED -> {
          deadline = verdict.deadlineNanos();
          ttlMillis = newTtlMillis;
          rearmUnlessExtendingLocked();
          if (log.isDebugEnabled()) {
            log.debug(
                "extended resource={} validFor={}",
                describe(),
                Durations.formatNanos(deadline - now));
          }
          return true;
        }
        case KEPT_UNCONFIRMED -> {
          deadline = verdict.deadlineNanos();
          rearmUnlessExtendingLocked();
          log.warn(
              "extension not confirmed by a majority, lease still valid for {}:"
                  + " resource={} outcomes={}",
              Durations.formatNanos(deadline - now),
              describe(),
              result.outcomes());
          return false;
        }
        default -> {}
      }
    }
    String reason =
        switch (verdict.kind()) {
          case LOST_EXPIRED -> "its validity ran out before the extension was confirmed";
          case LOST_CONFIRMED_TOO_LATE ->
              "the extension was confirmed only after its new validity had run out";
          case LOST_NOT_HELD ->
              "a majority of the nodes no longer hold its token; outcomes=" + result.outcomes();
          default ->
              "its validity ran out while an extension was unconfirmed; outcomes="
                  + result.outcomes();
        };
    throw new LeaseLostException(lose(verdict.kind().cause(), reason));
  }

  @Override
  public Lease autoExtend() {
    boolean valid = isValid();
    synchronized (this) {
      if (state == State.RELEASED) {
        throw releasedError();
      }
      if (!valid || state == State.LOST) {
        throw lostError();
      }
      autoExtend = true;
      scheduleWatchLocked();
    }
    return this;
  }

  /**
   * With an engine listener registered, watches the deadline from now on, so that a lease
   * that runs out is reported lost when it happens rather than when someone looks.
   */
  void watchIfHeard() {
    if (engine.events().on()) {
      synchronized (this) {
        scheduleWatchLocked();
      }
    }
  }

  @Override
  public void onLost(Consumer<? super LeaseLostException> listener) {
    if (listener == null) {
      throw new NullPointerException("listener");
    }
    LeaseLostException already;
    synchronized (this) {
      already = lostCause;
      if (already == null) {
        listeners.add(listener);
        scheduleWatchLocked();
        return;
      }
    }
    tell(List.of(listener), already);
  }

  /** (Re)arms the one task that watches this lease: the next extension, or the deadline. */
  private void scheduleWatchLocked() {
    long now = time.nanoTime();
    long delay = deadline - now;
    if (autoExtend && !extending) {
      long threshold = (long) (ttlMillis * 1_000_000.0 * engine.config().autoExtendThreshold());
      // Never sooner than a node timeout from now, so that a threshold that leaves little
      // room between extensions cannot make the watchdog extend back to back.
      delay = Math.max(delay - threshold, engine.nodeTimeoutNanos());
      if (state == State.HELD && delay < deadline - now) {
        // The extension comes before the deadline: it waits in the batcher, with the
        // extensions of other leases that fall due about then (see ExtensionBatcher).
        if (watch != null) {
          watch.cancel();
          watch = null;
        }
        batchSlot =
            engine
                .batcher()
                .add(this, batchSlot, now + delay, threshold, now + engine.nodeTimeoutNanos());
        return;
      }
    }
    scheduleWatchInLocked(delay);
  }

  /**
   * Re-arms the watch after the deadline moved, unless an auto-extension is in progress: that
   * one re-arms it once decided ({@link #afterAutoExtension}), so that no timer task is made
   * for the moment in between and cancelled at once.
   */
  private void rearmUnlessExtendingLocked() {
    if (!extending) {
      scheduleWatchLocked();
    }
  }

  /** Takes this lease out of the batcher's slot it waits in, if any. */
  private void leaveBatchLocked() {
    engine.batcher().remove(this, batchSlot);
    batchSlot = ExtensionBatcher.NO_SLOT;
  }

  /** Wakes the watch after {@code delayNanos}, or at the deadline if that comes first. */
  private void scheduleWatchInLocked(long delayNanos) {
    leaveBatchLocked(); // this watch decides now
    if (watch != null) {
      watch.cancel();
      watch = null;
    }
    if (state != State.HELD || (!autoExtend && listeners.isEmpty() && !engine.events().on())) {
      return;
    }
    long delay = Math.min(delayNanos, deadline - time.nanoTime());
    watch = time.schedule(this::onWatch, Math.max(0, delay));
  }

  private void onWatch() {
    long ttl;
    synchronized (this) {
      watch = null;
      if (state != State.HELD) {
        return;
      }
      if (Validity.isValidAt(deadline, time.nanoTime()) && autoExtend && !extending) {
        extending = true;
        ttl = ttlMillis;
      } else {
        ttl = -1;
      }
    }
    if (ttl < 0) {
      if (isValid()) {
        synchronized (this) {
          scheduleWatchLocked();
        }
      }
      return;
    }
    autoExtendAlone(ttl);
  }

  /**
   * An auto-extension sent on its own; one that fails before it is sent is decided as failed
   * (then retried), so that {@code extending} never stays set.
   */
  private void autoExtendAlone(long ttl) {
    CompletableFuture<Boolean> extension;
    try {
      extension = extendInternal(Duration.ofMillis(ttl));
    } catch (RuntimeException e) {
      afterAutoExtension(null, e);
      return;
    }
    extension.whenComplete(this::afterAutoExtension);
  }

  /** An auto-extension was decided: arms the watch for the next one, or for a retry. */
  private void afterAutoExtension(Boolean ok, Throwable error) {
    synchronized (this) {
      extending = false;
      if (state != State.HELD) {
        return;
      }
      if (Boolean.TRUE.equals(ok)) {
        scheduleWatchLocked();
      } else {
        // Too few nodes answered: try again soon, while the old deadline still holds; in a
        // batch, with the other leases that were not confirmed either (a batch that timed out
        // leaves many), on a fine grid of their own: a retry waits for no slot.
        long now = time.nanoTime();
        long retry = now + 2 * engine.nodeTimeoutNanos();
        if (autoExtend && retry - deadline < 0) {
          if (watch != null) {
            watch.cancel();
            watch = null;
          }
          batchSlot =
              engine.batcher().add(this, batchSlot, retry, 0, now + engine.nodeTimeoutNanos());
        } else {
          scheduleWatchInLocked(2 * engine.nodeTimeoutNanos());
        }
      }
    }
  }

  @Override
  public void release() {
    // Returns once a majority has freed the keys: no other client can be kept from the
    // resources by this lease any more. The other nodes' answers are awaited in the background.
    awaitMajority(releaseInternal(true, 0));
  }

  @Override
  public void releaseAfter(Duration delay) {
    if (delay == null) {
      throw new NullPointerException("delay");
    }
    Duration maxTtl = engine.config().maxTtl();
    if (delay.toMillis() < 1 || delay.compareTo(maxTtl) > 0) {
      throw new IllegalArgumentException(
          "delay "
              + Durations.format(delay)
              + " is not accepted: it must be 1 ms to maxTtl ("
              + Durations.format(maxTtl)
              + "); use release() to free the resources at once");
    }
    long millis = delay.toMillis();
    awaitMajority(releaseInternal(true, millis));
  }

  private void awaitMajority(CompletableFuture<Void> done) {
    try {
      // The round ends by itself after one node timeout; the bound only guards against a
      // timer that cannot run (the release goes on in the background either way).
      done.get(engine.releaseWaitNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the release goes on; the caller sees the flag
    } catch (ExecutionException | TimeoutException e) {
      log.debug("release not confirmed in time: resource={}", describe());
    }
  }

  @Override
  public CompletableFuture<Void> releaseAsync() {
    return engine.handOff(releaseInternal());
  }

  /** Like {@link #releaseAsync}, completing on whatever thread settles the round. */
  CompletableFuture<Void> releaseInternal() {
    return releaseInternal(false, 0);
  }

  /**
   * Starts the release (once); the future completes when every node answered or timed out, or
   * with {@code majorityEnough}, as soon as a majority answered. With {@code keepMillis} > 0
   * the keys are left to expire in that time instead of being deleted.
   */
  private CompletableFuture<Void> releaseInternal(boolean majorityEnough, long keepMillis) {
    isValid(); // a lease past its deadline is lost, and its listeners told, before it goes
    CompletableFuture<?> inFlight;
    Round answering;
    synchronized (this) {
      if (released != null) {
        return majorityEnough ? releasedByMajority : released;
      }
      if (state == State.HELD) {
        state = State.RELEASED;
      }
      if (watch != null) {
        watch.cancel();
        watch = null;
      }
      leaveBatchLocked();
      listeners.clear();
      released = new CompletableFuture<>();
      answering = keepMillis > 0 ? lockRound : null;
      // A shorter expiry must reach each node after an extension in flight (a batch's may not
      // be written yet), or that extension would set the full ttl again after it; and after
      // the lock on a node that has not answered it yet (lockRound, see expireEverywhere). A delete
      // needs no wait: no extension re-creates a key. A batch is waited for until its requests
      // are out (each node answers in order), not until decided: it may wait ten node timeouts.
      if (keepMillis <= 0) {
        inFlight = null;
      } else if (batchPending) {
        inFlight = batchWritten ? null : batchOutLocked();
      } else {
        inFlight = lastExtension != null && !lastExtension.isDone() ? lastExtension : null;
      }
    }
    engine.forget(this);
    CompletableFuture<Void> done = released;
    if (engine.events().on()) {
      long start = time.nanoTime();
      done.thenRun(() -> engine.events().released(this, time.nanoTime() - start));
    }
    Runnable send =
        () ->
            (keepMillis > 0
                    ? engine.expireEverywhere(
                        resources, keys, token, keepMillis, releasedByMajority, answering)
                    : engine.releaseEverywhere(resources, keys, token, releasedByMajority))
                .whenComplete((ok, error) -> done.complete(null));
    if (inFlight == null) {
      send.run();
    } else {
      // decided once every node's request of it was handed to the transport: ours go after
      inFlight.whenComplete((extended, error) -> engine.dispatch(send));
    }
    return majorityEnough ? releasedByMajority : done;
  }

  @Override
  public void close() {
    release();
  }

  /** Makes a held lease lost if its deadline has passed, re-read under the monitor. */
  private boolean expireIfDue() {
    synchronized (this) {
      if (state != State.HELD || Validity.isValidAt(deadline, time.nanoTime())) {
        return state != State.HELD;
      }
    }
    lose(LossCause.EXPIRED, "its validity ran out");
    return true;
  }

  /**
   * Moves a held lease to {@link State#LOST}, tells the listeners and deletes what is left of
   * it on the nodes. Returns the cause, also when the lease was lost before.
   */
  private LeaseLostException lose(LossCause lossCause, String reason) {
    List<Consumer<? super LeaseLostException>> toTell;
    LeaseLostException cause;
    synchronized (this) {
      if (state == State.LOST) {
        return lostCause;
      }
      if (state == State.RELEASED) {
        return new LeaseLostException(resources, "it was released");
      }
      cause = new LeaseLostException(resources, lossCause, reason);
      lostCause = cause;
      state = State.LOST;
      if (watch != null) {
        watch.cancel();
        watch = null;
      }
      leaveBatchLocked();
      toTell = List.copyOf(listeners);
      listeners.clear();
    }
    engine.forget(this);
    log.warn("lease lost: resource={} reason={}", describe(), reason);
    engine.events().leaseLost(this, lossCause, reason);
    // Keys that outlived our validity on some nodes are ours to delete, and deleting them
    // frees the resource sooner; compare-and-delete never touches another holder's key.
    engine.releaseEverywhere(resources, keys, token);
    tell(toTell, cause);
    return cause;
  }

  private void tell(List<Consumer<? super LeaseLostException>> toTell, LeaseLostException cause) {
    if (toTell.isEmpty()) {
      return;
    }
    engine
        .callbacks()
        .execute(
            () -> {
              for (Consumer<? super LeaseLostException> listener : toTell) {
                try {
                  listener.accept(cause);
                } catch (RuntimeException e) {
                  log.error("lost-lease listener failed: resource={}", describe(), e);
                }
              }
            });
  }

  private LeaseLostException lostError() {
    synchronized (this) {
      return lostCause != null
          ? new LeaseLostException(lostCause)
          : new LeaseLostException(resources, "its validity ran out");
    }
  }

  private IllegalStateException releasedError() {
    return new IllegalStateException("lease on " + describe() + " was released");
  }

  /** The resource names for logs and messages, control characters escaped. */
  private String describe() {
    return Printable.of(String.join(", ", resources));
  }

  private static RuntimeException rethrow(Throwable cause) {
    if (cause instanceof LeaseLostException) {
      return new LeaseLostException((LeaseLostException) cause);
    }
    if (cause instanceof RuntimeException) {
      return (RuntimeException) cause;
    }
    if (cause instanceof Error) {
      throw (Error) cause;
    }
    return new io.redlock.RedlockException("extension failed: " + cause, cause);
  }

  @Override
  public String toString() {
    // Reads the fields only: toString() must not change state or call listeners.
    long left = deadline - time.nanoTime();
    return "Lease{resources="
        + resources
        + ", state="
        + state
        + ", remaining="
        + (state == State.HELD && left > 0 ? Durations.formatNanos(left) : "0 ms")
        + "}";
  }
}
