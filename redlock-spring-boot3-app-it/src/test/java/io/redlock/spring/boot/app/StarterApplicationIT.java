package io.redlock.spring.boot.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.util.Version;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.spring.boot.RedlockProperties;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.env.EnvironmentEndpoint;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application as a user builds one: Boot's dependency management imported as a
 * BOM, {@code redlock-spring-boot-starter} and the actuator as dependencies, and nothing of
 * the project's own version choices. The same test runs in the Boot 3.5 module and the Boot
 * 4.0 module. Against three real nodes that require an ACL user: the application locks on
 * them with the Lettuce and Netty its Boot line pins, has the health indicator, and Boot's
 * {@code configprops} endpoint, asked to show values unsanitized, shows neither the password
 * of {@code redlock.password} nor the one written in a node URI, which {@code
 * RedlockProperties.getNodes()} still returns to the application; nor does the env endpoint.
 * With every node stopped, the actuator's health endpoint says DOWN for {@code redlock} and for
 * the application, and the node gauges Boot bound say why.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StarterApplicationIT {
  private static final String USER = "app";
  private static final String PASSWORD = "n0de-pa55-never-shown";

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  @Test
  void runsOnTheVersionsItsBootLinePins() {
    assertThat(SpringBootVersion.getVersion()).isEqualTo(property("redlock.test.spring-boot"));
    String lettuce =
        RedisClient.class.getPackage().getImplementationVersion(); // 6.6.0.RELEASE/hash
    assertThat(lettuce.split("/")[0]).as("Lettuce").isEqualTo(property("redlock.test.lettuce"));
    assertThat(Version.identify().get("netty-common").artifactVersion())
        .as("Netty")
        .isEqualTo(property("redlock.test.netty"));
  }

  @Test
  void locksOnRealNodesAndTheConfigpropsEndpointShowsNoPassword() throws Exception {
    try (RedisServers servers =
        RedisServers.builder().count(3).aclUser(USER, PASSWORD).fresh(true).start()) {
      List<String> nodes = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        // Two nodes name their credentials in the URI; the last takes redlock.username/password.
        String userInfo = i < 2 ? USER + ":" + PASSWORD + "@" : "";
        nodes.add("redis://" + userInfo + servers.host() + ":" + servers.port(i));
      }
      try (ConfigurableApplicationContext app =
          new SpringApplicationBuilder(App.class)
              .web(WebApplicationType.NONE)
              .properties(
                  "redlock.nodes=" + String.join(",", nodes),
                  "redlock.username=" + USER,
                  "redlock.password=" + PASSWORD,
                  "redlock.ttl=10s",
                  // One attempt below; a first command on a busy machine may take longer than
                  // the default 50 ms, and what this checks is the application, not the timeout.
                  "redlock.node-timeout=500ms")
              .run()) {
        Redlock redlock = app.getBean(Redlock.class);
        assertThat(redlock.config().nodes()).as("the URIs as written").isEqualTo(nodes);
        try (Lease lease = redlock.tryAcquire("starter-app").orElseThrow()) {
          assertThat(lease.isValid()).isTrue();
          assertThat(redlock.tryAcquire("starter-app")).as("held").isEmpty();
        }
        assertThat(app.containsBean("redlockHealthIndicator")).isTrue();
        // Timed once per acquisition: by the observation (Boot's registry has a meter handler,
        // whose timers carry its "error" tag), not a second time by the listener.
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        Timing.await(
            "the acquisitions timed",
            () ->
                registry.find("redlock.acquire").tag("outcome", "acquired").timers().stream()
                        .mapToLong(io.micrometer.core.instrument.Timer::count)
                        .sum()
                    == 1);
        assertThat(registry.find("redlock.acquire").timers())
            .allSatisfy(timer -> assertThat(timer.getId().getTag("error")).isNotNull());
        assertThat(registry.find("redlock.acquisition").meters()).isEmpty();

        ConfigurationPropertiesReportEndpoint endpoint =
            new ConfigurationPropertiesReportEndpoint(
                app.getBeanProvider(SanitizingFunction.class).orderedStream().toList(),
                Show.ALWAYS);
        endpoint.setApplicationContext(app);
        List<String> shown = new ArrayList<>();
        endpoint
            .configurationPropertiesWithPrefix("redlock")
            .getContexts()
            .values()
            .forEach(
                context ->
                    context
                        .getBeans()
                        .values()
                        .forEach(
                            bean -> {
                              shown.add(String.valueOf(bean.getProperties()));
                              shown.add(String.valueOf(bean.getInputs()));
                            }));
        String report = String.join("\n", shown);
        assertThat(report)
            .as("what configprops shows (values unsanitized)")
            .contains("redis://" + USER + ":****@" + servers.host() + ":" + servers.port(0))
            .contains("username=app")
            .doesNotContain(PASSWORD);
        // while the application itself reads the URIs back as it wrote them
        assertThat(app.getBean(RedlockProperties.class).getNodes())
            .as("RedlockProperties.getNodes()")
            .isEqualTo(nodes);

        // /actuator/env, asked to show values: redlock.password and the URIs' passwords
        // masked by the starter's function; Boot itself masks no key by its name.
        EnvironmentEndpoint env =
            new EnvironmentEndpoint(
                app.getEnvironment(),
                app.getBeanProvider(SanitizingFunction.class).orderedStream().toList(),
                Show.ALWAYS);
        assertThat(env.environmentEntry("redlock.password").getProperty().getValue())
            .isEqualTo("******");
        assertThat(env.environmentEntry("redlock.nodes").getProperty().getValue().toString())
            .contains(USER + ":****@")
            .doesNotContain(PASSWORD);
        assertThat(
                new EnvironmentEndpoint(app.getEnvironment(), List.of(), Show.ALWAYS)
                    .environmentEntry("redlock.password")
                    .getProperty()
                    .getValue())
            .as("Boot's env endpoint without the starter's function")
            .isEqualTo(PASSWORD);
      }
    }
  }

  @Test
  void theHealthIsDownWithEveryNodeStoppedAndTheGaugesSayWhy() throws Exception {
    try (RedisServers servers = RedisServers.startFresh(3)) {
      try (ConfigurableApplicationContext app =
          new SpringApplicationBuilder(App.class)
              .web(WebApplicationType.NONE)
              .properties(
                  "redlock.nodes=" + String.join(",", servers.uris()),
                  "management.endpoint.health.show-details=always")
              .run()) {
        Object health = app.getBean("healthEndpoint");
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        assertThat(app.containsBean("redlockNodeGauges")).as("the gauges' bean").isTrue();
        Timing.await("every node counted", () -> gauge(registry, "redlock.nodes.counted") == 3);
        assertThat(status(call(health, "healthForPath", "redlock"))).isEqualTo("UP");
        assertThat(status(call(health, "health"))).isEqualTo("UP");

        for (int i = 0; i < servers.size(); i++) {
          servers.stop(i);
        }
        // Each node's probe notices its own node's loss: the health is DOWN as soon as fewer
        // than a quorum answer, which may be before the last node's probe has failed. Wait for
        // all three, which the gauge shows.
        Timing.await(
            "every node unreachable", () -> gauge(registry, "redlock.nodes.reachable") == 0);
        assertThat(status(call(health, "healthForPath", "redlock"))).isEqualTo("DOWN");
        assertThat(status(call(health, "health")))
            .as("the application's health, which a load balancer reads")
            .isEqualTo("DOWN");
        Object details = call(call(health, "healthForPath", "redlock"), "getDetails");
        assertThat(details.toString())
            .contains("reachable=0", "counted=0")
            .doesNotContain("status=COUNTED", "reachable=true", servers.password());
        assertThat(details.toString().split("UNREACHABLE", -1)).as("nodes UNREACHABLE").hasSize(4);
        assertThat(gauge(registry, "redlock.nodes.counted")).isZero();
        assertThat(gauge(registry, "redlock.nodes.quorum")).isEqualTo(2);
      }
    }
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }

  /**
   * Calls a public method by name: the health endpoint and what it answers are of other types
   * on each Boot line ({@code HealthComponent} on 3.5, {@code HealthDescriptor} on 4.0).
   */
  private static Object call(Object target, String method, String... path) {
    try {
      return path.length == 0
          ? target.getClass().getMethod(method).invoke(target)
          : target.getClass().getMethod(method, String[].class).invoke(target, (Object) path);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  private static String status(Object health) {
    return call(health, "getStatus").toString();
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as(name).isNotNull();
    return value;
  }
}
