package io.redlock.testkit;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Deadlines for tests that wait for something to happen, scaled for slow machines.
 *
 * <p>A test never sleeps for a fixed time and never polls without a deadline: it states what it
 * waits for and {@link #await awaits} it. Every deadline is multiplied by the system property
 * {@value #MULTIPLIER_PROPERTY} (a positive number, default 1), so a loaded CI machine can be
 * given more time without touching a test. A deadline bounds how long a broken test hangs; it is
 * never a claim about speed (timing claims live in the benchmarks).
 *
 * <pre>{@code
 * Timing.await("every node to hold the key", () -> holding(key) == 5);
 * }</pre>
 *
 * <p>Thread-safe and stateless.
 *
 * @since 0.1.0
 */
public final class Timing {

  /** The system property that scales every deadline. */
  public static final String MULTIPLIER_PROPERTY = "redlock.test.timing";

  /** How long {@link #await(String, BooleanSupplier)} waits, before scaling. */
  public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

  private static final long POLL_NANOS = Duration.ofMillis(5).toNanos();

  /**
   * The pause between two calls of an {@link Attempt}: an attempt acts on the system under
   * test (it takes a lock, say), so it is repeated less often than a condition is checked.
   */
  public static final Duration ATTEMPT_PAUSE = Duration.ofMillis(50);

  /**
   * Something a test tries again until it succeeds, such as taking a lock while a node
   * reconnects.
   *
   * @param <T> what a successful attempt yields
   */
  @FunctionalInterface
  public interface Attempt<T> {
    /**
     * Tries once.
     *
     * @return the result, or empty to be tried again
     * @throws InterruptedException if the thread is interrupted while it tries
     */
    Optional<T> attempt() throws InterruptedException;
  }

  private Timing() {}

  /**
   * The factor every deadline is multiplied by, from {@value #MULTIPLIER_PROPERTY}.
   *
   * @throws IllegalArgumentException if the property is set to anything but a positive number
   */
  public static double multiplier() {
    String value = System.getProperty(MULTIPLIER_PROPERTY);
    if (value == null || value.isBlank()) {
      return 1;
    }
    double factor;
    try {
      factor = Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      factor = Double.NaN;
    }
    if (!(factor > 0) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException(
          String.format(
              Locale.ROOT,
              "system property %s is '%s'; accepted: a positive number such as 1 or 2.5",
              MULTIPLIER_PROPERTY,
              value));
    }
    return factor;
  }

  /** {@code deadline} multiplied by {@link #multiplier()}. */
  public static Duration scaled(Duration deadline) {
    if (deadline == null || deadline.isNegative()) {
      throw new IllegalArgumentException("deadline must be zero or positive, was " + deadline);
    }
    return Duration.ofNanos((long) Math.min(Long.MAX_VALUE, deadline.toNanos() * multiplier()));
  }

  /**
   * Waits until {@code condition} is true, for at most {@link #DEFAULT_WAIT}, scaled.
   *
   * @param what what is awaited, for the failure message ("every node to hold the key")
   * @throws AssertionError if the deadline passes first
   * @throws InterruptedException if the waiting thread is interrupted
   */
  public static void await(String what, BooleanSupplier condition) throws InterruptedException {
    await(what, DEFAULT_WAIT, condition);
  }

  /**
   * Waits until {@code condition} is true, for at most {@code atMost}, scaled. The condition is
   * checked first at once, then every few milliseconds, and once more at the deadline.
   *
   * @param what what is awaited, for the failure message
   * @param atMost the deadline before scaling
   * @throws AssertionError if the deadline passes first
   * @throws InterruptedException if the waiting thread is interrupted
   */
  public static void await(String what, Duration atMost, BooleanSupplier condition)
      throws InterruptedException {
    Duration scaled = scaled(atMost);
    long deadline = System.nanoTime() + scaled.toNanos();
    while (!condition.getAsBoolean()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        if (condition.getAsBoolean()) {
          return;
        }
        throw gaveUp(what, scaled);
      }
      Thread.sleep(Math.max(1, Math.min(POLL_NANOS, left) / 1_000_000));
    }
  }

  /**
   * Calls {@code attempt} until it yields a result, {@link #ATTEMPT_PAUSE} apart, for at most
   * {@code atMost}, scaled, and returns that result. An exception from an attempt ends the
   * wait at once.
   *
   * @param what what is awaited, for the failure message ("a lease on orders:42")
   * @param atMost the deadline before scaling
   * @param <T> what a successful attempt yields
   * @return the first result
   * @throws AssertionError if the deadline passes first
   * @throws InterruptedException if the waiting thread is interrupted
   */
  public static <T> T awaitValue(String what, Duration atMost, Attempt<T> attempt)
      throws InterruptedException {
    Duration scaled = scaled(atMost);
    long deadline = System.nanoTime() + scaled.toNanos();
    while (true) {
      Optional<T> result = attempt.attempt();
      if (result.isPresent()) {
        return result.get();
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw gaveUp(what, scaled);
      }
      Thread.sleep(Math.max(1, Math.min(ATTEMPT_PAUSE.toNanos(), left) / 1_000_000));
    }
  }

  private static AssertionError gaveUp(String what, Duration scaled) {
    return new AssertionError(
        "gave up waiting for "
            + what
            + " after "
            + scaled
            + " ("
            + MULTIPLIER_PROPERTY
            + " = "
            + multiplier()
            + ")");
  }
}
