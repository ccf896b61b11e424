package io.redlock.spring.integration;

import io.redlock.Lease;
import java.util.concurrent.locks.Lock;

/**
 * A lock of a Redlock lock registry ({@link RedlockLockRegistry}, {@link
 * RedlockDistributedLockRegistry}): a {@link Lock} that also shows the {@link Lease} behind the
 * current thread's hold, so that work done under it can check the lease before a side effect
 * and pass its {@linkplain Lease#fencingToken() fencing token} to the resource it writes.
 *
 * <pre>{@code
 * RedlockRegistryLock lock = registry.obtain("42");
 * lock.lock();
 * try {
 *   long token = lock.lease().fencingToken(); // with redlock.fencing on
 *   // ... write order 42, passing the token along
 * } finally {
 *   lock.unlock();
 * }
 * }</pre>
 *
 * <p>Thread-safe; {@link #lease()} answers for the calling thread.
 *
 * @since 0.1.0
 */
public interface RedlockRegistryLock extends Lock {

  /** The lock key this lock was obtained for (without the registry key). */
  String lockKey();

  /**
   * The lease behind the current thread's hold: the same one for every reentrant hold, and
   * for as long as the thread holds the lock, extensions included. Check it ({@link
   * Lease#ensureValid()}), read its {@linkplain Lease#fencingToken() fencing token}, never
   * release it: the last {@link #unlock()} does.
   *
   * @throws IllegalMonitorStateException if the current thread does not hold this lock
   */
  Lease lease();
}
