package io.redlock.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method of a Spring bean under a Redlock lock: the method body runs only
 * while this process holds a lease on the resource {@link #key()} names, on a majority of the
 * nodes, and the lease is released when the method returns or throws.
 *
 * <pre>{@code
 * @RedlockLocked(key = "'order:' + #order.id", waitFor = "5s")
 * public void ship(Order order) {
 *   long token = RedlockContext.currentLease().orElseThrow().fencingToken();
 *   // ... no other thread or process ships this order now
 * }
 * }</pre>
 *
 * <p><b>When the lock is held elsewhere.</b> The method tries for {@link #waitFor()} (one
 * attempt by default), then does what {@link #ifHeld()} says: {@link IfHeld#THROW} (the
 * default) throws the {@link io.redlock.LockUnavailableException} of the last attempt, its
 * {@code heldElsewhere()} true; {@link IfHeld#SKIP} does not run the method and returns {@code
 * null}, or an empty {@code Optional}; {@link IfHeld#WAIT} waits as long as it is held
 * elsewhere. An outage is never a skip: when no majority of the nodes answered (nodes down,
 * timing out, or held back by the restart guard), the attempts go on within {@code waitFor} (with
 * {@code WAIT}, for the configuration's {@code maxWait} in a row), then a {@code
 * LockUnavailableException} with {@code heldElsewhere()} false and every node's outcome is
 * thrown, whatever {@code ifHeld} says, as for {@code RedlockLock.lock()}.
 *
 * <p><b>While the method runs.</b> The lease is taken with {@link #ttl()} (by default the
 * {@code Redlock}'s) and, unless {@link #autoExtend()} is false, extended in the background,
 * so the method may run for longer than the ttl and the lock outlives a process that dies by at
 * most one ttl. {@link RedlockContext#currentLease()} gives the method its lease: to check it
 * before a side effect, and its {@linkplain io.redlock.Lease#fencingToken() fencing token}
 * (with {@code redlock.fencing=true}). If the lease was lost while the method ran, the method's
 * result is not returned: a {@link io.redlock.LeaseLostException} is thrown after it (added as
 * suppressed to what the method threw, if it threw), since its work may have overlapped another
 * holder's.
 *
 * <p><b>Nested calls.</b> A locked method that calls another one with the same key, on the
 * same thread, holds the lock already: the inner one runs under the outer lease (reentrant),
 * whatever its own settings, and the lease is released when the outer one returns; if that
 * lease was lost, the inner call throws {@link io.redlock.LeaseLostException} without running.
 * A different key takes a lock of its own, released when the inner method returns; {@code
 * currentLease()} is then the inner lease, and the outer one again afterwards.
 *
 * <p><b>Where it applies.</b> To public methods of Spring beans called through the bean (the
 * proxy Spring makes, as for {@code @Transactional}); a call from the bean to its own method
 * does not pass the proxy and is not locked. The lock is taken outside the proxy's other
 * advice, so with {@code @Transactional} the transaction commits before the lock is released.
 * Methods that return a {@code CompletionStage}, a {@code Future} or a reactive {@code
 * Publisher} are refused at start: the lock would be released when the method returns, before
 * the work it started is done. So are settings that are not accepted; each fails the
 * application's start with the method and the attribute named. Made by the Spring Boot
 * auto-configuration when there is one {@code Redlock} bean, with Spring AOP alone (which
 * every Spring application has; AspectJ is not needed).
 *
 * @since 0.1.0
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RedlockLocked {

  /**
   * The resource to lock, a SpEL expression over the method's parameters: by name ({@code
   * #order}, with the code compiled with {@code -parameters}, as Spring Boot's Maven and Gradle
   * plugins set up) or by position ({@code #p0}, {@code #a0}); beans as {@code @name}. A
   * constant is quoted: {@code "'nightly-report'"}. The value's {@code toString()} is the
   * resource name (with the configuration's key prefix in front); it must not be null or
   * empty.
   *
   * @return the SpEL expression of the resource name
   */
  String key();

  /**
   * How long to keep trying while another holder has the lock, as a Spring Boot duration
   * ({@code "500ms"}, {@code "5s"}, {@code "PT5S"}; {@code ${...}} placeholders are resolved).
   * {@code "0s"} (the default) makes one attempt. Not accepted with {@link IfHeld#WAIT}, which
   * waits as long as the lock is held.
   *
   * @return the longest wait for another holder
   */
  String waitFor() default "0s";

  /**
   * The ttl of the lease, as a Spring Boot duration; empty (the default) for the {@code
   * Redlock}'s {@code ttl}. At most the configuration's {@code maxTtl}: with {@link
   * #autoExtend()} the method may run longer.
   *
   * @return the lease's ttl, or empty for the configuration's
   */
  String ttl() default "";

  /**
   * Whether the lease is extended in the background while the method runs (default {@code
   * true}). With {@code false} the lock is held for at most one {@link #ttl()}: a method that
   * runs longer loses it, may overlap another holder, and ends with a {@link
   * io.redlock.LeaseLostException}.
   *
   * @return whether the lease is extended while the method runs
   */
  boolean autoExtend() default true;

  /**
   * What happens when another holder had the lock for all of {@link #waitFor()}.
   *
   * @return the policy, {@link IfHeld#THROW} by default
   */
  IfHeld ifHeld() default IfHeld.THROW;

  /** What a locked method does when another holder has its lock. */
  enum IfHeld {
    /**
     * Throws the {@link io.redlock.LockUnavailableException} of the last attempt ({@code
     * heldElsewhere()} true, every node's outcome in the message) without running the method.
     */
    THROW,
    /**
     * Returns without running the method: {@code null}, or an empty {@code Optional} for a
     * method that returns one. Not accepted on a method that returns a primitive.
     */
    SKIP,
    /**
     * Waits as long as the lock is held elsewhere, trying again after each retry delay; an
     * outage still ends the wait (see {@link RedlockLocked}).
     */
    WAIT
  }
}
