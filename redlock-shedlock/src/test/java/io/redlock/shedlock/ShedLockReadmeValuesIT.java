package io.redlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.FaultLog;
import io.redlock.testkit.ProxiedFleet;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongPredicate;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ShedLock with the values of its README ({@code @SchedulerLock(lockAtMostFor = "14m",
 * lockAtLeastFor = "14m")}) and KeepAliveLockProvider's, on a {@code Redlock} with the default
 * configuration (ttl 30 s, maxTtl 1 min, restart guard on), run through ShedLock's own
 * executor, {@code LockExtender} and {@code KeepAliveLockProvider}. Runs on ShedLock 6 and, in
 * a second failsafe execution, on ShedLock 7.
 *
 * <p>One setting differs from its default: the node timeout is 500 ms, not 50 ms. A lock is
 * one attempt, and an attempt that a loaded machine answers later than the node timeout now
 * fails loudly (the point of one of these cases); the node timeout is not what the others
 * test. The slow nodes are slower than 500 ms.
 *
 * <p>Each case waits for what it shows (an extension, a lock freed by a dead holder) with a
 * deadline; the longest waits are one default ttl.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShedLockReadmeValuesIT {
  private static final Duration FOURTEEN_MINUTES = Duration.ofMinutes(14);
  private static final Duration DEFAULT_TTL = RedlockConfig.DEFAULT_TTL;

  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(5); // declared fresh: the restart guard counts them
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static final Duration PATIENT_NODE_TIMEOUT = Duration.ofMillis(500);

  /** Slower than {@link #PATIENT_NODE_TIMEOUT}: a round on such nodes is not confirmed. */
  private static final Duration SLOW = Duration.ofSeconds(1);

  private static RedlockConfig.Builder defaults(List<String> nodes) {
    return RedlockConfig.builder().nodes(nodes).nodeTimeout(PATIENT_NODE_TIMEOUT);
  }

  private static String namespace() {
    return "app-" + UUID.randomUUID();
  }

  /** {@code @SchedulerLock(name = name, lockAtMostFor = "14m", lockAtLeastFor = "14m")}. */
  private static LockConfiguration readme(String name) {
    return new LockConfiguration(ClockProvider.now(), name, FOURTEEN_MINUTES, FOURTEEN_MINUTES);
  }

  private static int nodes(String key, LongPredicate pttl) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if (pttl.test((Long) servers.command(i, "PTTL", key))) {
        count++;
      }
    }
    return count;
  }

  /**
   * A majority of the nodes hold {@code key}, and every node that holds it has a short ttl: at
   * most one default ttl left. (A node the restart guard had not probed yet when the lock was
   * taken was not asked, and may not hold it.)
   */
  private static void assertHeldWithAShortTtl(String key) throws InterruptedException {
    assertThat(nodes(key, pttl -> pttl > DEFAULT_TTL.toMillis() || pttl == -1))
        .as("nodes that hold %s with more than %s left, or without a ttl", key, DEFAULT_TTL)
        .isZero();
    assertThat(nodes(key, pttl -> pttl > 0))
        .as("nodes that hold %s", key)
        .isGreaterThanOrEqualTo(servers.size() / 2 + 1);
  }

  /** Runs {@code task} on another thread, as another instance's scheduler would. */
  private static void elsewhere(ThrowingRunnable task) throws Exception {
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try {
      thread
          .submit(
              () -> {
                task.run();
                return null;
              })
          .get(30, TimeUnit.SECONDS);
    } finally {
      thread.shutdownNow();
    }
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void aTaskWithTheReadmeValuesRunsOnceAndStaysLockedPastItsShortTtlAfterTheRun() throws Throwable {
    List<RedlockEvent.Extension> extensions = new CopyOnWriteArrayList<>();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void extended(RedlockEvent.Extension event) {
            extensions.add(event);
          }
        };
    String namespace = namespace();
    try (Redlock here = Redlock.create(defaults(servers.uris()).listener(listener).build());
        Redlock there = Redlock.create(defaults(servers.uris()).build())) {
      RedlockLockProvider ours = new RedlockLockProvider(here, namespace);
      LockingTaskExecutor first = new DefaultLockingTaskExecutor(ours);
      LockingTaskExecutor second =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(there, namespace));
      String key = ours.resourceOf("report");
      AtomicInteger runs = new AtomicInteger();

      first.executeWithLock(
          (LockingTaskExecutor.Task)
              () -> {
                runs.incrementAndGet();
                assertHeldWithAShortTtl(key);
                // The same task on another instance meanwhile: skipped, not an error.
                elsewhere(
                    () ->
                        second.executeWithLock(
                            (Runnable) () -> runs.addAndGet(100), readme("report")));
              },
          readme("report"));
      int extensionsAtTheEnd = extensions.size();

      assertThat(runs).as("runs of the task on both instances").hasValue(1);
      second.executeWithLock((Runnable) () -> runs.addAndGet(100), readme("report"));
      assertThat(runs).as("after the run, within lockAtLeastFor").hasValue(1);

      // lockAtLeastFor (14 min) is longer than the lease's ttl: the keys are extended after
      // the run, one short ttl at a time.
      Timing.await(
          "an extension after the run",
          DEFAULT_TTL,
          () ->
              extensions.stream()
                  .skip(extensionsAtTheEnd)
                  .anyMatch(e -> e.outcome() == RedlockEvent.ExtendOutcome.EXTENDED));
      assertHeldWithAShortTtl(key);
      second.executeWithLock((Runnable) () -> runs.addAndGet(100), readme("report"));
      assertThat(runs).as("past the first ttl, within lockAtLeastFor").hasValue(1);
    }
  }

  @Test
  void theLockOfAHolderWhoseJvmIsKilledIsFreeWithinOneShortTtl() throws Exception {
    String namespace = namespace();
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ShedLockHolder.class.getName());
    command.add(namespace);
    command.add("report");
    command.add(PATIENT_NODE_TIMEOUT.toString());
    command.addAll(servers.uris());
    Process holder = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> output = new CopyOnWriteArrayList<>();
    CountDownLatch locked = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(
                      new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                  output.add(line);
                  if (line.equals(ShedLockHolder.LOCKED)) {
                    locked.countDown();
                  }
                }
              } catch (java.io.IOException ended) {
                // the holder was killed
              }
            },
            "holder-output");
    reader.setDaemon(true);
    reader.start();
    try (Redlock redlock = Redlock.create(defaults(servers.uris()).build())) {
      RedlockLockProvider provider = new RedlockLockProvider(redlock, namespace);
      Timing.await(
          "the holder JVM to lock report (its output: " + output + ")",
          Duration.ofSeconds(30),
          () -> locked.getCount() == 0 || !holder.isAlive());
      assertThat(locked.getCount()).as("holder output: %s", output).isZero();
      assertThat(provider.lock(readme("report"))).as("while the holder runs").isEmpty();

      holder.destroyForcibly(); // SIGKILL: no unlock, no release, no more extensions
      assertThat(holder.waitFor(30, TimeUnit.SECONDS)).as("the holder is dead").isTrue();
      assertThat(provider.lock(readme("report"))).as("right after the kill").isEmpty();
      assertThat(nodes(provider.resourceOf("report"), pttl -> pttl > 0))
          .as("nodes that still hold the dead holder's keys")
          .isGreaterThanOrEqualTo(servers.size() / 2 + 1);

      SimpleLock ours =
          Timing.awaitValue(
              "the lock to be free within one short ttl of the kill",
              DEFAULT_TTL.plusSeconds(1),
              () -> provider.lock(readme("report")));
      ours.unlock(); // kept for lockAtLeastFor, until the Redlock is closed
    } finally {
      holder.destroyForcibly();
    }
  }

  @Test
  void aTaskThatNodeFailuresKeptFromItsLockFailsLoudlyInsteadOfBeingSkipped() throws Throwable {
    try (Redlock redlock = Redlock.create(defaults(servers.uris()).build())) {
      LockingTaskExecutor executor =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock, namespace()));
      AtomicInteger runs = new AtomicInteger();
      for (int i = 0; i < 3; i++) {
        servers.pause(i);
      }
      try {
        assertThatThrownBy(
                () -> executor.executeWithLock((Runnable) runs::incrementAndGet, readme("report")))
            .isInstanceOf(LockUnavailableException.class)
            .hasMessageContaining(servers.address(0))
            .satisfies(
                e -> {
                  LockUnavailableException outage = (LockUnavailableException) e;
                  assertThat(outage.heldElsewhere()).isFalse();
                  // Paused: they time out (or, once a probe timed out, are held back).
                  assertThat(outage.lastOutcomes().subList(0, 3))
                      .extracting(NodeOutcome::vote)
                      .allMatch(
                          v -> v == NodeOutcome.Vote.TIMEOUT || v == NodeOutcome.Vote.HELD_BACK);
                });
      } finally {
        for (int i = 0; i < 3; i++) {
          servers.resume(i);
        }
      }
      assertThat(runs).as("runs during the outage").hasValue(0);

      // The restart guard counts the resumed nodes again at its next successful probe; until
      // then a run fails as above.
      Timing.await(
          "a run once the resumed nodes count again",
          () -> {
            try {
              executor.executeWithLock((Runnable) runs::incrementAndGet, readme("report"));
            } catch (LockUnavailableException notYet) {
              assertThat(notYet.heldElsewhere()).isFalse();
            }
            return runs.get() > 0;
          });
      assertThat(runs).as("runs once the nodes answer again").hasValue(1);
    }
  }

  @Test
  void twoApplicationsWithATaskOfTheSameNameDoNotSkipEachOther() throws Throwable {
    try (Redlock redlock = Redlock.create(defaults(servers.uris()).build())) {
      LockingTaskExecutor billing =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock, namespace()));
      LockingTaskExecutor shipping =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock, namespace()));
      AtomicInteger runs = new AtomicInteger();
      billing.executeWithLock(
          (LockingTaskExecutor.Task)
              () ->
                  elsewhere(
                      () ->
                          shipping.executeWithLock(
                              (Runnable) runs::incrementAndGet, readme("cleanup"))),
          readme("cleanup"));
      assertThat(runs).as("runs of shipping's cleanup while billing's ran").hasValue(1);
    }
  }

  @Test
  void lockExtenderGoesOnThroughASlowMajority() throws Throwable {
    CountDownLatch unconfirmed = new CountDownLatch(1);
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void extended(RedlockEvent.Extension event) {
            if (event.outcome() == RedlockEvent.ExtendOutcome.UNCONFIRMED) {
              unconfirmed.countDown();
            }
          }
        };
    try (ProxiedFleet fleet = ProxiedFleet.of(servers, new FaultLog());
        Redlock redlock = Redlock.create(defaults(fleet.urisFor("A")).listener(listener).build())) {
      LockingTaskExecutor executor =
          new DefaultLockingTaskExecutor(new RedlockLockProvider(redlock, namespace()));
      AtomicInteger extended = new AtomicInteger();
      Thread healer =
          new Thread(
              () -> {
                try {
                  unconfirmed.await(); // one slow round: then the nodes answer in time again
                } catch (InterruptedException e) {
                  return;
                } finally {
                  for (int i = 0; i < 3; i++) {
                    fleet.latency(i, Duration.ZERO, Duration.ZERO);
                  }
                }
              },
              "healer");
      try {
        executor.executeWithLock(
            (LockingTaskExecutor.Task)
                () -> {
                  for (int i = 0; i < 3; i++) {
                    fleet.latency(i, SLOW, Duration.ZERO); // > node timeout
                  }
                  healer.start();
                  LockExtender.extendActiveLock(FOURTEEN_MINUTES, FOURTEEN_MINUTES);
                  extended.incrementAndGet();
                },
            readme("report"));
      } finally {
        healer.interrupt();
        healer.join();
      }
      assertThat(unconfirmed.getCount()).as("a round too few nodes confirmed").isZero();
      assertThat(extended).as("extensions that returned").hasValue(1);
    }
  }

  @Test
  void keepAliveLockProviderGoesOnThroughASlowMajority() throws Throwable {
    CountDownLatch unconfirmed = new CountDownLatch(1);
    List<RedlockEvent.ExtendOutcome> outcomes = new CopyOnWriteArrayList<>();
    RedlockListener listener =
        new RedlockListener() {
          @Override
          public void extended(RedlockEvent.Extension event) {
            outcomes.add(event.outcome());
            if (event.outcome() == RedlockEvent.ExtendOutcome.UNCONFIRMED) {
              unconfirmed.countDown();
            }
          }
        };
    ScheduledExecutorService keepAlive = Executors.newSingleThreadScheduledExecutor();
    try (ProxiedFleet fleet = ProxiedFleet.of(servers, new FaultLog());
        Redlock redlock = Redlock.create(defaults(fleet.urisFor("A")).listener(listener).build())) {
      LockingTaskExecutor executor =
          new DefaultLockingTaskExecutor(
              new KeepAliveLockProvider(new RedlockLockProvider(redlock, namespace()), keepAlive));
      Thread healer =
          new Thread(
              () -> {
                try {
                  unconfirmed.await();
                } catch (InterruptedException e) {
                  return;
                } finally {
                  for (int i = 0; i < 3; i++) {
                    fleet.latency(i, Duration.ZERO, Duration.ZERO);
                  }
                }
              },
              "healer");
      // KeepAliveLockProvider's smallest lockAtMostFor: it extends every 15 s.
      Duration thirtySeconds = Duration.ofSeconds(30);
      try {
        executor.executeWithLock(
            (LockingTaskExecutor.Task)
                () -> {
                  for (int i = 0; i < 3; i++) {
                    fleet.latency(i, SLOW, Duration.ZERO); // > node timeout
                  }
                  healer.start();
                  Timing.await(
                      "the keep-alive to extend the lock after a slow round",
                      thirtySeconds,
                      () -> outcomes.contains(RedlockEvent.ExtendOutcome.EXTENDED));
                },
            new LockConfiguration(ClockProvider.now(), "report", thirtySeconds, Duration.ZERO));
      } finally {
        healer.interrupt();
        healer.join();
        keepAlive.shutdownNow();
      }
      assertThat(outcomes)
          .as("extension outcomes")
          .startsWith(RedlockEvent.ExtendOutcome.UNCONFIRMED)
          .contains(RedlockEvent.ExtendOutcome.EXTENDED)
          .doesNotContain(RedlockEvent.ExtendOutcome.LOST);
    }
  }
}
