package io.redlock;

import io.redlock.internal.LockEngine;
import io.redlock.internal.TimeSource;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Lock} over one resource of a {@link Redlock}: the distributed lock in the shape
 * that {@code java.util.concurrent} code expects. Obtain it with {@link Redlock#asLock(String)}.
 *
 * <pre>{@code
 * Lock lock = redlock.asLock("orders:42");
 * lock.lock();
 * try {
 *   // ... this thread, and no other thread or process, works on orders:42
 * } finally {
 *   lock.unlock();
 * }
 * }</pre>
 *
 * <p><b>Thread-bound and reentrant.</b> A local {@link ReentrantLock} stands in front of the
 * lease and counts the holds of its owner thread: the first hold acquires a lease, further
 * holds by the same thread only count, and the last {@link #unlock()} releases the lease.
 * Threads of this JVM wait for each other on the local lock without asking the nodes;
 * {@link Redlock#asLock(String)} returns the same object for the same resource name, so all
 * of them share it. The lease is extended automatically while held.
 *
 * <p><b>Memory visibility.</b> Acquiring gives the guarantee of a monitor within this JVM:
 * everything a thread did before its last {@code unlock()} happens-before everything another
 * thread does after its {@code lock()} returns, since both pass through the same local
 * {@code ReentrantLock}. Across processes there is no such guarantee: what another process
 * wrote must be read from where it was written.
 *
 * <p><b>A lost lease.</b> If the lease is lost while held (its extension failed, or the
 * process paused past its validity), another process may have acquired the resource. Then
 * a reentrant {@link #tryLock()} returns {@code false} and a reentrant {@link #lock()}
 * throws {@link LeaseLostException}, without counting a hold; and the last
 * {@code unlock()} frees the local lock and then throws {@link LeaseLostException}, so the
 * loss is never silent. Check {@link #lease()}{@code .ensureValid()} before side effects that
 * must not overlap another holder's. The outer holds stay counted: a caller that takes the
 * {@code false} of a reentrant {@code tryLock} as "no longer held" must still
 * {@code unlock()} them, or its thread keeps the local lock. Spring Integration's leader
 * election does not; use {@code RedlockLockRegistry} of {@code redlock-spring-integration},
 * whose locks give those holds up.
 *
 * <p>{@link Lease} stays free of thread ownership: use it directly from async code or when
 * the lock must be released by another thread than the one that took it.
 *
 * <p>Thread-safe.
 *
 * @since 0.1.0
 */
public final class RedlockLock implements Lock {
  private final LockEngine engine;
  private final String resource;
  private final List<String> resources;
  private final Duration ttl;
  private final ReentrantLock local = new ReentrantLock();
  private final Set<RedlockLock> pinned;

  /** Written and read only by the thread that holds {@link #local}. */
  private Lease lease;

  RedlockLock(LockEngine engine, String resource, Duration ttl, Set<RedlockLock> pinned) {
    this.engine = engine;
    this.resource = resource;
    this.resources = List.of(resource);
    this.ttl = ttl;
    this.pinned = pinned;
  }

  /** The resource this lock covers. */
  public String resource() {
    return resource;
  }

  /** The ttl of the leases this lock takes; they are extended automatically while held. */
  public Duration ttl() {
    return ttl;
  }

  /** Whether the current thread holds this lock (its lease may have been lost meanwhile). */
  public boolean isHeldByCurrentThread() {
    return local.isHeldByCurrentThread();
  }

  /** Whether any thread of this JVM holds this lock. */
  public boolean isLocked() {
    return local.isLocked();
  }

  /** How many holds the current thread has on this lock: 0 if it does not hold it. */
  public int getHoldCount() {
    return local.getHoldCount();
  }

  /**
   * The lease behind the current thread's hold, to check it ({@link Lease#ensureValid()},
   * {@link Lease#remaining()}) or read its {@link Lease#token() token}. Do not release it:
   * {@link #unlock()} does.
   *
   * @throws IllegalMonitorStateException if the current thread does not hold this lock
   */
  public Lease lease() {
    checkHeld();
    return lease;
  }

  /**
   * Acquires the lock, waiting as long as it is held elsewhere: when one retry budget of the
   * configuration is spent, it waits a retry delay and starts another. It gives up on an
   * outage, not on contention: once the retry budgets failed for want of answers (their last
   * attempts not refused by another holder, {@link LockUnavailableException#heldElsewhere()}
   * false: nodes down, timing out or held back by the restart guard) for at least
   * {@link RedlockConfig#maxWait()} (10 s by default) in a row, it throws. Any budget that
   * shows the lock held elsewhere starts that count afresh. Not interruptible: an interrupt is
   * remembered and the flag set again when this returns or throws.
   *
   * @throws LockUnavailableException when no majority answered for {@code maxWait}, with the
   *     last attempt's outcome on every node; the local lock is free again and every attempt
   *     was undone on the nodes, as for {@link Redlock#acquire(String, Duration)}
   * @throws LeaseLostException if the current thread holds this lock already but its lease
   *     was lost (no hold is counted then)
   * @throws IllegalStateException if the {@link Redlock} is closed
   */
  @Override
  public void lock() {
    local.lock();
    if (reentered()) {
      return;
    }
    Waiting waiting = new Waiting(false);
    try {
      hold(acquire(waiting, false, 0));
    } catch (InterruptedException e) {
      throw new AssertionError("not interruptible", e);
    } catch (RuntimeException | Error e) {
      local.unlock();
      throw e;
    } finally {
      waiting.restoreInterrupt();
    }
  }

  /**
   * Like {@link #lock()}, but stops when the current thread is interrupted, and then holds
   * nothing: neither the local lock nor a lease (one granted meanwhile is released). Gives up
   * on an outage as {@link #lock()} does.
   *
   * @throws InterruptedException if interrupted before or while waiting
   * @throws LockUnavailableException when no majority answered for {@link
   *     RedlockConfig#maxWait()}, as for {@link #lock()}
   * @throws LeaseLostException if the current thread holds this lock already but its lease
   *     was lost
   * @throws IllegalStateException if the {@link Redlock} is closed
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    local.lockInterruptibly();
    if (reentered()) {
      return;
    }
    try {
      hold(acquire(new Waiting(true), false, 0));
    } catch (InterruptedException | RuntimeException | Error e) {
      local.unlock();
      throw e;
    }
  }

  /**
   * Makes exactly one attempt, if no other thread of this JVM holds the lock; blocks for at
   * most about one node timeout. Reentrant: {@code true} at once if the current thread holds
   * the lock and its lease is valid, {@code false} if the lease was lost. An interrupt is
   * remembered, not thrown.
   *
   * @return whether the current thread holds the lock now
   * @throws IllegalStateException if the {@link Redlock} is closed
   */
  @Override
  public boolean tryLock() {
    if (!local.tryLock()) {
      return false;
    }
    if (local.getHoldCount() > 1) {
      return validOrUndo();
    }
    Waiting waiting = new Waiting(false);
    try {
      return hold(watched(await(engine.time(), engine.acquire(resources, ttl, false), waiting)));
    } catch (InterruptedException e) {
      throw new AssertionError("not interruptible", e);
    } catch (RuntimeException | Error e) {
      local.unlock();
      throw e;
    } finally {
      waiting.restoreInterrupt();
    }
  }

  /**
   * Tries until the lock is acquired or {@code time} has passed, whichever comes first: it
   * retries within the configuration's retry budgets, starting a new one (after a retry
   * delay) while time is left, and each budget is cut off at the deadline. A lease granted
   * after the deadline is released. With {@code time} zero or less it makes one attempt, as
   * {@link #tryLock()}. Reentrant as {@link #tryLock()}.
   *
   * @return whether the current thread holds the lock now
   * @throws InterruptedException if interrupted before or while waiting; nothing is held then
   * @throws IllegalStateException if the {@link Redlock} is closed
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    long nanos = unit.toNanos(time);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (nanos <= 0) {
      return tryLock();
    }
    long deadline = engine.time().nanoTime() + nanos;
    if (!local.tryLock(nanos, TimeUnit.NANOSECONDS)) {
      return false;
    }
    if (local.getHoldCount() > 1) {
      return validOrUndo();
    }
    try {
      return hold(acquire(new Waiting(true), true, deadline));
    } catch (InterruptedException | RuntimeException | Error e) {
      local.unlock();
      throw e;
    }
  }

  /**
   * Releases one hold; the last releases the lease (waiting for at most about one node
   * timeout) and frees the lock for other threads.
   *
   * @throws IllegalMonitorStateException if the current thread does not hold this lock
   * @throws LeaseLostException on the last hold, after freeing the lock, if the lease was
   *     lost while held (or released by {@link Redlock#close()}): the work done under it may
   *     have overlapped another holder's
   */
  @Override
  public void unlock() {
    checkHeld();
    if (local.getHoldCount() > 1) {
      local.unlock();
      return;
    }
    Lease held = lease;
    lease = null;
    LeaseLostException lost;
    try {
      lost = lossOf(held);
      held.release();
    } finally {
      pinned.remove(this);
      local.unlock();
    }
    if (lost != null) {
      throw lost;
    }
  }

  /**
   * Not supported: a {@link Condition} must give up the lock while it waits and take it back
   * when signalled, and a signal from another process could never reach it.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException(
        "RedlockLock offers no Condition: await() would"
            + " have to give up the distributed lock while waiting, and a signal from another"
            + " process could never reach it; wait for a change of the shared resource instead");
  }

  @Override
  public String toString() {
    return "RedlockLock{resource="
        + resource
        + ", ttl="
        + ttl.toMillis()
        + " ms, "
        + (local.isLocked() ? "locked" : "unlocked")
        + "}";
  }

  /**
   * Takes {@code got} as the first hold's lease, or gives the local lock back if there is
   * none. A held view is pinned, so that it stays the view of its resource until unlocked.
   */
  private boolean hold(Lease got) {
    if (got == null) {
      local.unlock();
      return false;
    }
    lease = got;
    pinned.add(this);
    return true;
  }

  private void checkHeld() {
    if (!local.isHeldByCurrentThread()) {
      throw new IllegalMonitorStateException(
          "RedlockLock on "
              + resource
              + " is not held by the current thread ("
              + Thread.currentThread().getName()
              + ")");
    }
  }

  /** After a nested {@code lock()}: true if it is a reentry, which needs a valid lease. */
  private boolean reentered() {
    if (local.getHoldCount() == 1) {
      return false;
    }
    LeaseLostException lost = lossOf(lease);
    if (lost != null) {
      local.unlock();
      throw lost;
    }
    return true;
  }

  /**
   * {@code got} handed to the watchdog, which extends it while it is held; {@code null} (and
   * {@code got} released) if its validity ran out before the watchdog could take it, or if
   * {@code got} is {@code null}.
   */
  private static Lease watched(Lease got) {
    if (got == null) {
      return null;
    }
    try {
      return got.autoExtend();
    } catch (LeaseLostException tooShort) {
      got.release();
      return null;
    }
  }

  /** After a nested {@code tryLock()}: keeps the hold if the lease is valid. */
  private boolean validOrUndo() {
    if (lease.isValid()) {
      return true;
    }
    local.unlock();
    return false;
  }

  /** Why {@code held} is no longer good, or {@code null} if it is valid. */
  private LeaseLostException lossOf(Lease held) {
    if (held.isValid()) {
      return null;
    }
    try {
      held.ensureValid();
    } catch (LeaseLostException e) {
      return e;
    } catch (IllegalStateException released) {
      return new LeaseLostException(
          resources, LossCause.CLOSED, "the Redlock was closed and released it while it was held");
    }
    return null;
  }

  /**
   * Acquires a lease, one retry budget after another (with a retry delay between them),
   * until one succeeds or, if {@code bounded}, the deadline passes ({@code null} then).
   * Unbounded, it throws once the budgets failed for want of answers for {@code maxWait} in a
   * row (see {@link #lock()}).
   */
  private Lease acquire(Waiting waiting, boolean bounded, long deadline)
      throws InterruptedException {
    TimeSource time = engine.time();
    Outage outage = new Outage(engine.config().maxWait().toNanos());
    while (true) {
      long left = bounded ? deadline - time.nanoTime() : Long.MAX_VALUE;
      if (left <= 0) {
        return null;
      }
      CompletableFuture<Lease> attempt = engine.acquire(resources, ttl, true);
      TimeSource.Cancellable cutOff =
          bounded ? time.schedule(() -> attempt.cancel(false), deadline - time.nanoTime()) : null;
      if (bounded && deadline - time.nanoTime() <= 0) {
        attempt.cancel(false); // the clock passed the deadline while this was scheduled
      }
      Lease got;
      try {
        got = await(time, attempt, waiting);
      } finally {
        if (cutOff != null) {
          cutOff.cancel();
        }
      }
      if (got != null) {
        Lease watched = watched(got);
        if (watched != null) {
          return watched;
        }
        continue;
      }
      if (attempt.isCancelled()) {
        return null; // the deadline passed
      }
      LockUnavailableException failure = waiting.takeFailure();
      if (!bounded && failure != null) {
        outage.failed(failure, time.nanoTime()); // throws once it lasted maxWait
      }
      left = bounded ? deadline - time.nanoTime() : Long.MAX_VALUE;
      long pause = Math.min(engine.retryDelayNanos(), left);
      if (pause > 0) {
        CompletableFuture<Void> delay = new CompletableFuture<>();
        TimeSource.Cancellable wake = time.schedule(() -> delay.complete(null), pause);
        try {
          await(time, delay, waiting);
        } finally {
          wake.cancel();
        }
      }
    }
  }

  /**
   * Waits for {@code future}: its value, or {@code null} if it was cancelled or failed with
   * {@link LockUnavailableException}. When interrupted, an interruptible wait cancels it,
   * releases a lease that was granted anyway and throws; an uninterruptible one remembers
   * the interrupt and goes on waiting.
   */
  private static <T> T await(TimeSource time, CompletableFuture<T> future, Waiting waiting)
      throws InterruptedException {
    while (true) {
      try {
        time.await(future);
        return future.get();
      } catch (InterruptedException e) {
        if (!waiting.interruptible) {
          waiting.interrupted = true;
          continue;
        }
        if (!future.cancel(false) && !future.isCompletedExceptionally()) {
          T granted = future.join();
          if (granted instanceof Lease) {
            ((Lease) granted).releaseAsync(); // granted just before the interrupt
          }
        }
        throw e;
      } catch (CancellationException e) {
        return null;
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof LockUnavailableException) {
          waiting.failure = (LockUnavailableException) cause;
          return null;
        }
        if (cause instanceof RuntimeException) {
          throw (RuntimeException) cause;
        }
        if (cause instanceof Error) {
          throw (Error) cause;
        }
        throw new RedlockException("acquisition failed: " + cause, cause);
      }
    }
  }

  /**
   * How one call waits: whether interrupts stop it, whether one was swallowed, and how its
   * last retry budget failed.
   */
  private static final class Waiting {
    final boolean interruptible;
    boolean interrupted;
    LockUnavailableException failure;

    /** The failure of the budget just awaited, if it failed; cleared. */
    LockUnavailableException takeFailure() {
      LockUnavailableException taken = failure;
      failure = null;
      return taken;
    }

    Waiting(boolean interruptible) {
      this.interruptible = interruptible;
    }

    void restoreInterrupt() {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The retry budgets of one wait that failed for want of answers, in a row: a budget that
   * shows the lock held elsewhere ends the run, so waiting on contention never gives up.
   */
  private final class Outage {
    private final long boundNanos;
    private long sinceNanos = -1;
    private boolean counting;
    private int attempts;

    Outage(long boundNanos) {
      this.boundNanos = boundNanos;
    }

    /**
     * Counts a failed budget that ended at {@code now}.
     *
     * @throws LockUnavailableException once budgets failed for want of answers for the bound
     */
    void failed(LockUnavailableException failure, long now) {
      if (failure.heldElsewhere()) {
        counting = false;
        attempts = 0;
        return;
      }
      if (!counting) {
        counting = true;
        sinceNanos = now - failure.elapsed().toNanos();
      }
      attempts += failure.attempts();
      long lasted = now - sinceNanos;
      if (lasted >= boundNanos) {
        throw new LockUnavailableException(
            resources,
            attempts,
            Duration.ofNanos(lasted),
            "no majority of the nodes answered for "
                + Duration.ofNanos(lasted).toMillis()
                + " ms, at least maxWait ("
                + Duration.ofNanos(boundNanos).toMillis()
                + " ms), while the nodes that answered did not show the lock held elsewhere;"
                + " lock() waits for a holder, not for an outage",
            failure.lastOutcomes());
      }
    }
  }
}
