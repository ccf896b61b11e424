package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@code redlock} health indicator of the {@link Redlock} bean, the
 * auto-configured one or the application's own, from {@link Redlock#nodeStates()}: what the
 * restart guard's probes (once a second) and the connections' events tell, with no request of
 * its own. UP while at least a quorum of the nodes answer and count; DOWN while fewer than a
 * quorum answer and count even with the nodes held back after a restart; in between (a
 * majority restart: the nodes answer, but the restart guard holds back so many that no quorum
 * counts until they have been seen for its window) {@code
 * management.health.redlock.held-back-status}, UP by default, so that a restart of the Redis
 * nodes does not take every instance of the application out of service. The details give the
 * quorum, how many nodes are reachable and counted, whether locks are available, and each
 * node's address, reachability, whether it counts, its status and the reason.
 *
 * <p>One artifact serves both Spring Boot lines: the indicator for Boot 3.5's actuator health
 * API and the one for Boot 4.0's {@code spring-boot-health} are in separate configurations,
 * each made only when its line's {@code HealthIndicator} type is present. Made when there is
 * one {@code Redlock} bean (or one primary); on or off by {@code
 * management.health.redlock.enabled}, else by {@code management.health.defaults.enabled}, as
 * Boot's own indicators; backs off for a bean of the application's named {@code
 * redlockHealthIndicator}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(Redlock.class)
@ConditionalOnSingleCandidate(Redlock.class)
@Conditional(OnRedlockHealthEnabledCondition.class)
@EnableConfigurationProperties(RedlockHealthProperties.class)
public class RedlockHealthAutoConfiguration {

  /** Used by Spring. */
  public RedlockHealthAutoConfiguration() {}

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  static class Boot3 {
    @Bean
    @ConditionalOnMissingBean(name = "redlockHealthIndicator")
    Boot3RedlockHealthIndicator redlockHealthIndicator(
        Redlock redlock, RedlockHealthProperties properties) {
      return new Boot3RedlockHealthIndicator(redlock, properties.getHeldBackStatus());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class Boot4 {
    @Bean
    @ConditionalOnMissingBean(name = "redlockHealthIndicator")
    Boot4RedlockHealthIndicator redlockHealthIndicator(
        Redlock redlock, RedlockHealthProperties properties) {
      return new Boot4RedlockHealthIndicator(redlock, properties.getHeldBackStatus());
    }
  }
}
