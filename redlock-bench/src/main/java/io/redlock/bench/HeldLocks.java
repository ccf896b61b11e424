package io.redlock.bench;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One implementation as the held-lease scenario drives it ({@link HeldHarness}): take many
 * locks, each kept alive by the implementation's own watchdog, and hold them.
 *
 * <p>Each implementation keeps what a user would keep to release a lock later (a {@link
 * Lease}, an {@link RLock}): it is part of the heap a held lock costs.
 */
interface HeldLocks extends AutoCloseable {
  /**
   * Locks acquired at once while taking many: enough to keep every node busy, few enough to
   * leave the watchdog of the locks already held room on two cores.
   */
  int IN_FLIGHT = 64;

  /** The name, as in {@code --impls}. */
  String name();

  /** How many Redis nodes each lock is taken on. */
  int nodes();

  /**
   * Acquires {@code count} locks named {@code prefix + i}, each extended in the background by
   * the implementation's watchdog, and keeps them; returns once all are held.
   *
   * @throws NotAcquired if a lock could not be acquired
   */
  void hold(String prefix, int count) throws InterruptedException;

  /** One of the locks {@link #hold} was asked for could not be acquired: its message says which. */
  final class NotAcquired extends RuntimeException {
    NotAcquired(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Releases what {@link #hold} took (used after the warm-up only). */
  void releaseAll() throws InterruptedException;

  /**
   * Takes the lock {@code resource} without waiting for it, with no watchdog, and releases it
   * at once: whether it was granted (a refusal and a failure both answer {@code false}).
   */
  boolean takeAndRelease(String resource);

  /**
   * Another client of the same implementation over the same nodes, with connections of its
   * own and no lock held: {@link #takeAndRelease} on it is what a lock costs on these nodes
   * when nothing of the held locks waits on its connections.
   */
  HeldLocks peer();

  /**
   * How many of the held locks the client itself knows to be lost, or -1 when it cannot tell
   * (Redisson's watchdog stops renewing a lock it could not renew, and says so only in its
   * log).
   */
  long lost();

  @Override
  void close();

  /** Names of the implementations, as in {@code --impls}. */
  String REDLOCK = Results.OURS;

  String REDISSON_RLOCK = "redisson-rlock-watchdog";
  String REDISSON_REDLOCK = "redisson-redlock-watchdog";

  /**
   * {@code RedissonRedLock} with its watchdog timeout set to 1.5 times this library's ttl, so
   * that it renews every lock as often as this library extends each lease (every half ttl).
   */
  String REDISSON_REDLOCK_SAME_RATE = "redisson-redlock-same-rate";

  /**
   * The floor of held leases with this library's batched extensions ({@link HeldFloor}): its
   * extension scripts sent by raw Lettuce, nothing else.
   */
  String FLOOR = HeldFloor.NAME;

  /** All of them, in report order. */
  List<String> ALL =
      List.of(REDLOCK, REDISSON_REDLOCK, REDISSON_REDLOCK_SAME_RATE, REDISSON_RLOCK, FLOOR);

  /**
   * The implementation named {@code name} over {@code uris}; {@code ttl} is this library's
   * lease ttl (Redisson keeps its default watchdog timeout, but for {@link
   * #REDISSON_REDLOCK_SAME_RATE}).
   *
   * @throws IllegalArgumentException if no implementation has that name
   */
  static HeldLocks create(String name, List<String> uris, Duration ttl) {
    return switch (name) {
      case REDLOCK -> new Ours(uris, ttl);
      case REDISSON_RLOCK -> new RedissonWatchdog(name, uris.subList(0, 1), false, null, ttl);
      case REDISSON_REDLOCK -> new RedissonWatchdog(name, uris, true, null, ttl);
      case REDISSON_REDLOCK_SAME_RATE ->
          new RedissonWatchdog(name, uris, true, ttl.multipliedBy(3).dividedBy(2), ttl);
      case FLOOR -> new HeldFloor(uris, ttl);
      default -> throw new IllegalArgumentException("no held-lease implementation named " + name);
    };
  }

  /** How many of {@code uris} the implementation {@code name} locks on. */
  static int nodes(String name, List<String> uris) {
    return name.equals(REDISSON_RLOCK) ? 1 : uris.size();
  }

  /**
   * Starts {@code count} acquisitions, at most {@link #IN_FLIGHT} at a time, and waits for all.
   *
   * @param start starts acquisition {@code i}; its stage completes once that lock is held
   */
  static void acquireAll(int count, IntFunction<CompletionStage<?>> start)
      throws InterruptedException {
    Semaphore room = new Semaphore(IN_FLIGHT);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicInteger failedAt = new AtomicInteger(-1);
    for (int i = 0; i < count && failure.get() == null; i++) {
      room.acquire();
      int index = i;
      start
          .apply(i)
          .whenComplete(
              (ignored, error) -> {
                if (error != null && failure.compareAndSet(null, error)) {
                  failedAt.set(index);
                }
                room.release();
              });
    }
    room.acquire(IN_FLIGHT);
    room.release(IN_FLIGHT);
    if (failure.get() != null) {
      throw new NotAcquired(
          String.format(
              Locale.ROOT, "lock %,d of %,d could not be acquired", failedAt.get() + 1, count),
          failure.get());
    }
  }

  /**
   * This library: {@code Redlock} with its defaults (restart guard on, the servers declared
   * fresh) but the lease ttl, each lease on {@link Lease#autoExtend()}.
   */
  final class Ours implements HeldLocks {
    private final Redlock redlock;
    private final Duration ttl;
    private final int nodes;
    private volatile Lease[] leases = new Lease[0];

    private final List<String> uris;

    Ours(List<String> uris, Duration ttl) {
      this(uris, ttl, true);
    }

    /** {@code declare}: declare the servers fresh first (the first client of a run only). */
    private Ours(List<String> uris, Duration ttl, boolean declare) {
      RedlockConfig config = RedlockConfig.builder().nodes(uris).ttl(ttl).build();
      // The harness started these servers for the run: declare them fresh without looking,
      // so that the restart guard (on, as in production) counts them at once.
      // On a loaded machine a node may miss init's connect timeout: three tries.
      boolean declared = !declare;
      for (int attempt = 0; attempt < 3 && !declared; attempt++) {
        declared = Redlock.init(config, true).complete();
      }
      if (!declared) {
        throw new IllegalStateException("could not declare the bench servers fresh: " + uris);
      }
      this.redlock = Redlock.create(config);
      this.ttl = ttl;
      this.nodes = uris.size();
      this.uris = uris;
    }

    @Override
    public String name() {
      return REDLOCK;
    }

    @Override
    public int nodes() {
      return nodes;
    }

    @Override
    public void hold(String prefix, int count) throws InterruptedException {
      Lease[] held = new Lease[count];
      acquireAll(
          count,
          i ->
              redlock
                  .acquireAsync(prefix + i, ttl)
                  .thenAccept(lease -> held[i] = lease.autoExtend()));
      leases = held;
    }

    @Override
    public void releaseAll() {
      for (Lease lease : leases) {
        lease.release();
      }
      leases = new Lease[0];
    }

    @Override
    public boolean takeAndRelease(String resource) {
      try {
        var lease = redlock.tryAcquire(resource, ttl);
        lease.ifPresent(Lease::release);
        return lease.isPresent();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (RuntimeException e) {
        return false;
      }
    }

    @Override
    public HeldLocks peer() {
      return new Ours(uris, ttl, false);
    }

    @Override
    public long lost() {
      long lost = 0;
      for (Lease lease : leases) {
        if (!lease.isValid()) {
          lost++;
        }
      }
      return lost;
    }

    @Override
    public void close() {
      redlock.close();
    }
  }

  /**
   * Redisson's watchdog: {@code RLock.lock()} without a lease time, so that Redisson's
   * watchdog renews each lock with its default timeout (30 s, renewed every 10 s, in scripts
   * of up to 100 locks), on node 1 only ({@code RLock}) or as a {@code RedissonRedLock} over
   * one {@code RedissonClient} per node (single-server configuration, Redisson's defaults
   * otherwise, but for the watchdog timeout when one is given: renewed every third of it).
   */
  final class RedissonWatchdog implements HeldLocks {
    /** One thread id for every lock: what {@code lock()} records as the owner. */
    private static final long OWNER = 1;

    private final String name;
    private final RedissonClient[] clients;
    private final boolean redLock;
    private final List<String> uris;
    private final Duration watchdogTimeout;
    private final Duration ttl;
    private volatile RLock[] locks = new RLock[0];

    RedissonWatchdog(
        String name, List<String> uris, boolean redLock, Duration watchdogTimeout, Duration ttl) {
      this.name = name;
      this.redLock = redLock;
      this.uris = uris;
      this.watchdogTimeout = watchdogTimeout;
      this.ttl = ttl;
      this.clients = new RedissonClient[uris.size()];
      try {
        for (int i = 0; i < clients.length; i++) {
          Config config = new Config();
          config.useSingleServer().setAddress(uris.get(i));
          if (watchdogTimeout != null) {
            config.setLockWatchdogTimeout(watchdogTimeout.toMillis());
          }
          clients[i] = Redisson.create(config);
        }
      } catch (RuntimeException e) {
        close();
        throw e;
      }
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public int nodes() {
      return clients.length;
    }

    @Override
    public void hold(String prefix, int count) throws InterruptedException {
      RLock[] held = new RLock[count];
      acquireAll(
          count,
          i -> {
            RLock lock = lockOf(prefix + i);
            held[i] = lock;
            return lock.lockAsync(OWNER);
          });
      locks = held;
    }

    private RLock lockOf(String resource) {
      if (!redLock) {
        return clients[0].getLock(resource);
      }
      RLock[] parts = new RLock[clients.length];
      for (int i = 0; i < clients.length; i++) {
        parts[i] = clients[i].getLock(resource);
      }
      return new RedissonRedLock(parts);
    }

    @Override
    public void releaseAll() throws InterruptedException {
      acquireAll(locks.length, i -> locks[i].unlockAsync(OWNER));
      locks = new RLock[0];
    }

    /**
     * {@code tryLock} with no wait and a lease time of this library's ttl (no watchdog), then
     * {@code unlock}, both on the calling thread (Redisson's owner).
     */
    @Override
    public boolean takeAndRelease(String resource) {
      RLock lock = lockOf(resource);
      try {
        if (!lock.tryLock(0, ttl.toMillis(), TimeUnit.MILLISECONDS)) {
          return false;
        }
        lock.unlock();
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (RuntimeException e) {
        return false;
      }
    }

    @Override
    public HeldLocks peer() {
      return new RedissonWatchdog(name, uris, redLock, watchdogTimeout, ttl);
    }

    @Override
    public long lost() {
      return -1;
    }

    @Override
    public void close() {
      List<RuntimeException> failures = new ArrayList<>();
      for (RedissonClient client : clients) {
        if (client != null) {
          try {
            client.shutdown(0, 2, TimeUnit.SECONDS);
          } catch (RuntimeException e) {
            failures.add(e);
          }
        }
      }
      if (!failures.isEmpty()) {
        throw failures.get(0);
      }
    }
  }
}
