package io.redlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongPredicate;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cases of ShedLock's provider test support (not published to Maven Central), re-created
 * against five real nodes, plus ShedLock's own executor over this provider. Runs on ShedLock 6
 * and, in a second failsafe execution, on ShedLock 7.
 *
 * <p>The provider makes one attempt per {@code lock}, so the {@code Redlock} here has a node
 * timeout of 500 ms rather than the default 50 ms: a loaded machine may answer one command
 * later than 50 ms, and a late majority would fail a lock these cases expect to get (the
 * node timeout is not what they test). Scaled where ShedLock's cases use a {@code
 * lockAtMostFor} of 1 or 50 ms: a Redlock ttl must be longer than the node timeout, so those
 * cases use {@link #SHORT}, a few seconds (scaled by {@link Timing}), which is also time
 * enough to see the lock held before it expires. The default {@code lockAtMostFor} here is
 * ShedLock's README's {@code defaultLockAtMostFor}, 10 minutes, far past the default {@code
 * maxTtl}: the lease is kept with short ttls up to it. Where ShedLock's cases sleep, these wait
 * with a deadline for the state they expect. ShedLock's README values on a default {@code
 * Redlock} are in {@link ShedLockReadmeValuesIT}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockLockProviderIT {
  private static final Duration AT_MOST = Duration.ofMinutes(10);

  /** A {@code lockAtMostFor} meant to run out during a case. */
  private static final Duration SHORT = Timing.scaled(Duration.ofSeconds(2));

  private static final Duration PATIENT_NODE_TIMEOUT = Duration.ofMillis(500);
  private static RedisServers servers;
  private static Redlock redlock;
  private static RedlockLockProvider provider;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5); // declared fresh: the restart guard counts them
    redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .nodeTimeout(PATIENT_NODE_TIMEOUT)
                .build());
    provider = new RedlockLockProvider(redlock);
  }

  @AfterAll
  static void stop() {
    if (redlock != null) {
      redlock.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private static String name() {
    return "job-" + UUID.randomUUID();
  }

  /** The key of the lock {@code name}: in the provider's namespace. */
  private static String key(String name) {
    return provider.resourceOf(name);
  }

  private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  private static LockConfiguration config(String name) {
    return config(name, AT_MOST, Duration.ZERO);
  }

  private static SimpleLock lock(LockConfiguration config) {
    Optional<SimpleLock> lock = provider.lock(config);
    assertThat(lock).as("lock %s", config.getName()).isPresent();
    return lock.get();
  }

  /** Nodes whose key for {@code name} satisfies {@code test}, given its PTTL (-2: no key). */
  private static int nodes(String name, LongPredicate test) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if (test.test((Long) servers.command(i, "PTTL", key(name)))) {
        count++;
      }
    }
    return count;
  }

  /**
   * A lock, an extension or a release returns once a majority of the nodes answered; the other
   * requests are still in flight. So {@code test} must hold on a majority at once, and on every
   * node soon after.
   */
  private static void assertOnEveryNode(String name, String what, LongPredicate test)
      throws InterruptedException {
    assertThat(nodes(name, test))
        .as("nodes where %s %s at once", name, what)
        .isGreaterThanOrEqualTo(servers.size() / 2 + 1);
    Timing.await(name + " " + what + " on every node", () -> nodes(name, test) == servers.size());
  }

  private static void assertLocked(String name) throws InterruptedException {
    assertOnEveryNode(name, "is held", pttl -> pttl != -2);
  }

  private static void assertUnlocked(String name) throws InterruptedException {
    assertOnEveryNode(name, "is free", pttl -> pttl == -2);
  }

  // ---- the provider cases ----

  @Test
  void lockThenUnlock() throws InterruptedException {
    String name = name();
    SimpleLock lock = lock(config(name));
    assertLocked(name);
    lock.unlock();
    assertUnlocked(name);
  }

  @Test
  void aSecondLockOnTheSameNameIsRefused() {
    String name = name();
    SimpleLock lock = lock(config(name));
    assertThat(provider.lock(config(name))).isEmpty();
    lock.unlock();
  }

  @Test
  void aLockMakesOneAttemptWhateverTheRetrySettings() throws InterruptedException {
    List<RedlockEvent.AcquireStarted> started = new CopyOnWriteArrayList<>();
    List<RedlockEvent.AcquireFinished> finished = new CopyOnWriteArrayList<>();
    RedlockListener attempts =
        new RedlockListener() {
          @Override
          public void acquireStarted(RedlockEvent.AcquireStarted event) {
            started.add(event);
          }

          @Override
          public void acquireFinished(RedlockEvent.AcquireFinished event) {
            finished.add(event);
          }
        };
    try (Redlock retrying =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .retryCount(5)
                .retryDelay(Duration.ofMillis(50))
                .retryJitter(Duration.ZERO)
                .listener(attempts)
                .build())) {
      String name = name();
      SimpleLock heldElsewhere = lock(config(name));
      assertThat(new RedlockLockProvider(retrying).lock(config(name))).isEmpty();
      Timing.await("the acquisition ended", () -> !finished.isEmpty());
      assertThat(started).as("acquisitions started").hasSize(1);
      assertThat(finished).as("acquisitions ended").hasSize(1);
      assertThat(finished.get(0).outcome()).isEqualTo(RedlockEvent.AcquireOutcome.UNAVAILABLE);
      assertThat(finished.get(0).attempts()).as("attempts of the one acquisition").isEqualTo(1);
      heldElsewhere.unlock();
    }
  }

  @Test
  void differentNamesAreIndependent() {
    SimpleLock first = lock(config(name()));
    SimpleLock second = lock(config(name()));
    first.unlock();
    second.unlock();
  }

  @Test
  void aNameCanBeLockedAgainRightAfterUnlock() {
    String name = name();
    for (int i = 0; i < 10; i++) {
      SimpleLock lock = lock(config(name));
      assertThat(provider.lock(config(name))).isEmpty();
      lock.unlock();
    }
  }

  @Test
  void aLockExpiresAfterLockAtMostFor() throws InterruptedException {
    String name = name();
    lock(config(name, SHORT, Duration.ZERO)); // never unlocked
    assertLocked(name);
    assertThat(provider.lock(config(name))).isEmpty();

    Timing.await(name + " to expire", () -> servers.holding(key(name)) == 0);
    lock(config(name)).unlock();
  }

  @Test
  void lockAtLeastForHoldsTheLockAfterUnlock() throws InterruptedException {
    String name = name();
    Duration atLeast = SHORT;
    SimpleLock lock = lock(config(name, atLeast.multipliedBy(2), atLeast));

    lock.unlock();

    assertThat(provider.lock(config(name))).as("within lockAtLeastFor").isEmpty();
    assertOnEveryNode(
        name, "expires within lockAtLeastFor", pttl -> pttl > 0 && pttl <= atLeast.toMillis());
    Timing.await("lockAtLeastFor to pass", () -> servers.holding(key(name)) == 0);
    lock(config(name)).unlock();
  }

  // ---- the extension cases ----

  @Test
  void anExtendedLockOutlivesItsFirstLockAtMostFor() throws InterruptedException {
    String name = name();
    Duration first = SHORT;
    SimpleLock lock = lock(config(name, first, Duration.ZERO));

    Optional<SimpleLock> extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO);

    assertThat(extended).isPresent();
    assertOnEveryNode(name, "outlives the first lockAtMostFor", pttl -> pttl > first.toMillis());
    Instant pastFirst = ClockProvider.now().plus(first);
    Timing.await("the first lockAtMostFor to pass", () -> ClockProvider.now().isAfter(pastFirst));
    assertLocked(name);
    extended.get().unlock();
    assertUnlocked(name);
  }

  @Test
  void anUnlockedLockCannotBeExtended() throws InterruptedException {
    String name = name();
    SimpleLock lock = lock(config(name));
    lock.unlock();
    assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    assertUnlocked(name);
  }

  @Test
  void anExpiredLockExtendsToNothing() throws InterruptedException {
    String name = name();
    SimpleLock lock = lock(config(name, SHORT, Duration.ZERO));
    Timing.await(name + " to expire", () -> servers.holding(key(name)) == 0);

    assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
    assertUnlocked(name);
  }

  @Test
  void anExtensionKeepsItsLockAtLeastFor() throws InterruptedException {
    String name = name();
    SimpleLock lock = lock(config(name));
    SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)).orElseThrow();
    extended.unlock();
    assertLocked(name);
    assertThat(provider.lock(config(name))).isEmpty();
  }

  @Test
  void aLockCannotBeExtendedTwice() {
    SimpleLock lock = lock(config(name()));
    SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
    assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    extended.unlock();
  }

  @Test
  void aLockCannotBeUnlockedAfterItWasExtended() {
    SimpleLock lock = lock(config(name()));
    SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    extended.unlock();
  }

  @Test
  void aLockAtMostForTheConfigRefusesIsNamed() {
    Duration notOverNodeTimeout = PATIENT_NODE_TIMEOUT.dividedBy(2);
    assertThatThrownBy(() -> provider.lock(config(name(), notOverNodeTimeout, Duration.ZERO)))
        .isInstanceOf(io.redlock.RedlockConfigException.class)
        .hasMessageContaining("ttl")
        .hasMessageContaining("nodeTimeout");
  }

  // ---- ShedLock's fuzz test, and its executor ----

  /** A job whose counter is read, held a moment and written back: a lost update shows. */
  private static final class Job {
    final String name = name();
    volatile int counter;

    LockConfiguration config() {
      return RedlockLockProviderIT.config(name, AT_MOST, Duration.ofMillis(5));
    }
  }

  @Test
  void eightThreadsOnTwoJobsLoseNoUpdate() throws Exception {
    int threads = 8;
    int iterations = 100;
    int shortRun = 10; // one thread stops early, as in ShedLock's fuzz test
    Job even = new Job();
    Job odd = new Job();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Job job = t % 2 == 0 ? even : odd;
        int runsLeft = t == 0 ? shortRun : iterations;
        runs.add(
            pool.submit(
                () -> {
                  for (int done = 0; done < runsLeft; ) {
                    Optional<SimpleLock> lock = provider.lock(job.config());
                    if (lock.isPresent()) {
                      int seen = job.counter;
                      Thread.sleep(1); // widen the window in which a second holder would overlap
                      job.counter = seen + 1;
                      lock.get().unlock();
                      done++;
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> run : runs) {
        run.get(150, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(even.counter).isEqualTo((threads / 2 - 1) * iterations + shortRun);
    assertThat(odd.counter).isEqualTo(threads / 2 * iterations);
  }

  @Test
  void shedLocksExecutorRunsATaskOnceAndSkipsItWhileHeldElsewhere() throws Exception {
    LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
    String name = name();
    AtomicInteger runs = new AtomicInteger();
    ExecutorService elsewhere = Executors.newSingleThreadExecutor();
    try {
      executor.executeWithLock(
          (Runnable)
              () -> {
                runs.incrementAndGet();
                // The same task on another instance meanwhile (another thread: ShedLock runs a
                // nested call on the same thread as re-entrant): skipped, not waited for.
                LockingTaskExecutor other =
                    new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock));
                try {
                  elsewhere
                      .submit(
                          () ->
                              other.executeWithLock(
                                  (Runnable) () -> runs.addAndGet(100), config(name)))
                      .get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              },
          config(name));
    } finally {
      elsewhere.shutdownNow();
    }

    assertThat(runs.get()).isEqualTo(1);
    assertUnlocked(name);
    executor.executeWithLock((Runnable) runs::incrementAndGet, config(name));
    assertThat(runs.get()).isEqualTo(2); // and runs again once the first run released it
  }
}
