package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.shedlock.RedlockLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of a ShedLock {@link LockProvider} over the {@link Redlock} bean, when
 * {@code redlock-shedlock} is on the class path, there is one {@code Redlock} bean, and the
 * application defines no {@code LockProvider} of its own. Its lock names are in the namespace
 * {@code redlock.shedlock.namespace}, by default {@code shedlock:<spring.application.name>}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({RedlockLockProvider.class, LockProvider.class})
@ConditionalOnSingleCandidate(Redlock.class)
public class RedlockShedLockAutoConfiguration {

  /** Used by Spring. */
  public RedlockShedLockAutoConfiguration() {}

  /** The ShedLock provider over {@code redlock}, in the configured namespace. */
  @Bean
  @ConditionalOnMissingBean(LockProvider.class)
  public RedlockLockProvider redlockLockProvider(
      Redlock redlock, RedlockProperties properties, Environment environment) {
    return new RedlockLockProvider(
        redlock,
        properties.getShedlock().namespaceFor(environment.getProperty("spring.application.name")));
  }
}
