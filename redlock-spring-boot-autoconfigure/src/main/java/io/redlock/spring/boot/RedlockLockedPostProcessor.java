package io.redlock.spring.boot;

import io.redlock.Redlock;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies the beans that have {@link RedlockLocked} methods, with {@link
 * RedlockLockedInterceptor} as advice, the way Spring's {@code @Async} and method validation
 * do: with Spring AOP alone, no AspectJ and no auto-proxy creator. The advisor goes in front of
 * a proxy's existing advisors, so that the lock is taken outside a transaction, for example.
 * Every locked method of a bean is read and checked when the bean is proxied: a setting that is
 * not accepted fails the application's start.
 *
 * <p>Not thread-safe while the context starts (as every bean post-processor); its interceptor
 * is.
 */
final class RedlockLockedPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private static final long serialVersionUID = 1L;

  private final transient ObjectProvider<Redlock> redlock;
  private transient RedlockLockedInterceptor interceptor;

  RedlockLockedPostProcessor(ObjectProvider<Redlock> redlock) {
    this.redlock = redlock;
    setBeforeExistingAdvisors(true);
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    ConfigurableBeanFactory configurable =
        beanFactory instanceof ConfigurableBeanFactory c ? c : null;
    interceptor =
        new RedlockLockedInterceptor(
            redlock::getObject,
            new BeanFactoryResolver(beanFactory),
            text -> configurable == null ? text : configurable.resolveEmbeddedValue(text));
    this.advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, RedlockLocked.class, true), interceptor);
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> targetClass = AopUtils.getTargetClass(bean);
    if (!isEligible(targetClass)) {
      return bean; // no locked method (the answer is cached per class)
    }
    try {
      ReflectionUtils.doWithMethods(targetClass, method -> interceptor.locked(method, targetClass));
    } catch (IllegalStateException e) {
      throw new BeanInitializationException(
          "bean '" + beanName + "' has a @RedlockLocked method that is not accepted", e);
    }
    return super.postProcessAfterInitialization(bean, beanName);
  }
}
