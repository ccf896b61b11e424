package io.redlock.spring.boot;

import io.redlock.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

/**
 * The lease of the {@link RedlockLocked} method running on the current thread.
 *
 * <pre>{@code
 * long token = RedlockContext.currentLease().orElseThrow().fencingToken();
 * }</pre>
 *
 * <p>Thread-safe: each thread sees its own methods only. Like a transaction, the lease does
 * not follow the method's work to other threads: read it on the thread the method runs on.
 *
 * @since 0.1.0
 */
public final class RedlockContext {
  private static final ThreadLocal<Deque<Frame>> FRAMES = new ThreadLocal<>();

  private RedlockContext() {}

  /**
   * The lease of the innermost {@link RedlockLocked} method running on the current thread: the
   * same lease for the whole call, extensions included, so its {@linkplain
   * Lease#fencingToken() fencing token} stays the same. A lease lost meanwhile stays current,
   * no longer valid ({@link Lease#ensureValid()} throws). Never release it: the method's proxy
   * does when the method returns.
   *
   * @return the lease, or empty outside a locked method
   */
  public static Optional<Lease> currentLease() {
    Deque<Frame> frames = FRAMES.get();
    return frames == null || frames.isEmpty()
        ? Optional.empty()
        : Optional.of(frames.peekLast().lease());
  }

  /** The lease this thread holds on {@code resource} in an outer method, or null. */
  static Lease heldOn(String resource) {
    Deque<Frame> frames = FRAMES.get();
    if (frames == null) {
      return null;
    }
    for (Iterator<Frame> it = frames.descendingIterator(); it.hasNext(); ) {
      Frame frame = it.next();
      if (frame.resource().equals(resource)) {
        return frame.lease();
      }
    }
    return null;
  }

  /** A locked method starts on this thread. */
  static void enter(String resource, Lease lease) {
    Deque<Frame> frames = FRAMES.get();
    if (frames == null) {
      frames = new ArrayDeque<>();
      FRAMES.set(frames);
    }
    frames.addLast(new Frame(resource, lease));
  }

  /** The innermost locked method of this thread ended. */
  static void exit() {
    Deque<Frame> frames = FRAMES.get();
    frames.removeLast();
    if (frames.isEmpty()) {
      FRAMES.remove(); // nothing of ours stays on a pooled thread
    }
  }

  private record Frame(String resource, Lease lease) {}
}
