package io.redlock.spring.boot;

import io.redlock.RedlockConfig;

/**
 * Changes the {@link RedlockConfig.Builder} of the auto-configured {@code Redlock} before it is
 * built: for settings the {@code redlock.*} properties do not have (a {@link
 * io.redlock.TlsSettings} made in code, a listener that is not a bean) or that an application
 * computes. Every bean of this type is called, in their {@link
 * org.springframework.core.annotation.Order order}, after the properties, the SSL bundle and
 * every {@link io.redlock.RedlockListener} bean were applied; the configuration is checked once
 * they all ran.
 *
 * <pre>{@code
 * @Bean
 * RedlockConfigCustomizer fencedLocks() {
 *   return builder -> builder.fencing(true);
 * }
 * }</pre>
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RedlockConfigCustomizer {

  /** Changes {@code builder}, which holds the settings applied so far. */
  void customize(RedlockConfig.Builder builder);
}
