package io.redlock.spring.boot;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when the redlock health indicator is enabled, by Spring Boot's convention for its own
 * indicators: {@code management.health.redlock.enabled} when set, otherwise {@code
 * management.health.defaults.enabled}, otherwise yes. (Boot's own annotation for this lives in
 * a different module and package on each Boot line.)
 */
final class OnRedlockHealthEnabledCondition extends SpringBootCondition {

  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    Environment environment = context.getEnvironment();
    Boolean own = environment.getProperty("management.health.redlock.enabled", Boolean.class);
    if (own != null) {
      return new ConditionOutcome(own, "management.health.redlock.enabled is " + own);
    }
    boolean defaults =
        environment.getProperty("management.health.defaults.enabled", Boolean.class, true);
    return new ConditionOutcome(
        defaults, "management.health.defaults.enabled is " + defaults + " (redlock's is unset)");
  }
}
