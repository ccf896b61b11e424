package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of {@link RedlockLocked}: the beans with locked methods are proxied, when
 * there is one {@code Redlock} bean. Needs Spring AOP, which every Spring application context
 * has ({@code spring-context} depends on it); AspectJ and {@code spring-boot-starter-aop} are
 * not needed.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(
    name =
        "org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor")
@ConditionalOnSingleCandidate(Redlock.class)
public class RedlockLockedAutoConfiguration {

  /** Used by Spring. */
  public RedlockLockedAutoConfiguration() {}

  /**
   * The post-processor that proxies beans with {@link RedlockLocked} methods; static, so that
   * it is made before the other beans, and the {@code Redlock} is looked up at the first locked
   * call.
   *
   * <p>Beans are proxied by class (CGLIB) unless {@code spring.aop.proxy-target-class} is
   * {@code false}, as Spring Boot does for its own proxies.
   *
   * @param redlock the {@code Redlock} bean
   * @param environment for {@code spring.aop.proxy-target-class}
   * @return the post-processor
   */
  @Bean
  public static BeanPostProcessor redlockLockedPostProcessor(
      ObjectProvider<Redlock> redlock, Environment environment) {
    RedlockLockedPostProcessor processor = new RedlockLockedPostProcessor(redlock);
    processor.setProxyTargetClass(
        environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
    return processor;
  }
}
