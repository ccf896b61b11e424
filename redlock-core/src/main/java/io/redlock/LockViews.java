package io.redlock;

import io.redlock.internal.LockEngine;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Collections;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link RedlockLock}s of one {@link Redlock}: one per resource name, so that every thread
 * of the JVM that asks for a resource shares one local lock.
 *
 * <p>Views are held weakly, except while locked: a view that nobody references and nobody
 * holds can be collected, and the next request makes a new one, which nobody can tell apart
 * from the old one. A locked view is pinned (strongly referenced from {@link #pinned}) by
 * the view itself, so a holder may drop its reference and find the same view again to
 * unlock it. So a service that locks many distinct names does not accumulate views.
 *
 * <p>Thread-safe.
 */
final class LockViews {
  private final LockEngine engine;
  private final ConcurrentHashMap<String, View> views = new ConcurrentHashMap<>();
  private final ReferenceQueue<RedlockLock> collected = new ReferenceQueue<>();
  final java.util.Set<RedlockLock> pinned = ConcurrentHashMap.newKeySet();

  LockViews(LockEngine engine) {
    this.engine = engine;
  }

  private static final class View extends WeakReference<RedlockLock> {
    final String resource;

    View(String resource, RedlockLock lock, ReferenceQueue<RedlockLock> queue) {
      super(lock, queue);
      this.resource = resource;
    }
  }

  RedlockLock get(String resource, Duration ttl) {
    // The same checks, and so the same errors, as acquire(resource, ttl).
    engine.checkResources(Collections.singletonList(resource));
    engine.checkTtl(ttl);
    expunge();
    RedlockLock[] found = new RedlockLock[1];
    views.compute(
        resource,
        (name, old) -> {
          RedlockLock existing = old == null ? null : old.get();
          if (existing != null) {
            found[0] = existing;
            return old;
          }
          found[0] = new RedlockLock(engine, name, ttl, pinned);
          return new View(name, found[0], collected);
        });
    RedlockLock lock = found[0];
    if (!lock.ttl().equals(ttl)) {
      throw new IllegalArgumentException(
          "ttl "
              + ttl.toMillis()
              + " ms for resource '"
              + resource
              + "' is not accepted: this Redlock's lock view of it has ttl "
              + lock.ttl().toMillis()
              + " ms, and one resource has one view (so that the threads"
              + " of this JVM exclude each other locally); ask for it with that ttl");
    }
    return lock;
  }

  /** Views in the map, collected or not: for tests. */
  int size() {
    expunge();
    return views.size();
  }

  private void expunge() {
    for (Object ref; (ref = collected.poll()) != null; ) {
      View view = (View) ref;
      views.remove(view.resource, view);
    }
  }
}
