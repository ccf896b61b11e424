package io.redlock.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.redlock.Redlock;
import io.redlock.micrometer.RedlockMetrics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of the Micrometer meters of the auto-configured {@link Redlock}, when
 * {@code redlock-micrometer} is on the class path and there is a {@link MeterRegistry} bean:
 *
 * <ul>
 *   <li>{@link RedlockMetrics}, the listener of the auto-configured {@code Redlock} (so only
 *       when {@code redlock.nodes} is set and the application defines neither a {@code
 *       RedlockMetrics} nor a {@code Redlock} of its own: meters nothing listens to would stay
 *       at zero). With the context's {@link ObservationRegistry}, when there is one, each
 *       acquisition is an observation, and the acquisition timer is the one the registry's
 *       meter handler makes of it: one timer per acquisition, with a span when a tracing
 *       bridge is present.
 * </ul>
 *
 * The gauges of the nodes come from {@link RedlockNodeGaugesAutoConfiguration}, for the
 * application's own {@code Redlock} too.
 *
 * @since 0.1.0
 */
@AutoConfiguration(
    before = RedlockAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
      "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
    })
@ConditionalOnClass({RedlockMetrics.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
public class RedlockMetricsAutoConfiguration {

  /** Used by Spring. */
  public RedlockMetricsAutoConfiguration() {}

  /**
   * The meters, registered in {@code registry}; acquisitions observed in the context's
   * observation registry when it has one.
   */
  @Bean
  @ConditionalOnMissingBean({RedlockMetrics.class, Redlock.class})
  @Conditional(OnRedlockNodesCondition.class)
  public RedlockMetrics redlockMetrics(
      MeterRegistry registry, ObjectProvider<ObservationRegistry> observations) {
    RedlockMetrics.Builder builder = RedlockMetrics.builder(registry);
    observations.ifUnique(builder::observationRegistry);
    return builder.build();
  }
}
