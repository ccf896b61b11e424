package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Redlock;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The {@code redlock} health indicator against three real nodes, two of which restart: the
 * restart guard holds them back, and the indicator counts them out, and goes DOWN once the
 * counted nodes no longer reach the quorum. Read through reflection, since the indicator's
 * type differs between the two Spring Boot lines this runs on.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockHealthIT {
  private static final String INDICATOR = "redlockHealthIndicator";

  private RedisServers servers;
  private ApplicationContextRunner runner;

  @BeforeEach
  void start() {
    servers = RedisServers.startFresh(3); // declared fresh: the restart guard counts them
    runner =
        new ApplicationContextRunner()
            .withConfiguration(
                AutoConfigurations.of(
                    RedlockAutoConfiguration.class, RedlockHealthAutoConfiguration.class))
            .withPropertyValues(
                "redlock.nodes=" + String.join(",", servers.uris()),
                // tryAcquire makes one attempt: what is tested is the indicator, not how fast
                // a loaded machine answers within the default 50 ms
                "redlock.node-timeout=500ms");
  }

  @AfterEach
  void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void countsTheNodesTheRestartGuardHoldsBackAndGoesDownBelowTheQuorum() {
    runner.run(
        context -> {
          Object indicator = context.getBean(INDICATOR);
          assertThat(lineHealthIndicatorType().isInstance(indicator)).isTrue();
          Redlock redlock = context.getBean(Redlock.class);
          redlock.tryAcquire("health").orElseThrow().close();
          assertThat(status(context)).isEqualTo("UP");
          assertThat(details(context))
              .containsEntry("nodes", 3)
              .containsEntry("quorum", 2)
              .containsEntry("counted", 3)
              .containsEntry("heldBack", Map.of());

          servers.restart(0);
          Timing.await(
              "node 0 held back",
              () -> {
                tryOnce(redlock);
                return Integer.valueOf(2).equals(details(context).get("counted"));
              });
          assertThat(status(context)).isEqualTo("UP");
          @SuppressWarnings("unchecked")
          Map<Integer, String> heldBack = (Map<Integer, String>) details(context).get("heldBack");
          assertThat(heldBack).containsOnlyKeys(0);
          assertThat(heldBack.get(0)).contains(String.valueOf(servers.port(0)));

          servers.restart(1);
          Timing.await(
              "nodes 0 and 1 held back",
              () -> {
                tryOnce(redlock);
                return Integer.valueOf(1).equals(details(context).get("counted"));
              });
          assertThat(status(context)).isEqualTo("DOWN");
        });
  }

  @Test
  void backsOffForTheApplicationsOwnAndCanBeTurnedOff() {
    Object own = new Object();
    runner
        .withBean(INDICATOR, Object.class, () -> own)
        .run(context -> assertThat(context.getBean(INDICATOR)).isSameAs(own));
    runner
        .withPropertyValues("management.health.redlock.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(INDICATOR));
  }

  @Test
  void withoutNodesThereIsNoIndicator() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                RedlockAutoConfiguration.class, RedlockHealthAutoConfiguration.class))
        .run(context -> assertThat(context).doesNotHaveBean(INDICATOR));
  }

  private static void tryOnce(Redlock redlock) {
    try {
      redlock.tryAcquire("health").ifPresent(lease -> lease.close());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static Class<?> lineHealthIndicatorType() throws ClassNotFoundException {
    String line = System.getProperty("redlock.test.spring-boot");
    assertThat(line).as("redlock.test.spring-boot").isNotNull();
    return Class.forName(
        line.startsWith("3.")
            ? "org.springframework.boot.actuate.health.HealthIndicator"
            : "org.springframework.boot.health.contributor.HealthIndicator");
  }

  private static Object health(ApplicationContext context) {
    Object indicator = context.getBean(INDICATOR);
    try {
      return lineHealthIndicatorType().getMethod("health").invoke(indicator);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  private static String status(ApplicationContext context) {
    Object health = health(context);
    try {
      return health.getClass().getMethod("getStatus").invoke(health).toString();
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> details(ApplicationContext context) {
    Object health = health(context);
    try {
      return (Map<String, Object>) health.getClass().getMethod("getDetails").invoke(health);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }
}
