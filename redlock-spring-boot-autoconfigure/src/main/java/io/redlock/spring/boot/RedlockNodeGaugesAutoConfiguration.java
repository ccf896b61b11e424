package io.redlock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlock.Redlock;
import io.redlock.micrometer.RedlockNodeGauges;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of {@link RedlockNodeGauges} ({@code redlock.nodes.reachable}, {@code
 * redlock.nodes.counted}, {@code redlock.nodes.quorum}) for the one {@link Redlock} bean, the
 * auto-configured one or the application's own, when {@code redlock-micrometer} and Micrometer
 * are on the class path. The gauges read {@link Redlock#nodeStates()} and need no listener. A
 * {@code MeterBinder} bean: Spring Boot's metrics auto-configuration binds it to the meter
 * registry. Backs off for a {@code RedlockNodeGauges} bean of the application's.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass({RedlockNodeGauges.class, MeterRegistry.class})
@ConditionalOnSingleCandidate(Redlock.class)
public class RedlockNodeGaugesAutoConfiguration {

  /** Used by Spring. */
  public RedlockNodeGaugesAutoConfiguration() {}

  /** The gauges of {@code redlock}'s nodes. */
  @Bean
  @ConditionalOnMissingBean
  public RedlockNodeGauges redlockNodeGauges(Redlock redlock) {
    return new RedlockNodeGauges(redlock);
  }
}
