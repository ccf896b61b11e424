package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.shedlock.RedlockLockProvider;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
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

/**
 * A {@code @SchedulerLock} task reads its lease's fencing token from {@link
 * RedlockLockProvider#currentLease()}, in a Spring Boot application with the starter's provider
 * and {@code redlock.fencing=true}, against three real nodes: on Boot 3.5 with ShedLock 6 and on
 * Boot 4.0 with ShedLock 7. ShedLock's method proxy locks the call, so the test calls the task
 * directly rather than waiting for its schedule.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShedLockTokenIT {
  private static RedisServers servers;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableSchedulerLock(defaultLockAtMostFor = "10m")
  static class App {
    @Bean
    NightlyExport nightlyExport() {
      return new NightlyExport();
    }
  }

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3); // declared fresh, as fencing needs
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void eachRunOfTheTaskReadsALargerFencingToken() throws InterruptedException {
    try (ConfigurableApplicationContext app =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties(
                "redlock.nodes=" + String.join(",", servers.uris()),
                "redlock.fencing=true",
                "redlock.node-timeout=500ms") // one attempt per run: patient on a loaded machine
            .run()) {
      Redlock redlock = app.getBean(Redlock.class);
      // The nodes may connect (and be probed) after the Redlock is made on a loaded machine,
      // and each run is one attempt: start once a lock can be had.
      Timing.await(
          "the nodes are connected and counted",
          () -> {
            try {
              Optional<Lease> lease = redlock.tryAcquire("warm-up:" + UUID.randomUUID());
              lease.ifPresent(Lease::release);
              return lease.isPresent();
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
      NightlyExport export = app.getBean(NightlyExport.class);
      export.export();
      export.export();
      List<Long> tokens = export.tokens();
      assertThat(tokens).hasSize(2);
      assertThat(tokens.get(0)).isPositive();
      assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
      assertThat(RedlockLockProvider.currentLease()).as("outside the task").isEmpty();
    }
  }
}
