package io.redlock.shedlock;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.RedlockConfigException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one ShedLock lock's lease alive with short ttls until a target instant: its
 * {@code lockAtMostFor} while the task runs, its {@code lockAtLeastFor} after an early unlock.
 *
 * <p>The keys never outlive the target: every extension asks for the lease ttl or, when less
 * is left, exactly what is left until the target, so the last one makes the keys expire there
 * (or up to one node timeout earlier, when what is left is too short to be a ttl). In the
 * unlocked phase the last step is {@link Lease#releaseAfter}, which sets the keys' ttl to what
 * is left. If the process dies, nobody extends any more and the keys expire within one lease
 * ttl.
 *
 * <p>An extension too few nodes confirmed is retried after a pause while the lease is valid;
 * the keeper stops for good when the lease is lost, released or out of time.
 *
 * <p>Thread-safe. Note on concurrency: every decision (what is left, which ttl to ask for)
 * and the request it leads to are made under this object's monitor, and the lease applies
 * extensions in the order they were asked for, so the last request always reflects the
 * latest target. A scheduled tick carries the generation it was scheduled in and does nothing
 * once the target moved.
 */
final class LeaseKeeper {
  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  private final Lease lease;
  private final long leaseTtlNanos;
  private final long retryPauseNanos;

  // Guarded by this.
  private long targetNanos;
  private boolean unlocked;
  private boolean lastSent;
  private boolean done;
  private int generation;

  LeaseKeeper(Lease lease, Duration leaseTtl, Duration retryPause, long targetNanos) {
    this.lease = lease;
    this.leaseTtlNanos = leaseTtl.toNanos();
    this.retryPauseNanos = Math.max(1, retryPause.toNanos());
    this.targetNanos = targetNanos;
  }

  Lease lease() {
    return lease;
  }

  /** Starts keeping the lease until the target. */
  synchronized void start() {
    lastSent = targetNanos - System.nanoTime() <= leaseTtlNanos;
    scheduleTickLocked();
  }

  /**
   * The ttl to ask for to extend the lease to {@code targetNanos} from now: the lease ttl, or
   * less when the target is nearer.
   */
  Duration ttlToward(long targetNanos) {
    long left = targetNanos - System.nanoTime();
    return Duration.ofNanos(Math.max(1_000_000L, Math.min(leaseTtlNanos, left)));
  }

  /**
   * Moves the target to {@code newTargetNanos} and extends the lease toward it now, retrying
   * an extension too few nodes confirmed while the lease is valid.
   *
   * @return whether the lease was extended; {@code false} when it is lost, released or was
   *     interrupted (the flag is then set); the keeper has then stopped
   * @throws RedlockConfigException if the ttl toward the new target is not accepted
   */
  boolean extendTo(long newTargetNanos) {
    synchronized (this) {
      if (done) {
        return false;
      }
      generation++; // no tick of the old target runs now
      targetNanos = newTargetNanos;
      unlocked = false;
    }
    while (true) {
      Duration ttl = ttlToward(newTargetNanos);
      boolean confirmed;
      try {
        confirmed = lease.extend(ttl);
      } catch (LeaseLostException | IllegalStateException e) {
        stop();
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // the extension may still apply; the caller knows
        stop();
        return false;
      }
      if (confirmed) {
        synchronized (this) {
          if (!done) {
            lastSent = ttl.toNanos() < leaseTtlNanos;
            scheduleTickLocked();
          }
        }
        return true;
      }
      if (!lease.isValid()) {
        stop();
        return false;
      }
      log.debug("extension not confirmed, retrying while the lease is valid: {}", lease);
      try {
        TimeUnit.NANOSECONDS.sleep(retryPauseNanos);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stop();
        return false;
      }
    }
  }

  /**
   * The task is done: release the lease now if {@code holdUntilNanos} has passed, else keep
   * the keys until then (extending the lease while more than one lease ttl is left) and let
   * them expire there.
   */
  void unlock(long holdUntilNanos) {
    long left = holdUntilNanos - System.nanoTime();
    synchronized (this) {
      generation++;
      if (left > leaseTtlNanos && !done) {
        targetNanos = holdUntilNanos;
        unlocked = true;
        lastSent = false;
        scheduleTickLocked();
        return;
      }
      done = true;
    }
    // A stopped keeper (lease lost, or an interrupted extension) may have more than a lease
    // ttl left: the keys that still hold the token get at most one lease ttl more.
    releaseWithin(Math.min(left, leaseTtlNanos));
  }

  /** Stops keeping the lease, which expires with its last ttl. */
  synchronized void stop() {
    done = true;
    generation++;
  }

  /** Releases the lease now, or leaves its keys to expire in {@code leftNanos}. */
  private void releaseWithin(long leftNanos) {
    long millis = TimeUnit.NANOSECONDS.toMillis(leftNanos);
    if (millis >= 1) {
      lease.releaseAfter(Duration.ofMillis(millis));
    } else {
      lease.release();
    }
  }

  private void scheduleTickLocked() {
    if (done || lastSent) {
      return;
    }
    // Extend when half a lease ttl of validity is left: time enough for retries.
    long delay = Math.max(0, lease.remaining().toNanos() - leaseTtlNanos / 2);
    scheduleLocked(delay);
  }

  private void scheduleLocked(long delayNanos) {
    int scheduledIn = generation;
    CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS)
        .execute(() -> tick(scheduledIn));
  }

  private void tick(int scheduledIn) {
    CompletableFuture<Boolean> extension;
    long releaseIn;
    Duration ttl;
    synchronized (this) {
      if (done || scheduledIn != generation) {
        return;
      }
      long left = targetNanos - System.nanoTime();
      if (unlocked && left <= leaseTtlNanos) {
        done = true;
        releaseIn = left;
        extension = null;
        ttl = null;
      } else {
        releaseIn = 0;
        ttl = ttlToward(targetNanos);
        try {
          extension = lease.extendAsync(ttl);
        } catch (RedlockConfigException | IllegalStateException tooShortOrReleased) {
          // Too little left to be a ttl: the keys expire with their last one, a little
          // before the target. Or released meanwhile.
          done = true;
          return;
        }
        lastSent = !unlocked && ttl.toNanos() < leaseTtlNanos;
      }
    }
    if (extension == null) {
      releaseWithin(releaseIn);
      return;
    }
    extension.whenComplete((confirmed, error) -> afterExtension(scheduledIn, confirmed, error));
  }

  private void afterExtension(int scheduledIn, Boolean confirmed, Throwable error) {
    synchronized (this) {
      if (done || scheduledIn != generation) {
        return;
      }
      if (error != null) {
        Throwable cause = error instanceof CompletionException ? error.getCause() : error;
        log.debug("stopped keeping the lease: {}", cause.toString());
        done = true;
        return;
      }
      if (confirmed) {
        scheduleTickLocked();
        return;
      }
      if (!lease.isValid()) {
        done = true;
        return;
      }
      lastSent = false; // the last step is not done until a majority confirmed it
      scheduleLocked(retryPauseNanos);
    }
  }
}
