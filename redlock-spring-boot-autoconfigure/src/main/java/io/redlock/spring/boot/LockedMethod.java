package io.redlock.spring.boot;

import io.redlock.spring.boot.RedlockLocked.IfHeld;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One {@link RedlockLocked} method, its settings read, checked and parsed once: what the
 * interceptor needs on every call. Made when the bean is proxied, so that a setting that is not
 * accepted fails the application's start, naming the method and the attribute.
 *
 * <p>Immutable and thread-safe (a parsed SpEL expression may be evaluated concurrently).
 */
final class LockedMethod {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  private final Method method;
  private final String keySource;
  private final Expression key;
  private final Duration waitFor;
  private final Duration ttl;
  private final boolean autoExtend;
  private final IfHeld ifHeld;

  private LockedMethod(
      Method method,
      String keySource,
      Expression key,
      Duration waitFor,
      Duration ttl,
      boolean autoExtend,
      IfHeld ifHeld) {
    this.method = method;
    this.keySource = keySource;
    this.key = key;
    this.waitFor = waitFor;
    this.ttl = ttl;
    this.autoExtend = autoExtend;
    this.ifHeld = ifHeld;
  }

  /**
   * The settings of {@code annotation} on {@code method} (the target class's method, whose
   * parameter names the key reads), placeholders resolved by {@code placeholders}.
   *
   * @throws IllegalStateException naming the method and the setting that is not accepted
   */
  static LockedMethod of(
      Method method, RedlockLocked annotation, UnaryOperator<String> placeholders) {
    String where = "@RedlockLocked on " + describe(method) + ": ";
    Class<?> returns = method.getReturnType();
    if (CompletionStage.class.isAssignableFrom(returns)
        || Future.class.isAssignableFrom(returns)
        || isPublisher(returns)) {
      throw new IllegalStateException(
          where
              + "a method returning "
              + returns.getName()
              + " is not accepted: the lock would be released when the method returns, before"
              + " the work it started is done; lock inside that work instead");
    }
    if (annotation.ifHeld() == IfHeld.SKIP && returns.isPrimitive() && returns != void.class) {
      throw new IllegalStateException(
          where
              + "ifHeld SKIP is not accepted on a method returning "
              + returns.getName()
              + ": a skipped call has no value to return; return a wrapper type or an"
              + " Optional, or use THROW");
    }
    String keySource = annotation.key();
    if (keySource.isBlank()) {
      throw new IllegalStateException(
          where
              + "key '' is not accepted: it must be a SpEL expression, such as \"'orders:' +"
              + " #order.id\" or \"'nightly-report'\"");
    }
    Expression key;
    try {
      key = PARSER.parseExpression(keySource);
    } catch (ParseException e) {
      throw new IllegalStateException(
          where + "key '" + keySource + "' is not accepted: " + e.getMessage());
    }
    Duration waitFor = duration(where, "waitFor", annotation.waitFor(), placeholders);
    if (waitFor == null || waitFor.isNegative()) {
      throw new IllegalStateException(
          where
              + "waitFor '"
              + annotation.waitFor()
              + "' is not accepted: it must be zero or more, such as \"0s\" or \"5s\"");
    }
    if (annotation.ifHeld() == IfHeld.WAIT && !waitFor.isZero()) {
      throw new IllegalStateException(
          where
              + "waitFor '"
              + annotation.waitFor()
              + "' is not accepted with ifHeld WAIT, which waits as long as the lock is held;"
              + " leave waitFor out, or use THROW or SKIP");
    }
    Duration ttl = duration(where, "ttl", annotation.ttl(), placeholders);
    if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
      throw new IllegalStateException(
          where
              + "ttl '"
              + annotation.ttl()
              + "' is not accepted: it must be positive (and at most the configuration's"
              + " maxTtl), or empty for the configuration's ttl");
    }
    return new LockedMethod(
        method, keySource, key, waitFor, ttl, annotation.autoExtend(), annotation.ifHeld());
  }

  /** {@code text} parsed as a Boot duration, null when empty. */
  private static Duration duration(
      String where, String attribute, String text, UnaryOperator<String> placeholders) {
    String resolved = placeholders.apply(text);
    if (resolved == null || resolved.isBlank()) {
      return null;
    }
    try {
      return DurationStyle.detectAndParse(resolved.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          where
              + attribute
              + " '"
              + text
              + "' is not accepted: it must be a duration such as \"500ms\", \"5s\" or"
              + " \"PT5S\"");
    }
  }

  private static boolean isPublisher(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      if (c.getName().equals("org.reactivestreams.Publisher")) {
        return true;
      }
      for (Class<?> i : c.getInterfaces()) {
        if (isPublisher(i)) {
          return true;
        }
      }
    }
    return false;
  }

  static String describe(Method method) {
    StringBuilder text =
        new StringBuilder(method.getDeclaringClass().getName())
            .append('.')
            .append(method.getName())
            .append('(');
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      text.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
    }
    return text.append(')').toString();
  }

  /**
   * The resource of a call with {@code args}.
   *
   * @throws IllegalArgumentException if the key is null or empty for these arguments
   */
  String resource(Object[] args, BeanResolver beans) {
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(null, method, args, NAMES);
    context.setBeanResolver(beans);
    Object value = key.getValue(context);
    String resource = value == null ? null : value.toString();
    if (resource == null || resource.isEmpty()) {
      throw new IllegalArgumentException(
          "@RedlockLocked on "
              + describe(method)
              + ": key '"
              + keySource
              + "' is "
              + (resource == null ? "null" : "empty")
              + " for this call; a lock needs a resource name (are the parameters named? compile"
              + " with -parameters, or use #p0)");
    }
    return resource;
  }

  /** How long to keep trying while the lock is held elsewhere; zero for one attempt. */
  Duration waitFor() {
    return waitFor;
  }

  /** The lease's ttl, or null for the configuration's. */
  Duration ttl() {
    return ttl;
  }

  boolean autoExtend() {
    return autoExtend;
  }

  IfHeld ifHeld() {
    return ifHeld;
  }

  /** What a skipped call returns. */
  Object skipped() {
    return method.getReturnType() == Optional.class ? Optional.empty() : null;
  }

  /** Whether the method declares {@link InterruptedException} (or a supertype of it). */
  boolean throwsInterrupted() {
    for (Class<?> type : method.getExceptionTypes()) {
      if (type.isAssignableFrom(InterruptedException.class)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return describe(method);
  }
}
