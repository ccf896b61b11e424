package io.redlock.spring.integration;

import io.redlock.Redlock;
import java.time.Duration;
import java.util.Objects;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * A Spring Integration 7 {@code LockRegistry<DistributedLock>} over a {@link Redlock}: what
 * {@code RedisLockRegistry} and Spring Integration 7's other registries are, so that
 * injection points of that type take it and {@code DistributedLock lock =
 * registry.obtain(key)} compiles. Its locks are {@link RedlockDistributedLock}s, with the
 * guarantees {@link AbstractRedlockLockRegistry} lists; {@link RedlockDistributedLock} says
 * what a ttl given to {@code lock(Duration)} does. The Spring Boot auto-configuration makes
 * this one when Spring Integration 7 is on the class path, {@link RedlockLockRegistry}
 * otherwise. Needs Spring Integration 7: the class does not load on 6.5.
 *
 * <pre>{@code
 * RedlockDistributedLockRegistry registry = new RedlockDistributedLockRegistry(redlock, "orders");
 * DistributedLock lock = registry.obtain("42"); // the resource "orders:42" on every node
 * }</pre>
 *
 * <p>Thread-safe. Closing the {@code Redlock} is up to its owner.
 *
 * @since 0.1.0
 */
public final class RedlockDistributedLockRegistry
    extends AbstractRedlockLockRegistry<DistributedLock> {

  /**
   * A registry whose locks take leases of the {@code Redlock}'s configured ttl, unless a ttl
   * is given to the lock.
   *
   * @param redlock the lock manager; its owner closes it
   * @param registryKey the prefix of every resource name: lock key {@code k} is the resource
   *     {@code registryKey + ":" + k}; not empty
   * @throws NullPointerException naming the argument that is null
   * @throws IllegalArgumentException if {@code registryKey} is empty
   */
  public RedlockDistributedLockRegistry(Redlock redlock, String registryKey) {
    this(redlock, registryKey, Objects.requireNonNull(redlock, "redlock").config().ttl());
  }

  /**
   * A registry whose locks take leases of {@code ttl}, unless a ttl is given to the lock: how
   * long a lock outlives a holder that dies, since held leases are extended by it.
   *
   * @param redlock the lock manager; its owner closes it
   * @param registryKey the prefix of every resource name; not empty
   * @param ttl the ttl of the leases; one the {@code Redlock} accepts
   * @throws NullPointerException naming the argument that is null
   * @throws IllegalArgumentException if {@code registryKey} is empty
   * @throws io.redlock.RedlockConfigException if {@code ttl} is not positive, the core's type
   *     for a ttl refused
   */
  public RedlockDistributedLockRegistry(Redlock redlock, String registryKey, Duration ttl) {
    super(redlock, registryKey, ttl);
  }

  @Override
  public RedlockDistributedLock obtain(Object lockKey) {
    return (RedlockDistributedLock) lockFor(lockKey);
  }
}
