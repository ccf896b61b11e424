package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@code redlock} health indicator of the auto-configured {@link
 * Redlock}: UP while the nodes the restart guard does not hold back still reach the quorum,
 * DOWN otherwise; the details give the number of nodes, the quorum, how many are not held
 * back, and the nodes held back with the reason. Hold-backs are learnt from the guard's {@link
 * io.redlock.RedlockEvent.NodeHeldBack} events, which come for a node that restarted; a node
 * that is unreachable or refuses the guard's probe is not reported here.
 *
 * <p>One artifact serves both Spring Boot lines: the indicator for Boot 3.5's actuator health
 * API and the one for Boot 4.0's {@code spring-boot-health} are in separate configurations,
 * each made only when its line's {@code HealthIndicator} type is present. Off with {@code
 * management.health.redlock.enabled=false}; backs off for a bean of the application's named
 * {@code redlockHealthIndicator}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(Redlock.class)
@ConditionalOnBean({Redlock.class, RedlockNodeStatus.class})
@ConditionalOnProperty(
    prefix = "management.health.redlock",
    name = "enabled",
    matchIfMissing = true)
public class RedlockHealthAutoConfiguration {

  /** Used by Spring. */
  public RedlockHealthAutoConfiguration() {}

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class Boot3 {
    @Bean
    @ConditionalOnMissingBean(name = "redlockHealthIndicator")
    Boot3RedlockHealthIndicator redlockHealthIndicator(Redlock redlock, RedlockNodeStatus status) {
      return new Boot3RedlockHealthIndicator(redlock, status);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot4 {
    @Bean
    @ConditionalOnMissingBean(name = "redlockHealthIndicator")
    Boot4RedlockHealthIndicator redlockHealthIndicator(Redlock redlock, RedlockNodeStatus status) {
      return new Boot4RedlockHealthIndicator(redlock, status);
    }
  }
}
