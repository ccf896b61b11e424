package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The function that keeps node URI passwords out of the actuator's endpoints, on Boot 3.5's
 * actuator (the application tests run it through the real endpoint on 3.5 and 4.0).
 */
class RedlockNodesSanitizingFunctionTest {
  private final SanitizingFunction function = new RedlockNodesSanitizingFunction();

  private Object shown(String key, Object value) {
    return function.apply(new SanitizableData(null, key, value)).getValue();
  }

  @Test
  void masksThePasswordsOfEveryFormOfTheNodesKey() {
    String two = "redis://app:pw1@h:1,rediss://:pw2@h:2/0";
    assertThat(shown("redlock.nodes", two)).isEqualTo("redis://app:****@h:1,rediss://:****@h:2/0");
    assertThat(shown("redlock.nodes[1]", "redis://pw3@h:3")).isEqualTo("redis://****@h:3");
    assertThat(shown("REDLOCK_NODES", two)).isEqualTo("redis://app:****@h:1,rediss://:****@h:2/0");
    assertThat(shown("REDLOCK_NODES_0_", "redis://u:pw@h")).isEqualTo("redis://u:****@h");
  }

  @Test
  void masksThePasswordPropertyWhole() {
    assertThat(shown("redlock.password", "s3cret")).isEqualTo(SanitizableData.SANITIZED_VALUE);
    assertThat(shown("REDLOCK_PASSWORD", "s3cret")).isEqualTo(SanitizableData.SANITIZED_VALUE);
    assertThat(shown("redlock.password-file", "/run/secrets/pw")).isEqualTo("/run/secrets/pw");
  }

  @Test
  void leavesOtherKeysAndURIsWithoutPasswordAlone() {
    assertThat(shown("redlock.nodes", "redis://h:1,redis://h:2"))
        .isEqualTo("redis://h:1,redis://h:2");
    assertThat(shown("spring.data.redis.url", "redis://u:pw@h")).isEqualTo("redis://u:pw@h");
    assertThat(shown("redlock.nodes-extra", "redis://u:pw@h")).isEqualTo("redis://u:pw@h");
  }

  @Test
  void isABeanWithTheActuatorAndNoneWithoutIt() {
    ApplicationContextRunner runner =
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedlockSanitizingAutoConfiguration.class));
    runner.run(context -> assertThat(context).hasBean("redlockNodesSanitizingFunction"));
    runner
        .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
        .run(context -> assertThat(context).doesNotHaveBean("redlockNodesSanitizingFunction"));
    SanitizingFunction own = data -> data;
    runner
        .withBean("redlockNodesSanitizingFunction", SanitizingFunction.class, () -> own)
        .run(context -> assertThat(context.getBean(SanitizingFunction.class)).isSameAs(own));
  }
}
