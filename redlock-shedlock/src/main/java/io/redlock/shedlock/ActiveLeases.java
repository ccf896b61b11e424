package io.redlock.shedlock;

import io.redlock.Lease;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The leases of the ShedLock tasks locked on each thread and not unlocked yet, innermost last:
 * what {@link RedlockLockProvider#currentLease()} reads.
 *
 * <p>A task is locked on the thread that runs it (ShedLock's executor calls {@code lock}, runs
 * the task and calls {@code unlock} on one thread), but a lock may be unlocked from any thread,
 * so each thread's stack is a concurrent deque that {@link Entry#end()} may change from
 * elsewhere. Some entries are never ended: a lock whose extension failed is spent, and
 * ShedLock's {@code unlock} on it throws before reaching the provider (its entry is marked
 * {@linkplain Entry#orphan() orphaned}); a lock taken with {@code lock} and never unlocked
 * stays until its lease ends. The innermost entry stays while its task goes on (so the task
 * sees its lost lease). When the next lock is taken on that thread outside a task, every
 * entry left there is dropped; inside a task (a nested lock), those that are orphaned or no
 * longer valid, but the innermost. Since a forgotten lock may sit below, {@link
 * RedlockLockProvider#currentLease()} answers only inside a task ShedLock says is running.
 *
 * <p>Thread-safe.
 */
final class ActiveLeases {
  private static final ThreadLocal<Deque<Entry>> ACTIVE = new ThreadLocal<>();

  private ActiveLeases() {}

  /**
   * Records {@code lease} as the current thread's innermost task lease.
   *
   * @param inTask whether a ShedLock task runs on this thread already (this lock is then a
   *     nested one); if not, no entry left on this thread belongs to a running task
   */
  static Entry push(Lease lease, boolean inTask) {
    Deque<Entry> stack = ACTIVE.get();
    if (stack == null) {
      stack = new ConcurrentLinkedDeque<>();
      ACTIVE.set(stack);
    }
    if (inTask) {
      Entry top = stack.peekLast(); // the running task's: it stays, lost or not
      stack.removeIf(e -> e != top && (e.orphaned || !e.lease.isValid()));
    } else {
      stack.clear();
    }
    Entry entry = new Entry(lease, stack);
    stack.addLast(entry);
    return entry;
  }

  /** The current thread's innermost task lease, if any. */
  static Optional<Lease> current() {
    Deque<Entry> stack = ACTIVE.get();
    Entry innermost = stack == null ? null : stack.peekLast();
    return innermost == null ? Optional.empty() : Optional.of(innermost.lease);
  }

  /** One task's place on the stack of the thread that locked it. */
  static final class Entry {
    private final Lease lease;
    private final Deque<Entry> stack;
    private volatile boolean orphaned;

    private Entry(Lease lease, Deque<Entry> stack) {
      this.lease = lease;
      this.stack = stack;
    }

    /** The task was unlocked, from whichever thread: its lease is no longer current. */
    void end() {
      stack.removeLastOccurrence(this);
      if (stack.isEmpty() && ACTIVE.get() == stack) {
        ACTIVE.remove(); // nothing of ours stays on a pooled thread
      }
    }

    /** The lock was spent without a successor: drop the entry when the next task locks. */
    void orphan() {
      orphaned = true;
    }
  }
}
