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
 * elsewhere. A lock whose extension failed is spent and never unlocked (ShedLock's {@code
 * unlock} on it throws before reaching the provider): its entry is marked {@linkplain
 * Entry#orphan() orphaned}, stays while its task goes on (so the task sees its lost lease),
 * and is dropped when the next task is locked on that thread.
 *
 * <p>Thread-safe.
 */
final class ActiveLeases {
  private static final ThreadLocal<Deque<Entry>> ACTIVE = new ThreadLocal<>();

  private ActiveLeases() {}

  /** Records {@code lease} as the current thread's innermost task lease. */
  static Entry push(Lease lease) {
    Deque<Entry> stack = ACTIVE.get();
    if (stack == null) {
      stack = new ConcurrentLinkedDeque<>();
      ACTIVE.set(stack);
    }
    stack.removeIf(e -> e.orphaned);
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
