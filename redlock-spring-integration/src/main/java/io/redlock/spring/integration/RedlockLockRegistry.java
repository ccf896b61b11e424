package io.redlock.spring.integration;

import io.redlock.Redlock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.Lock;

/**
 * A Spring Integration {@code LockRegistry<Lock>} over a {@link Redlock}, for Spring Integration
 * 6.5 and 7.0: locks held on a majority of N independent Redis masters, with the guarantees
 * {@link AbstractRedlockLockRegistry} lists. On 7.0, where code asks for a {@code
 * LockRegistry<DistributedLock>}, use {@link RedlockDistributedLockRegistry}; the locks of this
 * one are {@code DistributedLock}s too there, typed as {@link RedlockRegistryLock}.
 *
 * <pre>{@code
 * RedlockLockRegistry registry = new RedlockLockRegistry(redlock, "orders");
 * Lock lock = registry.obtain("42");    // the resource "orders:42" on every node
 * }</pre>
 *
 * <p>Thread-safe. Closing the {@code Redlock} is up to its owner.
 *
 * @since 0.1.0
 */
public final class RedlockLockRegistry extends AbstractRedlockLockRegistry<Lock> {

  /**
   * A registry whose locks take leases of the {@code Redlock}'s configured ttl.
   *
   * @param redlock the lock manager; its owner closes it
   * @param registryKey the prefix of every resource name: lock key {@code k} is the resource
   *     {@code registryKey + ":" + k}; not empty
   * @throws NullPointerException naming the argument that is null
   * @throws IllegalArgumentException if {@code registryKey} is empty
   */
  public RedlockLockRegistry(Redlock redlock, String registryKey) {
    this(redlock, registryKey, Objects.requireNonNull(redlock, "redlock").config().ttl());
  }

  /**
   * A registry whose locks take leases of {@code ttl}: how long a lock outlives a holder that
   * dies, since held leases are extended by it.
   *
   * @param redlock the lock manager; its owner closes it
   * @param registryKey the prefix of every resource name; not empty
   * @param ttl the ttl of the leases; one the {@code Redlock} accepts
   * @throws NullPointerException naming the argument that is null
   * @throws IllegalArgumentException if {@code registryKey} is empty
   * @throws io.redlock.RedlockConfigException if {@code ttl} is not positive, the core's type
   *     for a ttl refused
   */
  public RedlockLockRegistry(Redlock redlock, String registryKey, Duration ttl) {
    super(redlock, registryKey, ttl);
  }

  @Override
  public RedlockRegistryLock obtain(Object lockKey) {
    return lockFor(lockKey);
  }
}
