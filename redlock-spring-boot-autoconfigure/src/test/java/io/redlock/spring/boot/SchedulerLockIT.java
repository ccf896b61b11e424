package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.shedlock.RedlockLockProvider;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.support.TaskUtils;

/**
 * ShedLock as Spring applications use it: {@code @EnableSchedulerLock(defaultLockAtMostFor =
 * "10m")} and {@code @SchedulerLock(lockAtMostFor = "14m", lockAtLeastFor = "14m")} on
 * {@code @Scheduled} methods, in real Spring Boot applications whose {@code LockProvider} is the
 * starter's, over a {@code Redlock} with the default configuration but for a patient node
 * timeout (500 ms). Runs on Boot 3.5 with
 * ShedLock 6 and on Boot 4.0 with ShedLock 7.
 *
 * <p>The schedules tick every 100 ms rather than at night; a counter of ticks outside the lock
 * is the clock the tests wait on.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SchedulerLockIT {
  private static RedisServers servers;

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3); // declared fresh: the restart guard counts them
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  /** Errors of scheduled runs, recorded and then logged at ERROR as Spring does by default. */
  static final class Errors {
    final List<Throwable> seen = new CopyOnWriteArrayList<>();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "10m")
  static class Scheduling {
    @Bean
    Errors errors() {
      return new Errors();
    }

    @Bean
    ThreadPoolTaskScheduler taskScheduler(Errors errors) {
      ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
      scheduler.setPoolSize(2);
      scheduler.setThreadNamePrefix("scheduling-");
      scheduler.setErrorHandler(
          error -> {
            errors.seen.add(error);
            TaskUtils.LOG_AND_SUPPRESS_ERROR_HANDLER.handleError(error);
          });
      return scheduler;
    }
  }

  /** The task of ShedLock's README. */
  static class ReadmeJob {
    final AtomicInteger ticks = new AtomicInteger();
    final AtomicInteger runs = new AtomicInteger();

    @Scheduled(fixedDelay = 100)
    public void tick() {
      ticks.incrementAndGet();
    }

    @Scheduled(fixedDelay = 100)
    @SchedulerLock(name = "scheduledTaskName", lockAtMostFor = "14m", lockAtLeastFor = "14m")
    public void scheduledTask() {
      runs.incrementAndGet();
    }

    // Read through methods: the bean is ShedLock's proxy, whose own fields are unset.
    public int runs() {
      return runs.get();
    }

    public int ticks() {
      return ticks.get();
    }
  }

  static class ReadmeApp extends Scheduling {
    @Bean
    ReadmeJob readmeJob() {
      return new ReadmeJob();
    }
  }

  /** A task with the default lockAtMostFor and no lockAtLeastFor: it runs on every tick. */
  static class SyncJob {
    final AtomicInteger runs = new AtomicInteger();

    @Scheduled(fixedDelay = 100)
    @SchedulerLock(name = "sync")
    public void sync() {
      runs.incrementAndGet();
    }

    public int runs() {
      return runs.get();
    }
  }

  static class SyncApp extends Scheduling {
    @Bean
    SyncJob syncJob() {
      return new SyncJob();
    }
  }

  private static ConfigurableApplicationContext instance(Class<?> app, String name) {
    return new SpringApplicationBuilder(app)
        .web(WebApplicationType.NONE)
        .properties(
            "spring.application.name=" + name,
            "redlock.nodes=" + String.join(",", servers.uris()),
            // A run is one attempt, and one that a loaded machine answers later than the
            // default 50 ms now fails loudly; the node timeout is not what this tests.
            "redlock.node-timeout=500ms")
        .run();
  }

  @Test
  void theReadmeTaskRunsOnceOnTwoInstancesForLockAtLeastFor() throws Exception {
    String name = "reports-" + UUID.randomUUID();
    try (ConfigurableApplicationContext a = instance(ReadmeApp.class, name);
        ConfigurableApplicationContext b = instance(ReadmeApp.class, name)) {
      ReadmeJob jobA = a.getBean(ReadmeJob.class);
      ReadmeJob jobB = b.getBean(ReadmeJob.class);
      assertThat(a.getBean(RedlockLockProvider.class).namespace()).isEqualTo("shedlock:" + name);

      Timing.await("a run of the task", () -> jobA.runs() + jobB.runs() > 0);
      int ticksA = jobA.ticks();
      int ticksB = jobB.ticks();
      Timing.await(
          "20 more ticks on each instance",
          () -> jobA.ticks() >= ticksA + 20 && jobB.ticks() >= ticksB + 20);

      assertThat(jobA.runs() + jobB.runs()).as("runs on both instances").isEqualTo(1);
    }
  }

  @Test
  void aRunKeptFromItsLockByAnOutageIsAnErrorAndRunsAgainAfterIt() throws Exception {
    try (ConfigurableApplicationContext app =
        instance(SyncApp.class, "sync-" + UUID.randomUUID())) {
      SyncJob job = app.getBean(SyncJob.class);
      Errors errors = app.getBean(Errors.class);
      Timing.await("a run of the task", () -> job.runs() > 0);

      servers.pause(0);
      servers.pause(1);
      int runsBefore;
      try {
        Timing.await("a scheduled run to fail", () -> !errors.seen.isEmpty());
        runsBefore = job.runs();
      } finally {
        servers.resume(0);
        servers.resume(1);
      }
      assertThat(errors.seen.get(0)).isInstanceOf(LockUnavailableException.class);
      LockUnavailableException outage = (LockUnavailableException) errors.seen.get(0);
      assertThat(outage.heldElsewhere()).isFalse();
      // Paused: they time out (or, once a probe timed out, are held back).
      assertThat(outage.lastOutcomes().subList(0, 2))
          .extracting(NodeOutcome::vote)
          .allMatch(v -> v == NodeOutcome.Vote.TIMEOUT || v == NodeOutcome.Vote.HELD_BACK);

      Timing.await(
          "a run after the nodes answer again",
          Duration.ofSeconds(10),
          () -> job.runs() > runsBefore);
    }
  }
}
