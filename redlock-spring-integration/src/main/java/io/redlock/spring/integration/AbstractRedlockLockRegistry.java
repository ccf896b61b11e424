package io.redlock.spring.integration;

import io.redlock.LeaseLostException;
import io.redlock.Redlock;
import io.redlock.RedlockLock;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * What the two Spring Integration lock registries over a {@link Redlock} share: {@link
 * RedlockLockRegistry}, a {@code LockRegistry<Lock>} for Spring Integration 6.5 and 7.0, and
 * {@link RedlockDistributedLockRegistry}, a {@code LockRegistry<DistributedLock>} for 7.0.
 * The locks they hand out are held on a majority of N independent Redis masters, so a lock
 * survives the failure of a minority of them, where one Redis (as behind {@code
 * RedisLockRegistry}) and its failover can lose it. Inject this type where the code needs the
 * registry's own settings ({@link #setLossListener}) whichever line the application runs on.
 * Only this package extends it.
 *
 * <p><b>What a lock guarantees.</b> Each lock is a {@link Redlock#asLock(String, Duration)
 * RedlockLock} on the resource {@code <registryKey>:<lockKey>}: thread-bound and reentrant,
 * its lease acquired by the first hold, extended automatically while held (so
 * {@link #renewLock} is rarely needed and a renewal scheduler is not used), released by the
 * last {@code unlock()}. While a lease is valid no other holder of that resource, in this or
 * another process, has a valid lease.
 *
 * <p><b>Where it is stricter than {@code RedisLockRegistry}.</b>
 *
 * <ul>
 *   <li>A lease lost while held (its extension failed, or the process paused past its
 *       validity) is reported when it happens: logged at WARN and given to the
 *       {@linkplain #setLossListener loss listener}, not only found at {@code unlock()}.
 *   <li>The last {@code unlock()} (of a reentrant hold) after a loss frees the local lock first, then throws
 *       {@link ConcurrentModificationException} (its cause a {@link LeaseLostException}), as
 *       {@code RedisLockRegistry} does when its key was taken over. A reentrant
 *       {@code lock()} on a lost lease throws it too. A reentrant {@code tryLock} on a lost
 *       lease gives up all of the thread's holds and returns {@code false} (a later
 *       {@code unlock()} by that thread throws {@code ConcurrentModificationException}), so
 *       a leader that lost its lock steps down at its next heartbeat and may run again.
 *   <li>{@code lock()}, {@code lockInterruptibly()} and {@code executeLocked} wait as long
 *       as the lock is held elsewhere, and throw {@link
 *       org.springframework.dao.CannotAcquireLockException} (its cause a {@link
 *       io.redlock.LockUnavailableException} with every node's outcome) once no majority of
 *       the nodes answered for the configuration's {@code maxWait} (10 s by default) in a row,
 *       the local lock free and every attempt undone on the nodes: an outage does not park
 *       the calling threads for ever. {@code RedisLockRegistry} throws it at once on a store
 *       error.
 *   <li>The interrupt flag is never swallowed: the interruptible methods throw
 *       {@link InterruptedException}, the others (including {@code lock()} and
 *       {@link #renewLock}) set the flag again when they return.
 *   <li>The cache of lock objects never evicts a held lock, neither when it is
 *       {@linkplain #setCacheCapacity full} nor in {@link #expireUnusedOlderThan}. A lock
 *       object that was evicted while a thread still used it shares its local lock with the
 *       object {@code obtain} returns next for the same key, so the threads of this JVM still
 *       exclude each other.
 * </ul>
 *
 * <p>Lock keys are strings. A registry's ttl must be one its {@code Redlock} accepts (longer
 * than the node timeout, at most {@code maxTtl}); one that is not fails the first
 * {@code obtain} with an {@link IllegalArgumentException} naming it. Two registries (or any
 * other code) asking one {@code Redlock} for the same resource must use the same ttl.
 *
 * <p><b>The lease behind a hold.</b> Every lock is a {@link RedlockRegistryLock}: {@link
 * RedlockRegistryLock#lease()} gives the lease of the current thread's hold, to check it
 * before a side effect or to read its {@linkplain io.redlock.Lease#fencingToken() fencing
 * token} (with {@code fencing} on in the {@code Redlock}'s configuration).
 *
 * <p>Thread-safe. Closing the {@code Redlock} is up to its owner.
 *
 * @param <L> the type of lock {@link #obtain} returns, as {@code LockRegistry<L>} names it
 * @since 0.1.0
 */
public abstract class AbstractRedlockLockRegistry<L extends Lock>
    implements ExpirableLockRegistry<L>, RenewableLockRegistry<L> {
  private static final Logger LOG = LoggerFactory.getLogger(AbstractRedlockLockRegistry.class);

  /** The default {@linkplain #setCacheCapacity capacity} of the cache of lock objects. */
  public static final int DEFAULT_CACHE_CAPACITY = 100_000;

  private static final boolean DISTRIBUTED_LOCK =
      present("org.springframework.integration.support.locks.DistributedLock");

  private final Redlock redlock;
  private final String registryKey;
  private final Duration ttl;

  /** Access-ordered, eldest first; guarded by itself. */
  private final LinkedHashMap<String, RegistryLock> locks = new LinkedHashMap<>(16, 0.75f, true);

  private volatile int cacheCapacity = DEFAULT_CACHE_CAPACITY;
  private volatile BiConsumer<? super String, ? super LeaseLostException> lossListener;

  /** Only this package's registries extend it; see theirs for the arguments. */
  AbstractRedlockLockRegistry(Redlock redlock, String registryKey, Duration ttl) {
    this.redlock = Objects.requireNonNull(redlock, "redlock");
    this.registryKey = Objects.requireNonNull(registryKey, "registryKey");
    this.ttl = checkTtl(ttl);
    if (registryKey.isEmpty()) {
      throw new IllegalArgumentException(
          "registryKey is empty: a prefix of at least one character is required");
    }
  }

  /**
   * The check of every ttl given to the registry or to one of its locks: not null, and
   * positive; whether the {@code Redlock} accepts it is decided when it is used.
   *
   * @return {@code ttl}
   * @throws NullPointerException naming {@code ttl} if it is null
   * @throws io.redlock.RedlockConfigException if it is not positive, the core's type for a ttl
   *     refused, wherever it was given
   */
  static Duration checkTtl(Duration ttl) {
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new io.redlock.RedlockConfigException(
          "ttl " + ttl + " is not accepted: it must be positive (and one the Redlock accepts)");
    }
    return ttl;
  }

  /** The prefix of this registry's resource names. */
  public String registryKey() {
    return registryKey;
  }

  /** The ttl of the leases this registry's locks take. */
  public Duration ttl() {
    return ttl;
  }

  /**
   * Sets how many lock objects the cache keeps (default {@value #DEFAULT_CACHE_CAPACITY}).
   * When {@link #obtain} finds it full, it evicts the least recently used locks that no
   * thread holds; held locks are never evicted, so the cache may hold more than this while
   * more are held.
   *
   * @param capacity at least 1
   * @throws IllegalArgumentException if {@code capacity} is less than 1
   */
  public void setCacheCapacity(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException(
          "cacheCapacity " + capacity + " is not accepted: it must be at least 1");
    }
    this.cacheCapacity = capacity;
  }

  /**
   * Sets who hears of a lease lost while held, with the lock key and why; {@code null} for
   * nobody. It is called once per lost lease, on a callback thread of the library, when the
   * loss happens (the holder may still be working), so it may act at once: stop the work, or
   * step down. Whatever it throws is logged and dropped. Each loss is also logged at WARN.
   *
   * <p>A {@code LockRegistryLeaderInitiator} on its own steps down only at its next heartbeat
   * (its {@code yield()} too is read only then); docs/integrations.md ("Leader election")
   * gives the listener that makes it step down when the loss is reported.
   */
  public void setLossListener(BiConsumer<? super String, ? super LeaseLostException> listener) {
    this.lossListener = listener;
  }

  /**
   * The lock for {@code lockKey}: the same object for the same key while it is cached. It is
   * a {@link RedlockRegistryLock}, and on Spring Integration 7 also a {@link
   * RedlockDistributedLock}.
   *
   * @param lockKey a {@code String}
   * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}, or the
   *     resource name is not one the {@code Redlock} accepts
   * @throws io.redlock.RedlockConfigException if the ttl is not one the {@code Redlock}
   *     accepts under its configuration
   * @throws NullPointerException if {@code lockKey} is null
   */
  @Override
  public abstract L obtain(Object lockKey);

  /** The cached lock for {@code lockKey}, made if there is none: what {@link #obtain} returns. */
  final RegistryLock lockFor(Object lockKey) {
    String key = key(lockKey);
    synchronized (locks) {
      RegistryLock lock = locks.get(key);
      if (lock == null) {
        RedlockLock view = redlock.asLock(registryKey + ":" + key, ttl);
        lock =
            DISTRIBUTED_LOCK
                ? DistributedRegistryLock.create(this, key, view)
                : new RegistryLock(this, key, view);
        locks.put(key, lock);
        evictOverCapacity(lock);
      }
      lock.lastUsed = System.nanoTime();
      return lock;
    }
  }

  /** Whether the locks are {@link RedlockDistributedLock}s: Spring Integration 7 is present. */
  static boolean distributedLocks() {
    return DISTRIBUTED_LOCK;
  }

  /**
   * Removes from the cache the locks that no thread holds and that were last obtained or
   * acquired more than {@code age} milliseconds ago. Held locks stay.
   *
   * @param age in milliseconds
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long now = System.nanoTime();
    long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
    synchronized (locks) {
      locks.values().removeIf(lock -> !lock.isLocked() && now - lock.lastUsed > ageNanos);
    }
  }

  /**
   * Extends the lease of the current thread's lock on {@code lockKey} by the registry's ttl
   * now. Rarely needed: held leases are extended automatically.
   *
   * @throws IllegalStateException if the current thread does not hold that lock, or if too
   *     few nodes confirmed the extension (the lease then keeps its deadline, and the
   *     automatic extension goes on)
   * @throws ConcurrentModificationException if the lease was lost
   */
  @Override
  public void renewLock(Object lockKey) {
    renewLock(lockKey, ttl);
  }

  /**
   * Extends the lease of the current thread's lock on {@code lockKey} to {@code ttl} from now;
   * the automatic extension then keeps that ttl. Waits for the nodes (about two node timeouts
   * at most: an extension already in flight goes first) without giving in to an interrupt, whose flag it sets again.
   *
   * @param ttl one the {@code Redlock} accepts
   * @throws IllegalStateException if the current thread does not hold that lock, or if too
   *     few nodes confirmed the extension (the lease then keeps its deadline)
   * @throws ConcurrentModificationException if the lease was lost
   * @throws io.redlock.RedlockConfigException if the {@code Redlock} does not accept
   *     {@code ttl} under its configuration
   */
  @Override
  public void renewLock(Object lockKey, Duration ttl) {
    String key = key(lockKey);
    Objects.requireNonNull(ttl, "ttl");
    RegistryLock lock;
    synchronized (locks) {
      lock = locks.get(key);
    }
    if (lock == null || !lock.view.isHeldByCurrentThread()) {
      throw new IllegalStateException(
          "lock '"
              + key
              + "' of registry '"
              + registryKey
              + "' is not held by the current thread ("
              + Thread.currentThread().getName()
              + "): only its holder may renew it");
    }
    if (!lock.extend(ttl)) {
      throw new IllegalStateException(
          "renewal of lock '"
              + key
              + "' of registry '"
              + registryKey
              + "' was not confirmed by a majority of the nodes in time; the lease keeps its"
              + " deadline and is still extended automatically");
    }
  }

  @Override
  public String toString() {
    int size;
    synchronized (locks) {
      size = locks.size();
    }
    return String.format(
        Locale.ROOT,
        "%s{registryKey=%s, ttl=%d ms, cached=%d}",
        getClass().getSimpleName(),
        registryKey,
        ttl.toMillis(),
        size);
  }

  /** Number of cached lock objects: for tests. */
  int cached() {
    synchronized (locks) {
      return locks.size();
    }
  }

  void reportLoss(String key, LeaseLostException cause) {
    LOG.warn(
        "Lock '{}' of registry '{}' was lost while held; another process may hold it now: {}",
        key,
        registryKey,
        cause.getMessage());
    BiConsumer<? super String, ? super LeaseLostException> listener = lossListener;
    if (listener == null) {
      return;
    }
    try {
      listener.accept(key, cause);
    } catch (RuntimeException e) {
      LOG.warn("The loss listener of registry '{}' failed on lock '{}'", registryKey, key, e);
    }
  }

  /** Caller holds {@link #locks}. Never evicts {@code keep}, the lock just obtained. */
  private void evictOverCapacity(RegistryLock keep) {
    int excess = locks.size() - cacheCapacity;
    for (Iterator<RegistryLock> it = locks.values().iterator(); excess > 0 && it.hasNext(); ) {
      RegistryLock next = it.next();
      if (next != keep && !next.isLocked()) {
        it.remove();
        excess--;
      }
    }
  }

  private static String key(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey");
    if (!(lockKey instanceof String)) {
      throw new IllegalArgumentException(
          "lockKey of "
              + lockKey.getClass().getName()
              + " is not accepted: a Redlock lock registry takes String keys");
    }
    return (String) lockKey;
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, AbstractRedlockLockRegistry.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
