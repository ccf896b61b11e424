package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.testkit.RedisServers;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Two real Spring Boot applications, as two instances of one service, against the same three
 * real nodes: the auto-configuration is found through its registration file, every bean is
 * there, the instances exclude each other, and closing the context closes the {@code Redlock}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SpringBootApplicationIT {
  private static RedisServers servers;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(ReportJob.class)
  static class App {}

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

  private static ConfigurableApplicationContext instance() {
    return new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .properties(
            "redlock.nodes=" + String.join(",", servers.uris()),
            "redlock.ttl=10s",
            // The jobs and the check below make one attempt each; what this tests is the
            // application, not how fast a loaded machine answers within the default 50 ms.
            "redlock.node-timeout=500ms")
        .run();
  }

  @Test
  void twoInstancesShareTheLockAndClosingTheContextClosesTheRedlock() throws Exception {
    Redlock first;
    try (ConfigurableApplicationContext a = instance();
        ConfigurableApplicationContext b = instance()) {
      first = a.getBean(Redlock.class);
      assertThat(first.config().ttl()).hasSeconds(10);
      assertThat(a.getBean(LockRegistry.class)).isNotNull();
      assertThat(a.getBeansOfType(net.javacrumbs.shedlock.core.LockProvider.class)).hasSize(1);
      assertThat(a.containsBean("redlockHealthIndicator")).isTrue();

      ReportJob jobA = a.getBean(ReportJob.class);
      ReportJob jobB = b.getBean(ReportJob.class);
      assertThat(jobA.runOnce()).isTrue();
      try (Lease held = b.getBean(Redlock.class).tryAcquire("report").orElseThrow()) {
        assertThat(jobA.runOnce()).isFalse();
      }
      assertThat(jobB.runOnce()).isTrue();
      assertThat(jobA.reports.get()).isEqualTo(1);
      assertThat(jobB.reports.get()).isEqualTo(1);
    }
    Redlock closed = first;
    assertThatThrownBy(() -> closed.tryAcquire("report")).isInstanceOf(IllegalStateException.class);
  }
}
