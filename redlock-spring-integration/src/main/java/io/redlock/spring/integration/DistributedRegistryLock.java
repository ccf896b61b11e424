package io.redlock.spring.integration;

import io.redlock.RedlockLock;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@link RegistryLock} that is also Spring Integration 7's {@link DistributedLock}, as
 * {@link RedlockDistributedLock} describes. Only {@link #create} names this class, and the
 * registry calls it only when {@code DistributedLock} is on the class path, so on Spring
 * Integration 6.5 it is never loaded.
 */
final class DistributedRegistryLock extends RegistryLock implements RedlockDistributedLock {

  private DistributedRegistryLock(
      AbstractRedlockLockRegistry<?> registry, String key, RedlockLock view) {
    super(registry, key, view);
  }

  static RegistryLock create(
      AbstractRedlockLockRegistry<?> registry, String key, RedlockLock view) {
    return new DistributedRegistryLock(registry, key, view);
  }

  @Override
  public void lock(Duration ttl) {
    AbstractRedlockLockRegistry.checkTtl(ttl);
    while (true) {
      lock();
      if (withTtl(ttl)) {
        return;
      }
    }
  }

  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    Objects.requireNonNull(waitTime, "waitTime");
    AbstractRedlockLockRegistry.checkTtl(ttl);
    long deadline = System.nanoTime() + waitTime.toNanos();
    while (true) {
      if (!tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
        return false;
      }
      if (withTtl(ttl)) {
        return true;
      }
      if (deadline - System.nanoTime() <= 0) {
        return false;
      }
    }
  }

  /**
   * After a hold was taken: extends a first hold's lease to {@code ttl}. Gives the hold back
   * and returns false if too few nodes confirmed; gives it back and throws if the lease was
   * lost or the ttl is refused.
   */
  private boolean withTtl(Duration ttl) {
    if (view.getHoldCount() > 1 || ttl.equals(view.ttl())) {
      return true;
    }
    boolean confirmed;
    try {
      confirmed = extend(ttl);
    } catch (RuntimeException | Error e) {
      try {
        unlock();
      } catch (ConcurrentModificationException lostToo) {
        e.addSuppressed(lostToo);
      }
      throw e;
    }
    if (!confirmed) {
      try {
        unlock();
      } catch (ConcurrentModificationException lost) {
        // Lost before the caller had it: reported to the registry's listener, and no work
        // was done under it; the acquisition starts over.
      }
    }
    return confirmed;
  }
}
