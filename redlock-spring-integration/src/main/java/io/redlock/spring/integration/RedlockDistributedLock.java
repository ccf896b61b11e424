package io.redlock.spring.integration;

import org.springframework.integration.support.locks.DistributedLock;

/**
 * A lock of a {@link RedlockDistributedLockRegistry}: Spring Integration 7's {@link
 * DistributedLock} (a lock taken with a ttl of its own) that also shows its {@link
 * io.redlock.Lease} ({@link RedlockRegistryLock#lease()}). Exists on Spring Integration 7 only.
 *
 * <p>{@link #lock(java.time.Duration)} and {@link #tryLock(java.time.Duration,
 * java.time.Duration)} hold the lease with the given ttl instead of the registry's: they take
 * it with the registry's ttl, then extend it to the given one before returning, and from then
 * on it is extended automatically by that ttl, which is how long the lock outlives a holder
 * that dies. An extension that too few nodes confirm is not a lock with that ttl: the lease is
 * given back and the acquisition starts over, within the wait if there is one. A reentrant
 * hold keeps the ttl of the first.
 *
 * <p>Thread-safe.
 *
 * @since 0.1.0
 */
public interface RedlockDistributedLock extends RedlockRegistryLock, DistributedLock {}
