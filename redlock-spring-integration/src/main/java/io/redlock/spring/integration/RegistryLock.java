package io.redlock.spring.integration;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.RedlockLock;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.dao.CannotAcquireLockException;

/**
 * One lock of an {@link AbstractRedlockLockRegistry}: a {@link RedlockLock} view that tells
 * the registry when its lease is lost and speaks Spring Integration's language about it
 * ({@link ConcurrentModificationException} on {@code unlock}). Package-private: callers see a
 * {@link RedlockRegistryLock} (and, on Spring Integration 7, a {@link RedlockDistributedLock}).
 */
class RegistryLock implements RedlockRegistryLock {
  final AbstractRedlockLockRegistry<?> registry;
  final String key;
  final RedlockLock view;

  /**
   * The thread whose holds a reentrant {@code tryLock} gave up because their lease was lost,
   * until it acquires again or calls {@code unlock()} (which then throws).
   */
  private volatile Thread abandonedBy;

  /** {@link System#nanoTime()} when this lock was last obtained or acquired. */
  volatile long lastUsed;

  RegistryLock(AbstractRedlockLockRegistry<?> registry, String key, RedlockLock view) {
    this.registry = registry;
    this.key = key;
    this.view = view;
    this.lastUsed = System.nanoTime();
  }

  @Override
  public String lockKey() {
    return key;
  }

  @Override
  public Lease lease() {
    return view.lease();
  }

  @Override
  public void lock() {
    try {
      view.lock();
    } catch (LeaseLostException e) {
      throw lost("lock", e);
    } catch (LockUnavailableException e) {
      throw outage(e);
    }
    held();
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    try {
      view.lockInterruptibly();
    } catch (LeaseLostException e) {
      throw lost("lock", e);
    } catch (LockUnavailableException e) {
      throw outage(e);
    }
    held();
  }

  /**
   * What {@code lock()} throws when no majority of the nodes answered for {@code maxWait}: the
   * exception {@code RedisLockRegistry} throws when Redis fails, with every node's outcome.
   */
  CannotAcquireLockException outage(LockUnavailableException e) {
    return new CannotAcquireLockException(
        "lock '"
            + key
            + "' of registry '"
            + registry.registryKey()
            + "' could not be acquired: "
            + e.getMessage(),
        e);
  }

  @Override
  public boolean tryLock() {
    if (gaveUpLostHolds()) {
      return false;
    }
    if (!view.tryLock()) {
      return false;
    }
    held();
    return true;
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    if (gaveUpLostHolds()) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      return false;
    }
    if (!view.tryLock(time, unit)) {
      return false;
    }
    held();
    return true;
  }

  @Override
  public void unlock() {
    if (!view.isHeldByCurrentThread() && abandonedBy == Thread.currentThread()) {
      abandonedBy = null;
      throw new ConcurrentModificationException(
          "lock '"
              + key
              + "' of registry '"
              + registry.registryKey()
              + "' was lost while held, and a tryLock on the lost lease already gave up its"
              + " holds; another process may have held it meanwhile");
    }
    try {
      view.unlock();
    } catch (LeaseLostException e) {
      throw lost("unlock", e);
    }
  }

  /**
   * A reentrant {@code tryLock} on a lost lease: gives up all of the current thread's holds
   * (freeing the local lock, releasing the lost lease) and returns true, so that the try
   * answers {@code false} and the next one starts afresh. Spring's leader election needs this:
   * it steps down when its {@code tryLock} fails and never unlocks a lock it holds no more.
   */
  private boolean gaveUpLostHolds() {
    if (!view.isHeldByCurrentThread() || view.lease().isValid()) {
      return false;
    }
    abandonedBy = Thread.currentThread();
    for (int holds = view.getHoldCount(); holds > 0; holds--) {
      try {
        view.unlock();
      } catch (LeaseLostException reported) {
        // The last hold: the loss was reported to the registry when it happened, and the
        // caller hears of it from this tryLock's false and from a later unlock().
      }
    }
    return true;
  }

  @Override
  public Condition newCondition() {
    return view.newCondition();
  }

  /** Whether any thread of this JVM holds this lock. */
  boolean isLocked() {
    return view.isLocked();
  }

  /**
   * Extends the current thread's lease to {@code ttl}, waiting for the nodes without giving in
   * to interrupts (an extension ends within about one node timeout), which it remembers.
   *
   * @return whether a majority confirmed it
   */
  boolean extend(Duration ttl) {
    Lease lease = view.lease();
    try {
      return awaitUninterruptibly(lease.extendAsync(ttl));
    } catch (LeaseLostException e) {
      throw lost("renewLock", e);
    }
  }

  @Override
  public String toString() {
    return "Redlock registry lock '" + key + "' (" + view + ")";
  }

  /** After an acquisition: the first hold watches its lease, so that a loss is heard. */
  void held() {
    lastUsed = System.nanoTime();
    if (abandonedBy == Thread.currentThread()) {
      abandonedBy = null;
    }
    if (view.getHoldCount() == 1) {
      view.lease().onLost(e -> registry.reportLoss(key, e));
    }
  }

  ConcurrentModificationException lost(String call, LeaseLostException e) {
    return new ConcurrentModificationException(
        "lock '"
            + key
            + "' of registry '"
            + registry.registryKey()
            + "' was lost while held ("
            + call
            + "), and another process may have held it meanwhile: "
            + e.getMessage(),
        e);
  }

  static <T> T awaitUninterruptibly(CompletableFuture<T> future) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause;
          }
          if (cause instanceof Error) {
            throw (Error) cause;
          }
          throw new IllegalStateException(cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
