package io.redlock.spring.boot;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.spring.boot.RedlockLocked.IfHeld;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.BeanResolver;

/**
 * The advice of {@link RedlockLocked} methods: acquires the lock of the call's key as the
 * method's settings say, runs the method with its lease in {@link RedlockContext}, and
 * releases the lease after it.
 *
 * <p>Thread-safe: the parsed methods are cached in a concurrent map; each call's state is on
 * its own stack and in its thread's {@link RedlockContext}.
 */
final class RedlockLockedInterceptor implements MethodInterceptor {
  private static final Logger log = LoggerFactory.getLogger(RedlockLockedInterceptor.class);

  private final Supplier<Redlock> redlock;
  private final BeanResolver beans;
  private final UnaryOperator<String> placeholders;
  private final Map<MethodClassKey, LockedMethod> methods = new ConcurrentHashMap<>();

  RedlockLockedInterceptor(
      Supplier<Redlock> redlock, BeanResolver beans, UnaryOperator<String> placeholders) {
    this.redlock = redlock;
    this.beans = beans;
    this.placeholders = placeholders;
  }

  /**
   * The settings of {@code method} as called on an instance of {@code targetClass}, read and
   * checked on first use; null if it is not locked.
   *
   * @throws IllegalStateException naming the method and the setting that is not accepted
   */
  LockedMethod locked(Method method, Class<?> targetClass) {
    MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
    LockedMethod known = methods.get(cacheKey);
    if (known != null) {
      return known;
    }
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    RedlockLocked annotation =
        AnnotatedElementUtils.findMergedAnnotation(specific, RedlockLocked.class);
    if (annotation == null) {
      annotation = AnnotatedElementUtils.findMergedAnnotation(method, RedlockLocked.class);
    }
    if (annotation == null) {
      return null;
    }
    LockedMethod parsed = LockedMethod.of(specific, annotation, placeholders);
    methods.putIfAbsent(cacheKey, parsed);
    return parsed;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Class<?> targetClass =
        target == null
            ? invocation.getMethod().getDeclaringClass()
            : AopUtils.getTargetClass(target);
    LockedMethod method = locked(invocation.getMethod(), targetClass);
    if (method == null) {
      return invocation.proceed();
    }
    String resource = method.resource(invocation.getArguments(), beans);
    Lease outer = RedlockContext.heldOn(resource);
    if (outer != null) {
      outer.ensureValid(); // reentrant: only on a lease still valid
      return runUnder(resource, outer, invocation);
    }
    Lease lease;
    try {
      lease = acquire(method, resource);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (method.throwsInterrupted()) {
        throw e;
      }
      CancellationException cancelled =
          new CancellationException(
              "interrupted while acquiring the lock of "
                  + method
                  + " on resource "
                  + resource
                  + "; the method did not run (the interrupt flag is set again)");
      cancelled.initCause(e);
      throw cancelled;
    }
    if (lease == null) {
      log.debug("skipped: resource={} method={} (held elsewhere)", resource, method);
      return method.skipped();
    }
    Object result;
    try {
      if (method.autoExtend()) {
        lease.autoExtend();
      }
      result = runUnder(resource, lease, invocation);
    } catch (Throwable t) {
      LeaseLostException lost = lossOf(lease);
      lease.release();
      if (lost != null && t != lost) {
        t.addSuppressed(lost);
      }
      throw t;
    }
    LeaseLostException lost = lossOf(lease);
    lease.release();
    if (lost != null) {
      throw lost;
    }
    return result;
  }

  private static Object runUnder(String resource, Lease lease, MethodInvocation invocation)
      throws Throwable {
    RedlockContext.enter(resource, lease);
    try {
      return invocation.proceed();
    } finally {
      RedlockContext.exit();
    }
  }

  /** Why {@code lease} is no good any more, or null while it is valid. */
  private static LeaseLostException lossOf(Lease lease) {
    if (lease.isValid()) {
      return null;
    }
    try {
      lease.ensureValid();
    } catch (LeaseLostException e) {
      return e;
    } catch (IllegalStateException released) {
      // released by Redlock.close() while the method ran
    }
    return new LeaseLostException(
        lease.resources(), "it was lost while the locked method ran: its work may have overlapped");
  }

  /**
   * Acquires {@code resource} as {@code method} says: the lease, or null when the call is to be
   * skipped. Attempts follow each other a retry delay (with jitter) apart; an attempt that
   * failed for want of answers starts (or continues) an outage, one refused by another holder
   * ends it. It throws on an outage once {@code waitFor} (with WAIT: {@code maxWait}) has
   * passed, and, with THROW, on contention once {@code waitFor} has.
   */
  private Lease acquire(LockedMethod method, String resource) throws InterruptedException {
    Redlock lockManager = redlock.get();
    RedlockConfig config = lockManager.config();
    Duration ttl = method.ttl() != null ? method.ttl() : config.ttl();
    boolean bounded = method.ifHeld() != IfHeld.WAIT;
    long start = System.nanoTime();
    long deadline = start + method.waitFor().toNanos();
    long maxWait = config.maxWait().toNanos();
    long outageSince = Long.MIN_VALUE;
    int attempts = 0;
    while (true) {
      long attemptStart = System.nanoTime();
      LockUnavailableException failure;
      try {
        return lockManager.attempt(resource, ttl);
      } catch (LockUnavailableException e) {
        failure = e;
        attempts++;
      }
      long now = System.nanoTime();
      boolean held = failure.heldElsewhere();
      if (held) {
        outageSince = Long.MIN_VALUE;
      } else if (outageSince == Long.MIN_VALUE) {
        outageSince = attemptStart;
      }
      boolean waited = bounded && now - deadline >= 0;
      boolean outageTooLong = !held && (waited || now - outageSince >= maxWait);
      if (outageTooLong) {
        throw summary(
            failure,
            attempts,
            now - start,
            "no majority of the nodes answered"
                + (bounded
                    ? " within waitFor " + method.waitFor()
                    : " for maxWait " + config.maxWait())
                + " (an outage, not another holder)");
      }
      if (held && waited) {
        if (method.ifHeld() == IfHeld.SKIP) {
          return null;
        }
        throw summary(
            failure,
            attempts,
            now - start,
            "another holder had it for all of waitFor " + method.waitFor());
      }
      long pause = pause(config);
      if (bounded) {
        pause = Math.min(pause, Math.max(0, deadline - System.nanoTime()));
      }
      if (pause > 0) {
        TimeUnit.NANOSECONDS.sleep(pause);
      } else if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  private static LockUnavailableException summary(
      LockUnavailableException last, int attempts, long elapsedNanos, String reason) {
    if (attempts == 1) {
      return last; // its own message says it all
    }
    List<String> resources = last.resources();
    return new LockUnavailableException(
        resources, attempts, Duration.ofNanos(elapsedNanos), reason, last.lastOutcomes());
  }

  /** A retry delay with its jitter, in nanoseconds: at least one millisecond. */
  private static long pause(RedlockConfig config) {
    long delay = config.retryDelay().toNanos();
    long jitter = config.retryJitter().toNanos();
    long offset = jitter > 0 ? ThreadLocalRandom.current().nextLong(-jitter, jitter + 1) : 0;
    return Math.max(TimeUnit.MILLISECONDS.toNanos(1), delay + offset);
  }
}
