package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.spring.integration.RedlockDistributedLockRegistry;
import io.redlock.spring.integration.RedlockLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configuration of a Spring Integration {@link LockRegistry} over the {@link Redlock} bean,
 * with the key {@code redlock.lock-registry.key} (by default {@code
 * redlock-registry:<spring.application.name>}), when {@code redlock-spring-integration} is on
 * the class path, there is one {@code Redlock} bean, and the application defines no {@code
 * LockRegistry} of its own. On Spring Integration 7 it is a {@link
 * RedlockDistributedLockRegistry} (a {@code LockRegistry<DistributedLock>}, as Spring
 * Integration 7's own registries are), on 6.5 a {@link RedlockLockRegistry}; both are an
 * {@code AbstractRedlockLockRegistry}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({RedlockLockRegistry.class, LockRegistry.class})
@ConditionalOnSingleCandidate(Redlock.class)
public class RedlockLockRegistryAutoConfiguration {
  private static final String DISTRIBUTED_LOCK =
      "org.springframework.integration.support.locks.DistributedLock";

  /** Used by Spring. */
  public RedlockLockRegistryAutoConfiguration() {}

  private static String key(RedlockProperties properties, Environment environment) {
    return properties.getLockRegistry().keyFor(environment.getProperty("spring.application.name"));
  }

  /**
   * Spring Integration 7: the registry whose locks are {@code DistributedLock}s. Its condition
   * is read before the class is loaded, so on 6.5 the type it names is never touched.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = DISTRIBUTED_LOCK)
  static class DistributedLocks {

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    RedlockDistributedLockRegistry redlockLockRegistry(
        Redlock redlock, RedlockProperties properties, Environment environment) {
      return new RedlockDistributedLockRegistry(redlock, key(properties, environment));
    }
  }

  /** Spring Integration 6.5: the registry of plain locks. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass(DISTRIBUTED_LOCK)
  static class Locks {

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    RedlockLockRegistry redlockLockRegistry(
        Redlock redlock, RedlockProperties properties, Environment environment) {
      return new RedlockLockRegistry(redlock, key(properties, environment));
    }
  }
}
