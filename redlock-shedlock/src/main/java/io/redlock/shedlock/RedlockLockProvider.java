package io.redlock.shedlock;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} over a {@link Redlock}: scheduled tasks locked on
 * N independent Redis masters, so that losing a minority of them neither stops the tasks nor
 * lets one run twice at once.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(Redlock redlock) {
 *   return new RedlockLockProvider(redlock, "billing-service");
 * }
 * }</pre>
 *
 * <p>What it guarantees, in ShedLock's terms:
 * <ul>
 *   <li>Any {@code lockAtMostFor} works with the default configuration. The lease is taken
 *       with a short ttl, the {@link Redlock}'s {@link io.redlock.RedlockConfig#ttl() ttl}
 *       (30 s by default), or {@code lockAtMostFor} if that is shorter, and extended in the
 *       background, one short ttl at a time, up to {@code lockAtMostFor}: the last extension
 *       makes the keys expire when {@code lockAtMostFor} ends (or up to one node timeout
 *       earlier), never later. A process that dies while running the task stops extending,
 *       so its lock is free again within one short ttl.
 *   <li>{@link #lock} makes exactly one attempt and never waits. A task whose lock another
 *       instance holds is skipped (empty), as ShedLock expects. A task that could not be
 *       locked because nodes failed, timed out or were held back by the restart guard (not
 *       because another instance holds it: {@link LockUnavailableException#heldElsewhere()})
 *       gets the {@link LockUnavailableException}, with each node's outcome in its message:
 *       ShedLock passes it on, and Spring's scheduler logs it at ERROR, as it does for
 *       ShedLock's own Redis provider when Redis does not answer.
 *   <li>{@link SimpleLock#unlock()} before {@code lockAtLeastFor} has passed does not delete
 *       the keys: they stay until {@code lockAtLeastFor} ends, extended in the background
 *       while more than one short ttl is left, and then set to expire when it ends
 *       ({@link Lease#releaseAfter}), by a script that checks this lock's token, so it never
 *       shortens or lengthens another holder's lock. After that, it deletes them, again only
 *       where they hold this lock's token. If the process dies meanwhile, the lock is free
 *       within one short ttl: {@code lockAtLeastFor} longer than that is kept only while the
 *       process lives (see docs/integrations.md).
 *   <li>{@link SimpleLock#extend} moves the end to the new {@code lockAtMostFor} and extends
 *       the lease toward it at once; an extension too few nodes confirmed in time is retried
 *       while the lease is valid, so one slow round does not end a {@code
 *       KeepAliveLockProvider}. It returns empty only when the lease ran out or was lost. As
 *       {@link SimpleLock} says, the lock it was called on is spent either way: {@code unlock}
 *       or {@code extend} on it then throws {@link IllegalStateException}.
 * </ul>
 *
 * <p>Lock names live in a namespace: the resource of the lock {@code name} is {@code
 * <namespace>:<name>} (plus the configuration's key prefix), as ShedLock's Redis provider
 * puts its {@code environment} in its keys. Give each application its own namespace, so that
 * two applications on one cluster with a task of the same name do not skip each other's runs
 * (the Boot starter uses {@code shedlock:<spring.application.name>}).
 *
 * <p>Unlike ShedLock's single-Redis provider, this one never deletes or extends a key it
 * does not own (every release and extension compares the token), and it survives the
 * failover of any minority of nodes. {@code lockAtLeastFor} is measured, as ShedLock does,
 * on this host's wall clock from the moment the lock was asked for.
 *
 * <p>The task reads its lease, and with it the {@linkplain Lease#fencingToken() fencing
 * token}, from {@link #currentLease()}.
 *
 * <p>If the calling thread is interrupted while the attempt is in flight, the attempt is
 * undone, {@link #lock} returns empty and the interrupt flag stays set.
 *
 * <p>Thread-safe; a lock it returns may be unlocked from any thread.
 *
 * @since 0.1.0
 */
public final class RedlockLockProvider implements ExtensibleLockProvider {
  /** The namespace of {@link #RedlockLockProvider(Redlock)}: {@value}. */
  public static final String DEFAULT_NAMESPACE = "shedlock";

  private final Redlock redlock;
  private final String namespace;

  /**
   * A provider over {@code redlock}, which the caller keeps and closes, in the namespace
   * {@value #DEFAULT_NAMESPACE}.
   *
   * @throws NullPointerException if {@code redlock} is null
   */
  public RedlockLockProvider(Redlock redlock) {
    this(redlock, DEFAULT_NAMESPACE);
  }

  /**
   * A provider over {@code redlock}, which the caller keeps and closes, whose lock {@code
   * name} is the resource {@code <namespace>:<name>}.
   *
   * @param namespace for example the application's name; not empty
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the namespace is empty
   */
  public RedlockLockProvider(Redlock redlock, String namespace) {
    this.redlock = Objects.requireNonNull(redlock, "redlock");
    Objects.requireNonNull(namespace, "namespace");
    if (namespace.isEmpty()) {
      throw new IllegalArgumentException(
          "namespace '' is not accepted: it must not be empty; use for example the"
              + " application's name");
    }
    this.namespace = namespace;
  }

  /** The namespace of this provider's lock names. */
  public String namespace() {
    return namespace;
  }

  /** The resource that the lock {@code name} takes: {@code <namespace>:<name>}. */
  public String resourceOf(String name) {
    return namespace + ":" + name;
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    Duration leaseTtl = redlock.config().ttl();
    Duration atMost = configuration.getLockAtMostFor();
    long start = System.nanoTime();
    Lease lease;
    try {
      lease =
          redlock.attempt(
              resourceOf(configuration.getName()),
              atMost.compareTo(leaseTtl) < 0 ? atMost : leaseTtl);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the attempt was undone
      return Optional.empty();
    } catch (LockUnavailableException e) {
      if (e.heldElsewhere()) {
        return Optional.empty(); // contention: ShedLock skips the run
      }
      throw e; // an outage: the run did not happen, and the log must say so
    }
    LeaseKeeper keeper =
        new LeaseKeeper(lease, leaseTtl, redlock.config().retryDelay(), start + atMost.toNanos());
    keeper.start();
    return Optional.of(
        new RedlockSimpleLock(configuration, keeper, ActiveLeases.push(lease, inShedLockTask())));
  }

  /**
   * The lease of the ShedLock task running on the current thread: the innermost task that a
   * {@code RedlockLockProvider} locked on this thread and that is not unlocked yet, as
   * ShedLock's executor (and so {@code @SchedulerLock}) runs one. Empty outside a task that
   * ShedLock's executor runs (where ShedLock's {@code LockAssert.assertLocked()} fails), so
   * also for a lock taken with {@link #lock} directly. A task nested in one of the same name,
   * which ShedLock runs under the outer lock, sees the outer lease.
   *
   * <p>The same lease for the whole run: the background extensions, {@code LockExtender} and
   * {@code KeepAliveLockProvider} extend it, never replace it, so its {@linkplain
   * Lease#fencingToken() fencing token} (with {@code fencing} on in the {@code Redlock}'s
   * configuration) stays the same. Pass that token to what the task writes, and check
   * {@link Lease#ensureValid()} before a side effect that must not overlap another run: a
   * lease lost meanwhile (a failed extension, a long pause) stays current, invalid, until the
   * task ends.
   *
   * <pre>{@code
   * @Scheduled(cron = "0 0 2 * * *")
   * @SchedulerLock(name = "nightly-export", lockAtMostFor = "14m")
   * void export() {
   *   long token = RedlockLockProvider.currentLease().orElseThrow().fencingToken();
   *   // ... write, passing the token along
   * }
   * }</pre>
   *
   * <p>Read from the thread that runs the task: like ShedLock's {@code LockExtender}, it does
   * not follow the task to other threads.
   *
   * @return the lease, or empty outside a task locked by this provider on this thread
   * @since 0.1.0
   */
  public static Optional<Lease> currentLease() {
    return inShedLockTask() ? ActiveLeases.current() : Optional.empty();
  }

  /** Whether ShedLock's executor runs a locked task on this thread (what LockAssert checks). */
  private static boolean inShedLockTask() {
    try {
      LockAssert.assertLocked();
      return true;
    } catch (IllegalStateException notLocked) {
      return false;
    }
  }

  /** One lock as ShedLock sees it; the lease behind it may outlive it across extensions. */
  private static final class RedlockSimpleLock extends AbstractSimpleLock {
    private final LeaseKeeper keeper;
    private final ActiveLeases.Entry active;

    RedlockSimpleLock(
        LockConfiguration configuration, LeaseKeeper keeper, ActiveLeases.Entry active) {
      super(configuration);
      this.keeper = keeper;
      this.active = active;
    }

    @Override
    protected void doUnlock() {
      active.end();
      keeper.unlock(nanosFromNow(lockConfiguration.getLockAtLeastUntil()));
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
      if (keeper.extendTo(System.nanoTime() + newConfiguration.getLockAtMostFor().toNanos())) {
        return Optional.of(new RedlockSimpleLock(newConfiguration, keeper, active));
      }
      active.orphan(); // this lock is spent and nothing will unlock it
      return Optional.empty();
    }

    @Override
    public String toString() {
      return "RedlockSimpleLock{" + lockConfiguration.getName() + ", " + keeper.lease() + "}";
    }
  }

  /** The monotonic instant of the wall-clock instant {@code until}, as seen now. */
  private static long nanosFromNow(Instant until) {
    long now = System.nanoTime();
    Duration left = Duration.between(ClockProvider.now(), until);
    return left.isNegative() ? now - 1 : now + left.toNanos();
  }
}
