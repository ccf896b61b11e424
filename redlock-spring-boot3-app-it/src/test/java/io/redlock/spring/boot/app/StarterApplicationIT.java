package io.redlock.spring.boot.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.netty.util.Version;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.spring.boot.RedlockProperties;
import io.redlock.testkit.RedisServers;
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
 * RedlockProperties.getNodes()} still returns to the application.
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
      }
    }
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as(name).isNotNull();
    return value;
  }
}
