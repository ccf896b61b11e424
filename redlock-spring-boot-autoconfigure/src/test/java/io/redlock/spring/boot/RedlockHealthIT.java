package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.List;
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
 * The {@code redlock} health indicator against three real nodes, on the default configuration
 * (the restart guard on, the fleet declared fresh): UP with every node counted and with one
 * node down; DOWN with every node stopped, with each node's reason; after a majority restart,
 * the held-back status (UP by default, with the details saying locks are held back, or the
 * status set); Boot's enablement properties; and the application's own {@code Redlock}. Read
 * through reflection, since the indicator's type differs between the two Spring Boot lines this
 * runs on.
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
            .withPropertyValues("redlock.nodes=" + String.join(",", servers.uris()));
  }

  @AfterEach
  void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void downWithEveryNodeStoppedAndUpAgainOnceTheyAreBackAndCounted() {
    runner.run(
        context -> {
          assertThat(lineHealthIndicatorType().isInstance(context.getBean(INDICATOR))).isTrue();
          assertThat(status(context)).isEqualTo("UP");
          assertThat(details(context))
              .containsEntry("quorum", 2)
              .containsEntry("reachable", 3)
              .containsEntry("counted", 3)
              .containsEntry("locks", "available");
          assertThat(nodes(context))
              .allSatisfy(
                  node ->
                      assertThat(node)
                          .containsEntry("reachable", true)
                          .containsEntry("counted", true)
                          .containsEntry("status", "COUNTED")
                          .doesNotContainKey("reason"));

          servers.stop(2); // a minority: still UP, the node named
          Timing.await("node 2 unreachable", () -> reachable(context) == 2);
          assertThat(status(context)).isEqualTo("UP");
          assertThat(nodes(context).get(2))
              .containsEntry("node", servers.address(2))
              .containsEntry("reachable", false)
              .containsEntry("status", "UNREACHABLE");

          servers.stop(0);
          servers.stop(1);
          Timing.await("every node unreachable", () -> reachable(context) == 0);
          assertThat(status(context)).isEqualTo("DOWN");
          assertThat(details(context))
              .containsEntry("counted", 0)
              .containsEntry(
                  "locks", "unavailable: fewer than a quorum of the nodes answer and count");
          assertThat(nodes(context))
              .allSatisfy(
                  node ->
                      assertThat(node)
                          .containsEntry("status", "UNREACHABLE")
                          .containsKey("reason"));
          assertThat(nodes(context).get(0).get("reason").toString())
              .doesNotContain(servers.password());
        });
  }

  @Test
  void aMajorityRestartIsHeldBackAndStaysUpByDefaultOrAsConfigured() {
    runner
        .withPropertyValues("redlock.max-ttl=5s", "redlock.ttl=5s")
        .run(
            context -> {
              assertThat(status(context)).isEqualTo("UP");
              servers.restart(0); // restarted empty: held back for max-ttl by the guard
              servers.restart(1);
              Timing.await("nodes 0 and 1 reachable and held back", () -> heldBack(context) == 2);
              assertThat(status(context)).as("the default held-back status").isEqualTo("UP");
              assertThat(details(context))
                  .containsEntry("reachable", 3)
                  .containsEntry("counted", 1);
              assertThat(details(context).get("locks").toString()).startsWith("held back");
              assertThat(nodes(context).get(0).get("reason").toString()).contains("counts in");
              // once seen for the window, they count again by themselves
              Timing.await("nodes counted again", () -> counted(context) == 3);
              assertThat(status(context)).isEqualTo("UP");
            });
    runner
        .withPropertyValues(
            "redlock.max-ttl=5s",
            "redlock.ttl=5s",
            "management.health.redlock.held-back-status=OUT_OF_SERVICE")
        .run(
            context -> {
              servers.restart(1);
              servers.restart(2);
              // (unreachable, so DOWN, from the lost connections until their probes answer)
              Timing.await("a majority reachable and held back", () -> heldBack(context) == 2);
              assertThat(status(context)).isEqualTo("OUT_OF_SERVICE");
            });
  }

  @Test
  void theApplicationsOwnRedlockHasTheIndicatorToo() {
    try (Redlock own = Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build())) {
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  RedlockAutoConfiguration.class, RedlockHealthAutoConfiguration.class))
          .withBean("own", Redlock.class, () -> own, d -> d.setDestroyMethodName(""))
          .run(
              context -> {
                assertThat(status(context)).isEqualTo("UP");
                servers.stop(0);
                servers.stop(1);
                Timing.await("a majority unreachable", () -> reachable(context) == 1);
                assertThat(status(context)).isEqualTo("DOWN");
              });
    }
  }

  @Test
  void followsBootsEnablementPropertiesAndBacksOffForTheApplicationsOwn() {
    Object own = new Object();
    runner
        .withBean(INDICATOR, Object.class, () -> own)
        .run(context -> assertThat(context.getBean(INDICATOR)).isSameAs(own));
    runner
        .withPropertyValues("management.health.redlock.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(INDICATOR));
    runner
        .withPropertyValues("management.health.defaults.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(INDICATOR));
    runner
        .withPropertyValues(
            "management.health.defaults.enabled=false", "management.health.redlock.enabled=true")
        .run(context -> assertThat(context).hasBean(INDICATOR));
  }

  @Test
  void withoutARedlockThereIsNoIndicator() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                RedlockAutoConfiguration.class, RedlockHealthAutoConfiguration.class))
        .run(context -> assertThat(context).doesNotHaveBean(INDICATOR));
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

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> nodes(ApplicationContext context) {
    return (List<Map<String, Object>>) details(context).get("nodes");
  }

  private static int reachable(ApplicationContext context) {
    return (Integer) details(context).get("reachable");
  }

  private static long heldBack(ApplicationContext context) {
    return nodes(context).stream().filter(node -> "HELD_BACK".equals(node.get("status"))).count();
  }

  private static int counted(ApplicationContext context) {
    return (Integer) details(context).get("counted");
  }
}
