package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.micrometer.RedlockMetrics;
import io.redlock.micrometer.RedlockNodeGauges;
import io.redlock.shedlock.RedlockLockProvider;
import io.redlock.spi.NodeTransport;
import io.redlock.spring.integration.AbstractRedlockLockRegistry;
import io.redlock.spring.integration.RedlockLockRegistry;
import io.redlock.testkit.RedisServers;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ResolvableType;
import org.springframework.core.SpringVersion;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The auto-configuration in {@link ApplicationContextRunner}s against three real nodes: which
 * beans exist for which properties and class path, that each backs off for the application's
 * own, and that the beans lock on the nodes. Runs on Spring Boot 3.5 and, in a second failsafe
 * execution, on 4.0.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockAutoConfigurationIT {
  /**
   * For the tests that lock: {@code tryAcquire}, {@code tryLock} and ShedLock's provider make
   * one attempt, which a loaded machine can lose within the default 50 ms node timeout; what
   * they test is the beans, not the timeout.
   */
  private static final String PATIENT = "redlock.node-timeout=500ms";

  private static RedisServers servers;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  RedlockMetricsAutoConfiguration.class,
                  RedlockAutoConfiguration.class,
                  RedlockNodeGaugesAutoConfiguration.class,
                  RedlockShedLockAutoConfiguration.class,
                  RedlockLockRegistryAutoConfiguration.class));

  @BeforeAll
  static void start() {
    servers = RedisServers.startFresh(3); // declared fresh: the restart guard counts them
  }

  @AfterAll
  static void stop() {
    if (servers != null) {
      servers.close();
    }
  }

  private static String nodes() {
    return "redlock.nodes=" + String.join(",", servers.uris());
  }

  @Test
  void runsOnTheSpringBootLineThisExecutionNames() {
    String expected = System.getProperty("redlock.test.spring-boot");
    assertThat(expected).as("redlock.test.spring-boot").isNotNull();
    assertThat(SpringBootVersion.getVersion()).isEqualTo(expected);
    assertThat(SpringVersion.getVersion()).startsWith(expected.startsWith("3.") ? "6." : "7.");
  }

  @Test
  void withoutNodesThereIsNoRedlockNorAnythingOverIt() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).hasSingleBean(RedlockProperties.class);
          assertThat(context).doesNotHaveBean(Redlock.class);
          assertThat(context).doesNotHaveBean(LockProvider.class);
          assertThat(context).doesNotHaveBean(LockRegistry.class);
          assertThat(context).doesNotHaveBean(RedlockNodeGauges.class);
        });
  }

  @Test
  void everySettingIsBound() {
    runner
        .withPropertyValues(
            nodes(),
            "redlock.ttl=20s",
            "redlock.max-ttl=2m",
            "redlock.node-timeout=80ms",
            "redlock.connect-timeout=3s",
            "redlock.drift-factor=0.02",
            "redlock.retry-count=4",
            "redlock.retry-delay=150ms",
            "redlock.retry-jitter=50ms",
            "redlock.max-wait=5s",
            "redlock.key-prefix=app:",
            "redlock.auto-extend-threshold=0.6",
            "redlock.username=app",
            "redlock.fencing=true",
            "redlock.lock-registry.key=jobs")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              RedlockConfig config = context.getBean(Redlock.class).config();
              assertThat(config.nodes()).isEqualTo(servers.uris());
              assertThat(config.ttl()).isEqualTo(Duration.ofSeconds(20));
              assertThat(config.maxTtl()).isEqualTo(Duration.ofMinutes(2));
              assertThat(config.nodeTimeout()).isEqualTo(Duration.ofMillis(80));
              assertThat(config.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
              assertThat(config.driftFactor()).isEqualTo(0.02);
              assertThat(config.retryCount()).isEqualTo(4);
              assertThat(config.retryDelay()).isEqualTo(Duration.ofMillis(150));
              assertThat(config.retryJitter()).isEqualTo(Duration.ofMillis(50));
              assertThat(config.maxWait()).isEqualTo(Duration.ofSeconds(5));
              assertThat(config.keyPrefix()).isEqualTo("app:");
              assertThat(config.autoExtendThreshold()).isEqualTo(0.6);
              assertThat(config.username()).isEqualTo("app");
              assertThat(config.fencing()).isTrue();

              // Every setting but the guard's differs from its default (the nodes have no user
              // "app", so they refuse the connection); locking is tested with the defaults.
              assertThat(context).hasSingleBean(RedlockLockProvider.class);
            });
  }

  @Test
  void theRestartGuardSettingIsBoundAndFencingWithoutItIsRefusedByName() {
    runner
        .withPropertyValues(nodes(), "redlock.restart-guard=false")
        .run(
            context ->
                assertThat(context.getBean(Redlock.class).config().restartGuard()).isFalse());
    runner
        .withPropertyValues(nodes(), "redlock.restart-guard=false", "redlock.fencing=true")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("fencing true is not accepted with restartGuard false"));
  }

  @Test
  void theDefaultsAreRedlockConfigs() {
    runner
        .withPropertyValues(nodes())
        .run(
            context -> {
              RedlockConfig config = context.getBean(Redlock.class).config();
              RedlockConfig expected = RedlockConfig.builder().nodes(servers.uris()).build();
              assertThat(config.ttl()).isEqualTo(expected.ttl());
              assertThat(config.maxTtl()).isEqualTo(expected.maxTtl());
              assertThat(config.nodeTimeout()).isEqualTo(expected.nodeTimeout());
              assertThat(config.connectTimeout()).isEqualTo(expected.connectTimeout());
              assertThat(config.driftFactor()).isEqualTo(expected.driftFactor());
              assertThat(config.retryCount()).isEqualTo(expected.retryCount());
              assertThat(config.retryDelay()).isEqualTo(expected.retryDelay());
              assertThat(config.retryJitter()).isEqualTo(expected.retryJitter());
              assertThat(config.maxWait()).isEqualTo(expected.maxWait());
              assertThat(config.keyPrefix()).isEqualTo(expected.keyPrefix());
              assertThat(config.autoExtendThreshold()).isEqualTo(expected.autoExtendThreshold());
              assertThat(config.restartGuard()).isTrue();
              assertThat(config.fencing()).isEqualTo(expected.fencing());
              assertThat(context.getBean(AbstractRedlockLockRegistry.class).registryKey())
                  .isEqualTo("redlock-registry");
            });
  }

  @Test
  void lockNamesAreNamespacedByTheApplicationsNameUnlessSet() {
    runner
        .withPropertyValues(nodes())
        .run(
            context -> {
              assertThat(context.getBean(RedlockLockProvider.class).namespace())
                  .isEqualTo("shedlock");
              assertThat(context.getBean(AbstractRedlockLockRegistry.class).registryKey())
                  .isEqualTo("redlock-registry");
            });
    runner
        .withPropertyValues(nodes(), "spring.application.name=billing")
        .run(
            context -> {
              assertThat(context.getBean(RedlockLockProvider.class).namespace())
                  .isEqualTo("shedlock:billing");
              assertThat(context.getBean(AbstractRedlockLockRegistry.class).registryKey())
                  .isEqualTo("redlock-registry:billing");
            });
    runner
        .withPropertyValues(
            nodes(),
            "spring.application.name=billing",
            "redlock.shedlock.namespace=jobs",
            "redlock.lock-registry.key=orders")
        .run(
            context -> {
              assertThat(context.getBean(RedlockLockProvider.class).namespace()).isEqualTo("jobs");
              assertThat(context.getBean(AbstractRedlockLockRegistry.class).registryKey())
                  .isEqualTo("orders");
            });
  }

  @Test
  void theBeansLockOnTheNodes() {
    runner
        .withPropertyValues(nodes(), PATIENT, "redlock.lock-registry.key=jobs")
        .run(
            context -> {
              Redlock redlock = context.getBean(Redlock.class);
              Optional<Lease> lease = redlock.tryAcquire("boot-bound");
              assertThat(lease).isPresent();
              assertThat(redlock.tryAcquire("boot-bound")).as("held").isEmpty();
              lease.get().close();

              AbstractRedlockLockRegistry<?> registry =
                  context.getBean(AbstractRedlockLockRegistry.class);
              assertThat(registry.registryKey()).isEqualTo("jobs");
              Lock lock = registry.obtain("a");
              assertThat(lock.tryLock()).isTrue();
              lock.unlock();

              RedlockLockProvider provider = context.getBean(RedlockLockProvider.class);
              LockConfiguration job =
                  new LockConfiguration(
                      Instant.now(), "boot-job", Duration.ofSeconds(10), Duration.ZERO);
              SimpleLock held = provider.lock(job).orElseThrow();
              assertThat(provider.lock(job)).as("held").isEmpty();
              held.unlock();
            });
  }

  /**
   * Spring Integration 7 (Boot 4.0) gets the registry of {@code DistributedLock}s, which a
   * {@code LockRegistry<DistributedLock>} injection point takes; 6.5 (Boot 3.5) the plain one.
   */
  @Test
  void theRegistryIsTheDistributedLockOneOnSpringIntegration7() throws ClassNotFoundException {
    boolean si7 = System.getProperty("redlock.test.spring-boot").startsWith("4.");
    runner
        .withPropertyValues(nodes())
        .run(
            context -> {
              AbstractRedlockLockRegistry<?> registry =
                  context.getBean(AbstractRedlockLockRegistry.class);
              assertThat(registry.getClass().getSimpleName())
                  .isEqualTo(si7 ? "RedlockDistributedLockRegistry" : "RedlockLockRegistry");
              assertThat(context.getBean(LockRegistry.class)).isSameAs(registry);
              if (!si7) {
                assertThat(registry).isInstanceOf(RedlockLockRegistry.class);
              }
            });
    if (si7) {
      // What an injection point of LockRegistry<DistributedLock> resolves (this source also
      // compiles against 6.5, where neither type exists as such).
      ResolvableType distributed =
          ResolvableType.forClassWithGenerics(
              LockRegistry.class,
              Class.forName("org.springframework.integration.support.locks.DistributedLock"));
      runner
          .withPropertyValues(nodes())
          .run(
              context ->
                  assertThat(context.getBeanProvider(distributed).getIfAvailable())
                      .isSameAs(context.getBean(LockRegistry.class)));
    }
  }

  @Test
  void nodesGivenAsAnIndexedListAlsoMakeTheBean() {
    runner
        .withPropertyValues(
            "redlock.nodes[0]=" + servers.uri(0),
            "redlock.nodes[1]=" + servers.uri(1),
            "redlock.nodes[2]=" + servers.uri(2))
        .run(
            context ->
                assertThat(context.getBean(Redlock.class).config().nodes())
                    .isEqualTo(servers.uris()));
  }

  @Test
  void aRefusedSettingFailsTheContextNamingTheProperty() {
    runner
        .withPropertyValues(nodes(), "redlock.ttl=10ms", "redlock.node-timeout=50ms")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("ttl");
              assertThat(stackMessages(context.getStartupFailure())).contains("redlock.");
            });
  }

  @Test
  void theRedlockBeanBacksOffForTheApplicationsOwn() {
    try (Redlock own = Redlock.create(RedlockConfig.builder().nodes(servers.uris()).build())) {
      runner
          .withPropertyValues(nodes())
          .withBean("own", Redlock.class, () -> own, d -> d.setDestroyMethodName(""))
          .run(
              context -> {
                assertThat(context).hasSingleBean(Redlock.class);
                assertThat(context.getBean(Redlock.class)).isSameAs(own);
                // The integrations still come, over the application's Redlock.
                assertThat(context).hasSingleBean(RedlockLockProvider.class);
                assertThat(context).hasSingleBean(AbstractRedlockLockRegistry.class);
                // What only listens to the auto-configured one does not: it would hear nothing.
                assertThat(context).doesNotHaveBean(RedlockMetrics.class);
              });
      runner
          .withPropertyValues(nodes())
          .withBean("own", Redlock.class, () -> own, d -> d.setDestroyMethodName(""))
          .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
          .run(
              context -> {
                assertThat(context).doesNotHaveBean(RedlockMetrics.class);
                // The node gauges read the application's Redlock itself.
                MeterRegistry registry = context.getBean(MeterRegistry.class);
                context.getBean(RedlockNodeGauges.class).bindTo(registry);
                assertThat(registry.get("redlock.nodes.counted").gauge().value()).isEqualTo(3.0);
                assertThat(registry.get("redlock.nodes.reachable").gauge().value()).isEqualTo(3.0);
                assertThat(registry.get("redlock.nodes.quorum").gauge().value()).isEqualTo(2.0);
              });
    }
  }

  @Test
  void withoutNodesThereAreNoMeters() {
    runner
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              assertThat(context).doesNotHaveBean(Redlock.class);
              assertThat(context).doesNotHaveBean(RedlockMetrics.class);
              assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
            });
  }

  @Test
  void theProviderAndRegistryBackOffForTheApplicationsOwn() {
    LockProvider provider = configuration -> Optional.empty();
    LockRegistry registry = key -> new java.util.concurrent.locks.ReentrantLock();
    runner
        .withPropertyValues(nodes())
        .withBean(LockProvider.class, () -> provider)
        .withBean(LockRegistry.class, () -> registry)
        .run(
            context -> {
              assertThat(context.getBean(LockProvider.class)).isSameAs(provider);
              assertThat(context.getBean(LockRegistry.class)).isSameAs(registry);
              assertThat(context).doesNotHaveBean(RedlockLockProvider.class);
              assertThat(context).doesNotHaveBean(AbstractRedlockLockRegistry.class);
            });
  }

  @Test
  void withoutShedLockOrSpringIntegrationThereIsNeitherBean() {
    runner
        .withPropertyValues(nodes())
        .withClassLoader(
            new FilteredClassLoader("net.javacrumbs.shedlock", "org.springframework.integration"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Redlock.class);
              assertThat(context).doesNotHaveBean(RedlockLockProvider.class);
              assertThat(context).doesNotHaveBean(AbstractRedlockLockRegistry.class);
            });
  }

  @Test
  void withAMeterRegistryTheRedlockBeanIsMetered() {
    runner
        .withPropertyValues(nodes(), PATIENT)
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              RedlockMetrics metrics = context.getBean(RedlockMetrics.class);
              assertThat(context.getBean(Redlock.class).config().listeners()).contains(metrics);
              context.getBean(Redlock.class).tryAcquire("boot-metered").orElseThrow().close();
              assertThat(
                      context.getBean(MeterRegistry.class).find("redlock.nodes.held.back").gauge())
                  .isNotNull();
              assertThat(context.getBean(MeterRegistry.class).getMeters().size()).isGreaterThan(1);
            });
  }

  @Test
  void withoutAMeterRegistryOrAppOwnMetricsThereAreNoneOfOurs() {
    runner
        .withPropertyValues(nodes())
        .run(context -> assertThat(context).doesNotHaveBean(RedlockMetrics.class));
    RedlockMetrics own = RedlockMetrics.builder(new SimpleMeterRegistry()).build();
    runner
        .withPropertyValues(nodes())
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withBean(RedlockMetrics.class, () -> own)
        .run(context -> assertThat(context.getBean(RedlockMetrics.class)).isSameAs(own));
  }

  @Test
  void thePasswordCannotBeReadBackFromTheProperties() {
    runner
        .withPropertyValues("redlock.password=s3cret-pw")
        .run(
            context -> {
              RedlockProperties properties = context.getBean(RedlockProperties.class);
              assertThat(properties.isPasswordSet()).isTrue();
              assertThat(properties.toBuilder().nodes(servers.uris()).build().password())
                  .isEqualTo("s3cret-pw");
              for (var method : RedlockProperties.class.getMethods()) {
                if (method.getParameterCount() == 0
                    && method.getReturnType() == String.class
                    && method.getDeclaringClass() == RedlockProperties.class
                    && method.invoke(properties) != null) {
                  assertThat((String) method.invoke(properties))
                      .as(method.getName())
                      .doesNotContain("s3cret-pw");
                }
              }
              assertThat(properties.toString()).doesNotContain("s3cret-pw");
            });
  }

  @Test
  void aPasswordInANodeUriIsReadBackAsWrittenAndReachesTheConfig() {
    // The actuator's endpoints mask it: RedlockNodesSanitizingFunctionTest, and
    // StarterApplicationIT through Boot's configprops endpoint on both lines.
    List<String> written =
        List.of(
            "redis://app:uri-s3cret@127.0.0.1:6390",
            "redis://h:1",
            "rediss://:uri-s3cret@h:2/0",
            "redis://uri-s3cret@h:3");
    new ApplicationContextRunner() // the properties alone: these nodes are not reachable
        .withUserConfiguration(PropertiesOnly.class)
        .withPropertyValues(
            "redlock.nodes[0]=" + written.get(0),
            "redlock.nodes[1]=" + written.get(1),
            "redlock.nodes[2]=" + written.get(2),
            "redlock.nodes[3]=" + written.get(3))
        .run(
            context -> {
              RedlockProperties properties = context.getBean(RedlockProperties.class);
              assertThat(properties.getNodes()).isEqualTo(written);
              properties.getNodes().clear(); // a copy: the bean's own list is not changed
              assertThat(properties.getNodes()).isEqualTo(written);
              assertThat(properties.toBuilder().build().nodes()).isEqualTo(written);
              assertThat(properties.toString()).doesNotContain("uri-s3cret");
            });
  }

  @Test
  void customizersChangeTheBuilderAfterThePropertiesInTheirOrder() {
    runner
        .withPropertyValues(nodes(), "redlock.ttl=20s")
        .withBean(
            "second",
            RedlockConfigCustomizer.class,
            () -> new OrderedCustomizer(2, b -> b.ttl(Duration.ofSeconds(40))))
        .withBean(
            "first",
            RedlockConfigCustomizer.class,
            () ->
                new OrderedCustomizer(
                    1, b -> b.ttl(Duration.ofSeconds(10)).keyPrefix("customized:")))
        .run(
            context -> {
              RedlockConfig config = context.getBean(Redlock.class).config();
              assertThat(config.ttl()).as("the last customizer wins").hasSeconds(40);
              assertThat(config.keyPrefix()).isEqualTo("customized:");
            });
    runner
        .withPropertyValues(nodes())
        .withBean(RedlockConfigCustomizer.class, () -> b -> b.ttl(Duration.ofMillis(10)))
        .run(
            context -> {
              assertThat(context).getFailure().rootCause().hasMessageContaining("ttl");
              assertThat(stackMessages(context.getStartupFailure()))
                  .contains("RedlockConfigCustomizer");
            });
  }

  @Test
  void aCustomizerBeanAsTheDocsWriteIt() {
    runner
        .withPropertyValues(nodes())
        .withUserConfiguration(FencedLocks.class)
        .run(context -> assertThat(context.getBean(Redlock.class).config().fencing()).isTrue());
  }

  /** docs/integrations.md, "Spring Boot". */
  @Configuration(proxyBeanMethods = false)
  static class FencedLocks {
    @Bean
    RedlockConfigCustomizer fencedLocks() {
      return builder -> builder.fencing(true);
    }
  }

  @Test
  void anApplicationsTransportBeanIsTheOneTheRedlockConnectsThrough() {
    AtomicInteger opened = new AtomicInteger();
    runner
        .withPropertyValues(nodes(), PATIENT)
        .withBean(
            NodeTransport.class,
            () -> new CountingTransport(new io.redlock.lettuce.LettuceTransport(), opened))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(opened).as("one client per node, through the bean").hasValue(3);
              context.getBean(Redlock.class).tryAcquire("boot-transport").orElseThrow().close();
            });
  }

  @Test
  void theTlsPropertiesAreBoundAndRefusedByName() {
    runner
        .withPropertyValues(
            nodes(),
            "redlock.tls.trusted-certificates=no-such-ca.pem",
            "redlock.tls.allow-unverified=true")
        .run(
            context -> {
              assertThat(context)
                  .getFailure()
                  .rootCause()
                  .hasMessageContaining("tls.trustedCertificates is no-such-ca.pem");
              assertThat(stackMessages(context.getStartupFailure()))
                  .contains("redlock.tls.trusted-certificates");
            });
    runner
        .withPropertyValues(nodes(), "redlock.tls.client-certificate=cert.pem")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("redlock.tls.client-private-key go together"));
    runner
        .withPropertyValues(nodes(), "redlock.tls.allow-unverified=true")
        .run(
            context ->
                assertThat(context.getBean(Redlock.class).config().tls().allowUnverified())
                    .isTrue());
  }

  /** A customizer with an order, as an application declares one with {@code @Order}. */
  private record OrderedCustomizer(int order, RedlockConfigCustomizer action)
      implements RedlockConfigCustomizer, org.springframework.core.Ordered {
    @Override
    public void customize(RedlockConfig.Builder builder) {
      action.customize(builder);
    }

    @Override
    public int getOrder() {
      return order;
    }
  }

  /** A transport that counts the clients it opens, over a real one. */
  private record CountingTransport(NodeTransport real, AtomicInteger opened)
      implements NodeTransport {
    @Override
    public boolean supports(java.net.URI uri) {
      return real.supports(uri);
    }

    @Override
    public io.redlock.spi.NodeClient open(io.redlock.spi.NodeSettings node) {
      opened.incrementAndGet();
      return real.open(node);
    }

    @Override
    public void close() {
      real.close();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(RedlockProperties.class)
  static class PropertiesOnly {}

  private static String stackMessages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c.getMessage()).append('\n');
    }
    return b.toString();
  }
}
