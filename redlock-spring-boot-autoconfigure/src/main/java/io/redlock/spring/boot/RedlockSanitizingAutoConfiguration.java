package io.redlock.spring.boot;

import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Keeps the passwords written in {@code redlock.nodes} URIs out of the actuator's endpoints:
 * a {@link SanitizingFunction} that masks them ({@code redis://user:****@host:6379}) in
 * {@code /actuator/configprops} and {@code /actuator/env}, whatever their {@code show-values}
 * setting, and the value of {@code redlock.password} in {@code /actuator/env} (Spring Boot 3.5
 * and 4.0 show it there as written once values are shown; {@code configprops} never shows it,
 * for {@link RedlockProperties} has no getter for it).
 * Made when Spring Boot's actuator is on the class path, on Boot 3.5 and 4.0; backs off for a
 * bean of the application's named {@code redlockNodesSanitizingFunction}.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.SanitizingFunction")
public class RedlockSanitizingAutoConfiguration {

  /** Used by Spring. */
  public RedlockSanitizingAutoConfiguration() {}

  /** The function that masks the node URIs' passwords and {@code redlock.password}. */
  @Bean
  @ConditionalOnMissingBean(name = "redlockNodesSanitizingFunction")
  SanitizingFunction redlockNodesSanitizingFunction() {
    return new RedlockNodesSanitizingFunction();
  }
}
