package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.spring.integration.RedlockLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configuration of a Spring Integration {@link LockRegistry} over the {@link Redlock} bean,
 * with the key {@code redlock.lock-registry.key} (by default {@code
 * redlock-registry:<spring.application.name>}), when {@code redlock-spring-integration} is on
 * the class path, there is one {@code Redlock} bean, and the application defines no {@code
 * LockRegistry} of its own.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({RedlockLockRegistry.class, LockRegistry.class})
@ConditionalOnSingleCandidate(Redlock.class)
public class RedlockLockRegistryAutoConfiguration {

  /** Used by Spring. */
  public RedlockLockRegistryAutoConfiguration() {}

  /** The lock registry over {@code redlock}. */
  @Bean
  @ConditionalOnMissingBean(LockRegistry.class)
  public RedlockLockRegistry redlockLockRegistry(
      Redlock redlock, RedlockProperties properties, Environment environment) {
    return new RedlockLockRegistry(
        redlock,
        properties.getLockRegistry().keyFor(environment.getProperty("spring.application.name")));
  }
}
