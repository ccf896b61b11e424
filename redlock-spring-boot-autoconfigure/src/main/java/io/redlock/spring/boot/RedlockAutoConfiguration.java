package io.redlock.spring.boot;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.RedlockListener;
import io.redlock.spi.NodeTransport;
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
 * no {@code Redlock} of its own. Every {@link RedlockListener} bean listens to it; {@code
 * redlock.ssl.bundle} names a Spring Boot SSL bundle for its TLS; every {@link
 * RedlockConfigCustomizer} bean changes its builder last; and it connects through the
 * application's {@link NodeTransport} bean when there is exactly one (else through the
 * transport found on the class path). The bean is closed with the context, before the
 * transport.
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
   * The {@code Redlock} of the properties: only when {@code redlock.nodes} is set and the
   * application defines no {@code Redlock} of its own. The conditions are on the class, so
   * they are decided before the bean is registered.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(Redlock.class)
  @Conditional(OnRedlockNodesCondition.class)
  static class FromProperties {

    /**
     * The {@code Redlock} of the {@code redlock.*} properties, with every listener bean, the
     * SSL bundle, the customizers, and the transport bean if there is one.
     *
     * @throws IllegalStateException naming the property that is refused
     */
    @Bean(destroyMethod = "close")
    Redlock redlock(
        RedlockProperties properties,
        ObjectProvider<RedlockListener> listeners,
        ObjectProvider<RedlockConfigCustomizer> customizers,
        ObjectProvider<NodeTransport> transport,
        ObjectProvider<org.springframework.boot.ssl.SslBundles> sslBundles) {
      // Checked first on its own, so that a refused property is named as a property.
      RedlockConfig.Builder builder = properties.toConfig().toBuilder();
      String bundle = properties.getSsl().getBundle();
      if (bundle != null) {
        builder.tls(
            properties
                .getTls()
                .toSettings(RedlockSsl.fromBundle(bundle, sslBundles.getIfAvailable())));
      }
      listeners.orderedStream().forEach(builder::listener);
      customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
      RedlockConfig config;
      try {
        config = builder.build();
      } catch (RedlockConfigException e) {
        throw new IllegalStateException(
            "The redlock.* properties as changed by the RedlockConfigCustomizer beans are"
                + " refused: "
                + e.getMessage(),
            e);
      }
      NodeTransport own = transport.getIfUnique();
      return own != null ? Redlock.create(config, own) : Redlock.create(config);
    }
  }
}
