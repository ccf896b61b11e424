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
   * Tracks the nodes held back from the quorum, for the health indicator: only when the
   * {@code Redlock} below is made (declared first, so an application's own {@code Redlock},
   * whose events it would never hear, is all this condition can see).
   */
  @Bean
  @ConditionalOnMissingBean({RedlockNodeStatus.class, Redlock.class})
  @Conditional(OnRedlockNodesCondition.class)
  public RedlockNodeStatus redlockNodeStatus() {
    return new RedlockNodeStatus();
  }

  /**
   * The {@code Redlock} of the {@code redlock.*} properties, with every listener bean.
   *
   * @throws IllegalStateException naming the property that is refused
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  @Conditional(OnRedlockNodesCondition.class)
  public Redlock redlock(RedlockProperties properties, ObjectProvider<RedlockListener> listeners) {
    RedlockConfig checked = properties.toConfig();
    RedlockConfig.Builder builder = checked.toBuilder();
    List<RedlockListener> all = listeners.orderedStream().toList();
    for (RedlockListener listener : all) {
      builder.listener(listener);
    }
    return Redlock.create(builder.build());
  }
}
