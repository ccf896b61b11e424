package io.redlock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlock.Redlock;
import io.redlock.micrometer.RedlockMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of {@link RedlockMetrics}, the Micrometer meters of the auto-configured
 * {@link Redlock}, when {@code redlock-micrometer} is on the class path, there is a {@link
 * MeterRegistry} bean, {@code redlock.nodes} is set, and the application defines neither a
 * {@code RedlockMetrics} nor a {@code Redlock} of its own (meters nothing listens to would
 * stay at zero). The auto-configured {@code Redlock} takes it as a listener.
 *
 * @since 0.1.0
 */
@AutoConfiguration(
    before = RedlockAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnClass({RedlockMetrics.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
public class RedlockMetricsAutoConfiguration {

  /** Used by Spring. */
  public RedlockMetricsAutoConfiguration() {}

  /** The meters, registered in {@code registry}. */
  @Bean
  @ConditionalOnMissingBean({RedlockMetrics.class, Redlock.class})
  @Conditional(OnRedlockNodesCondition.class)
  public RedlockMetrics redlockMetrics(MeterRegistry registry) {
    return RedlockMetrics.builder(registry).build();
  }
}
