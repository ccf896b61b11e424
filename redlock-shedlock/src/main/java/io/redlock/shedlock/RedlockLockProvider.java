package io.redlock.shedlock;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.Redlock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
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
 *   return new RedlockLockProvider(redlock);
 * }
 * }</pre>
 *
 * <p>What it guarantees, in ShedLock's terms:
 * <ul>
 *   <li>{@code lockAtMostFor} is the lease's ttl: a node that dies while running the task
 *       frees the lock after it. It must be accepted as a ttl by the {@link Redlock}'s
 *       configuration (longer than the node timeout, within the maximum ttl); a value that
 *       is not fails the task's run with a {@link io.redlock.RedlockConfigException} that
 *       names it.
 *   <li>{@link #lock} makes exactly one attempt and never waits: a task whose lock is held
 *       elsewhere is skipped, as ShedLock expects.
 *   <li>{@link SimpleLock#unlock()} before {@code lockAtLeastFor} has passed does not delete
 *       the keys: it makes them expire when {@code lockAtLeastFor} ends
 *       ({@link Lease#releaseAfter}), by a script that checks this lock's token, so it never
 *       shortens or lengthens another holder's lock. After that, it deletes them, again only
 *       where they hold this lock's token.
 *   <li>{@link SimpleLock#extend} moves the lease's ttl to the new {@code lockAtMostFor} if
 *       a majority confirms; it returns empty when the lease already ran out or was lost,
 *       and when too few nodes confirmed in time (the lease then still stands until its old
 *       ttl ends, and the task may go on). As {@link SimpleLock} says, the lock it was
 *       called on is spent either way: {@code unlock} or {@code extend} on it then throws
 *       {@link IllegalStateException}.
 * </ul>
 *
 * <p>Unlike ShedLock's single-Redis provider, this one never deletes or extends a key it
 * does not own (every release and extension compares the token), and it survives the
 * failover of any minority of nodes. {@code lockAtLeastFor} is measured, as ShedLock does,
 * on this host's wall clock from the moment the lock was asked for.
 *
 * <p>If the calling thread is interrupted while the attempt is in flight, the attempt is
 * undone, {@link #lock} returns empty and the interrupt flag stays set.
 *
 * <p>Thread-safe; a lock it returns may be unlocked from any thread.
 *
 * @since 0.1.0
 */
public final class RedlockLockProvider implements ExtensibleLockProvider {
  private final Redlock redlock;

  /**
   * A provider over {@code redlock}, which the caller keeps and closes.
   *
   * @throws NullPointerException if {@code redlock} is null
   */
  public RedlockLockProvider(Redlock redlock) {
    this.redlock = Objects.requireNonNull(redlock, "redlock");
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    Optional<Lease> lease;
    try {
      lease = redlock.tryAcquire(configuration.getName(), configuration.getLockAtMostFor());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // tryAcquire undid what the attempt set
      return Optional.empty();
    }
    return lease.map(held -> new RedlockSimpleLock(configuration, held));
  }

  /** One lock as ShedLock sees it; the lease behind it may outlive it across extensions. */
  private static final class RedlockSimpleLock extends AbstractSimpleLock {
    private final Lease lease;

    RedlockSimpleLock(LockConfiguration configuration, Lease lease) {
      super(configuration);
      this.lease = lease;
    }

    @Override
    protected void doUnlock() {
      Duration left =
          Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil());
      if (left.toMillis() >= 1) {
        lease.releaseAfter(left);
      } else {
        lease.release();
      }
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
      try {
        return lease.extend(newConfiguration.getLockAtMostFor())
            ? Optional.of(new RedlockSimpleLock(newConfiguration, lease))
            : Optional.empty();
      } catch (LeaseLostException | IllegalStateException e) {
        return Optional.empty(); // ran out, lost, or released by the holder meanwhile
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // the extension may still apply
        return Optional.empty();
      }
    }

    @Override
    public String toString() {
      return "RedlockSimpleLock{" + lockConfiguration.getName() + ", " + lease + "}";
    }
  }
}
