package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockListener;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of a {@link Redlock} bean from the {@code redlock.*} properties ({@link
 * RedlockProperties}), made only when {@code redlock.nodes} is set and the application defines
 * no {@code Redlock} of its own. Every {@link RedlockListener} bean listens to it, among them a
 * {@link RedlockNodeStatus} for the health indicator. The bean is closed with the context.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass(Redlock.class)
@EnableConfigurationProperties(RedlockProperties.class)
public class RedlockAutoConfiguration {

  /** Used by Spring. */
  public RedlockAutoConfiguration() {}

  /**
   * The {@code Redlock} of the properties and the node status it reports to, made together
   * or not at all: only when {@code redlock.nodes} is set and the application defines no
   * {@code Redlock} of its own (whose events a node status made here would never hear). The
   * conditions are on the class, so they are decided before either bean is registered,
   * whatever the order of the methods.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(Redlock.class)
  @Conditional(OnRedlockNodesCondition.class)
  static class FromProperties {

    /**
     * Tracks the nodes held back from the quorum, for the health indicator; backs off for a
     * {@code RedlockNodeStatus} of the application's, which then listens in its place.
     */
    @Bean
    @ConditionalOnMissingBean
    RedlockNodeStatus redlockNodeStatus() {
      return new RedlockNodeStatus();
    }

    /**
     * The {@code Redlock} of the {@code redlock.*} properties, with every listener bean.
     *
     * @throws IllegalStateException naming the property that is refused
     */
    @Bean(destroyMethod = "close")
    Redlock redlock(RedlockProperties properties, ObjectProvider<RedlockListener> listeners) {
      RedlockConfig checked = properties.toConfig();
      RedlockConfig.Builder builder = checked.toBuilder();
      List<RedlockListener> all = listeners.orderedStream().toList();
      for (RedlockListener listener : all) {
        builder.listener(listener);
      }
      return Redlock.create(builder.build());
    }
  }
}
