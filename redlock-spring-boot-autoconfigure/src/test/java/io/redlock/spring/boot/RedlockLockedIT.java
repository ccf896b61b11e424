package io.redlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlock.Lease;
import io.redlock.LeaseLostException;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.spring.boot.RedlockLocked.IfHeld;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * {@link RedlockLocked} in a real Spring Boot application (the starter's auto-configuration,
 * {@code redlock.fencing=true}) against three real nodes: the method runs under the lock with
 * its lease and fencing token in {@link RedlockContext}; a second caller throws, skips or waits
 * as the annotation says; keys are SpEL over the parameters; nested calls are reentrant on one
 * key; an outage is never a skip; settings that are not accepted fail the start. Runs on Boot
 * 3.5 and 4.0. Another {@code Redlock} over the same nodes plays the other instance.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockLockedIT {
  private static RedisServers servers;
  private static ConfigurableApplicationContext context;
  private static Redlock elsewhere;
  private static Locked locked;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableTransactionManagement
  static class App {
    @Bean
    OrderService orderService() {
      return new OrderService();
    }

    @Bean
    Locked locked() {
      return new Locked();
    }

    @Bean
    Keys keys() {
      return new Keys();
    }

    @Bean
    RecordingTransactions transactionManager() {
      return new RecordingTransactions();
    }

    @Bean
    Refusals refusals() {
      return new Refusals();
    }
  }

  /** Counts the attempts of the application's {@code Redlock} that found a lock unavailable. */
  static class Refusals implements RedlockListener {
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

    @Override
    public void acquireFinished(RedlockEvent.AcquireFinished event) {
      if (event.outcome() == RedlockEvent.AcquireOutcome.UNAVAILABLE) {
        counts
            .computeIfAbsent(event.resources().get(0), r -> new AtomicInteger())
            .incrementAndGet();
      }
    }

    int of(String resource) {
      AtomicInteger count = counts.get(resource);
      return count == null ? 0 : count.get();
    }
  }

  /** A bean the keys refer to as {@code @keys}. */
  public static class Keys {
    public String tenant() {
      return "tenant-7";
    }
  }

  /** Locked methods of every kind; their state is read through methods (the bean is a proxy). */
  public static class Locked {
    private final List<Lease> leases = new CopyOnWriteArrayList<>();

    public List<Lease> leases() {
      return leases;
    }

    private String ran() {
      leases.add(RedlockContext.currentLease().orElseThrow());
      return "ran";
    }

    @RedlockLocked(key = "#name")
    public String once(String name) {
      return ran();
    }

    @RedlockLocked(key = "#name", waitFor = "30s")
    public String patiently(String name) {
      return ran();
    }

    @RedlockLocked(key = "#name", waitFor = "300ms")
    public String briefly(String name) {
      return ran();
    }

    @RedlockLocked(key = "#p0", ifHeld = IfHeld.SKIP)
    public Optional<String> skipOptional(String name) {
      return Optional.of(ran());
    }

    @RedlockLocked(key = "#a0", ifHeld = IfHeld.SKIP)
    public String skip(String name) {
      return ran();
    }

    @RedlockLocked(key = "#name", ifHeld = IfHeld.WAIT)
    public String waiting(String name) {
      return ran();
    }

    @RedlockLocked(key = "'orders:' + @keys.tenant() + ':' + #order.id")
    public String forTenant(Order order) {
      return ran();
    }

    @RedlockLocked(key = "#name", ttl = "${test.short-ttl:1s}", autoExtend = false)
    public String outlives(String name) throws InterruptedException {
      Lease lease = RedlockContext.currentLease().orElseThrow();
      Timing.await("the lease ran out", () -> !lease.isValid());
      return ran();
    }

    @RedlockLocked(key = "#name")
    public String around(String name, Runnable inner) {
      Lease mine = RedlockContext.currentLease().orElseThrow();
      inner.run();
      assertThat(RedlockContext.currentLease()).contains(mine);
      return ran();
    }

    @Transactional
    @RedlockLocked(key = "#name")
    public String inTransaction(String name) {
      return ran();
    }
  }

  /** A transaction manager that records whether the lock was held at begin and commit. */
  static class RecordingTransactions extends AbstractPlatformTransactionManager {
    private static final long serialVersionUID = 1L;
    final transient List<String> events = new CopyOnWriteArrayList<>();

    @Override
    protected Object doGetTransaction() {
      return new Object();
    }

    @Override
    protected void doBegin(Object transaction, TransactionDefinition definition) {
      events.add("begin, locked " + RedlockContext.currentLease().isPresent());
    }

    @Override
    protected void doCommit(DefaultTransactionStatus status) {
      events.add("commit, locked " + RedlockContext.currentLease().isPresent());
    }

    @Override
    protected void doRollback(DefaultTransactionStatus status) {
      events.add("rollback");
    }
  }

  @BeforeAll
  static void start() throws InterruptedException {
    servers = RedisServers.startFresh(3); // declared fresh, as fencing needs
    context =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties(
                "redlock.nodes=" + String.join(",", servers.uris()),
                "redlock.fencing=true",
                "redlock.node-timeout=500ms") // one attempt each: patient on a loaded machine
            .run();
    locked = context.getBean(Locked.class);
    elsewhere =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(servers.uris())
                .nodeTimeout(Duration.ofMillis(500))
                .fencing(true)
                .build());
    for (Redlock redlock : List.of(context.getBean(Redlock.class), elsewhere)) {
      // The nodes may connect (and be probed) after the Redlock is made on a loaded machine.
      Timing.await(
          "the nodes are connected and counted",
          () -> {
            try {
              Optional<Lease> lease = redlock.tryAcquire("warm-up:" + UUID.randomUUID());
              lease.ifPresent(Lease::release);
              return lease.isPresent();
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
    }
  }

  @AfterAll
  static void stop() {
    if (context != null) {
      context.close();
    }
    if (elsewhere != null) {
      elsewhere.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  private static String name() {
    return "locked-" + UUID.randomUUID();
  }

  private static Lease holdElsewhere(String resource) throws InterruptedException {
    return elsewhere.acquire(resource, Duration.ofSeconds(30));
  }

  private static int nodesHolding(String resource) {
    int count = 0;
    for (int i = 0; i < servers.size(); i++) {
      if ((Long) servers.command(i, "PTTL", resource) > 0) {
        count++;
      }
    }
    return count;
  }

  @Test
  void theMethodRunsUnderTheLockWithItsFencingTokenInTheContext() throws InterruptedException {
    OrderService orders = context.getBean(OrderService.class);
    String id = UUID.randomUUID().toString();
    orders.ship(new Order(id));
    orders.ship(new Order(id));
    List<Lease> shipments = orders.shipments();
    assertThat(shipments).hasSize(2);
    assertThat(shipments.get(0).resources()).containsExactly("order:" + id);
    assertThat(shipments.get(0).fencingToken()).isPositive();
    assertThat(shipments.get(1).fencingToken()).isGreaterThan(shipments.get(0).fencingToken());
    assertThat(shipments).allSatisfy(lease -> assertThat(lease.isValid()).isFalse());
    // release() returns once a majority has answered; the last node's answer may come later
    assertThat(nodesHolding("order:" + id))
        .as("released on a majority after the call")
        .isLessThan(2);
    Timing.await("released on every node", () -> nodesHolding("order:" + id) == 0);
    assertThat(RedlockContext.currentLease()).as("outside the method").isEmpty();
  }

  @Test
  void whileTheMethodRunsTheNodesHoldItsKey() {
    String name = name();
    AtomicBoolean held = new AtomicBoolean();
    locked.around(name, () -> held.set(nodesHolding(name) >= 2));
    assertThat(held).isTrue();
  }

  @Test
  void keysAreSpelOverTheParametersAndBeans() {
    String id = UUID.randomUUID().toString();
    int before = locked.leases().size();
    locked.forTenant(new Order(id));
    String name = name();
    locked.skip(name); // #a0
    assertThat(locked.leases().subList(before, before + 2))
        .extracting(lease -> lease.resources().get(0))
        .containsExactly("orders:tenant-7:" + id, name);
  }

  @Test
  void aSecondCallerThrowsByDefaultWhenTheLockIsHeldElsewhere() throws Exception {
    String name = name();
    int before = locked.leases().size();
    try (Lease theirs = holdElsewhere(name)) {
      assertThatThrownBy(() -> locked.once(name))
          .isInstanceOfSatisfying(
              LockUnavailableException.class, e -> assertThat(e.heldElsewhere()).isTrue());
      assertThatThrownBy(() -> locked.briefly(name))
          .isInstanceOfSatisfying(
              LockUnavailableException.class,
              e -> {
                assertThat(e.heldElsewhere()).isTrue();
                assertThat(e.attempts()).as("tried for waitFor 300ms").isGreaterThan(1);
                assertThat(e.getMessage()).contains("another holder had it for all of waitFor");
              });
    }
    assertThat(locked.leases()).as("the method did not run").hasSize(before);
    assertThat(locked.once(name)).isEqualTo("ran");
  }

  @Test
  void aSecondCallerSkipsWhenAskedTo() throws Exception {
    String name = name();
    int before = locked.leases().size();
    try (Lease theirs = holdElsewhere(name)) {
      assertThat(locked.skipOptional(name)).isEmpty();
      assertThat(locked.skip(name)).isNull();
    }
    assertThat(locked.leases()).as("the method did not run").hasSize(before);
    assertThat(locked.skipOptional(name)).contains("ran");
  }

  @Test
  void aSecondCallerWaitsForTheHolderWhenAskedTo() throws Exception {
    String name = name();
    Lease theirs = holdElsewhere(name);
    CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> locked.waiting(name));
    CompletableFuture<String> patient = CompletableFuture.supplyAsync(() -> locked.patiently(name));
    Refusals refusals = context.getBean(Refusals.class);
    try {
      Timing.await("both callers were refused and tried again", () -> refusals.of(name) >= 4);
      assertThat(waiting).as("still waiting while held elsewhere").isNotDone();
      assertThat(patient).isNotDone();
    } finally {
      theirs.release();
    }
    assertThat(waiting.get(60, TimeUnit.SECONDS)).isEqualTo("ran");
    assertThat(patient.get(60, TimeUnit.SECONDS)).isEqualTo("ran");
  }

  @Test
  void anInterruptedWaitDoesNotRunTheMethodAndKeepsTheFlag() throws Exception {
    String name = name();
    int before = locked.leases().size();
    try (Lease theirs = holdElsewhere(name)) {
      CompletableFuture<Throwable> outcome = new CompletableFuture<>();
      Thread caller =
          new Thread(
              () -> {
                try {
                  locked.waiting(name);
                  outcome.complete(null);
                } catch (Throwable t) {
                  outcome.complete(
                      Thread.currentThread().isInterrupted() ? t : new AssertionError("flag lost"));
                }
              });
      caller.start();
      caller.interrupt();
      assertThat(outcome.get(60, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
    }
    assertThat(locked.leases()).hasSize(before);
  }

  @Test
  void aNestedCallOnTheSameKeyIsReentrantAndOnAnotherKeyTakesItsOwnLock() {
    String name = name();
    String other = name();
    int before = locked.leases().size();
    locked.around(
        name,
        () -> {
          Lease outer = RedlockContext.currentLease().orElseThrow();
          locked.once(name); // reentrant: no second lease, not refused by the outer hold
          assertThat(locked.leases().get(locked.leases().size() - 1)).isSameAs(outer);
          assertThat(nodesHolding(name)).as("still held after the inner call").isPositive();
          locked.once(other);
          Lease inner = locked.leases().get(locked.leases().size() - 1);
          assertThat(inner).isNotSameAs(outer);
          assertThat(inner.isValid()).as("released when the inner method returned").isFalse();
        });
    List<Lease> seen = locked.leases().subList(before, locked.leases().size());
    assertThat(seen).hasSize(3);
    assertThat(seen.get(2)).as("the outer method's own").isSameAs(seen.get(0));
  }

  @Test
  void aLeaseLostWhileTheMethodRanIsThrownAfterIt() {
    String name = name();
    int before = locked.leases().size();
    assertThatThrownBy(() -> locked.outlives(name)).isInstanceOf(LeaseLostException.class);
    assertThat(locked.leases()).as("the method ran").hasSize(before + 1);
  }

  @Test
  void theLockIsTakenOutsideTheTransaction() {
    RecordingTransactions transactions = context.getBean(RecordingTransactions.class);
    transactions.events.clear();
    locked.inTransaction(name());
    assertThat(transactions.events).containsExactly("begin, locked true", "commit, locked true");
  }

  @Test
  void anOutageIsAnErrorEvenForSkip() throws Exception {
    String down;
    try (ServerSocket a = new ServerSocket(0);
        ServerSocket b = new ServerSocket(0);
        ServerSocket c = new ServerSocket(0)) {
      down =
          "redis://127.0.0.1:"
              + a.getLocalPort()
              + ",redis://127.0.0.1:"
              + b.getLocalPort()
              + ",redis://127.0.0.1:"
              + c.getLocalPort();
    } // closed: nothing listens there now
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                RedlockAutoConfiguration.class, RedlockLockedAutoConfiguration.class))
        .withPropertyValues("redlock.nodes=" + down, "redlock.connect-timeout=200ms")
        .withBean(Locked.class)
        .run(
            app -> {
              Locked onDeadNodes = app.getBean(Locked.class);
              assertThatThrownBy(() -> onDeadNodes.skip(name()))
                  .isInstanceOfSatisfying(
                      LockUnavailableException.class, e -> assertThat(e.heldElsewhere()).isFalse());
              assertThat(onDeadNodes.leases()).isEmpty();
            });
  }

  /** Settings that are not accepted fail the start, naming the method and the setting. */
  @Test
  void settingsThatAreNotAcceptedFailTheStart() {
    ApplicationContextRunner runner =
        new ApplicationContextRunner()
            .withConfiguration(
                AutoConfigurations.of(
                    RedlockAutoConfiguration.class, RedlockLockedAutoConfiguration.class))
            .withPropertyValues("redlock.nodes=" + String.join(",", servers.uris()));
    runner
        .withBean(SkipsAnInt.class)
        .run(
            app ->
                assertThat(app)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("SkipsAnInt.count(String)")
                    .hasMessageContaining("ifHeld SKIP is not accepted on a method returning int"));
    runner
        .withBean(WaitsWithABound.class)
        .run(
            app ->
                assertThat(app)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("waitFor '5s' is not accepted with ifHeld WAIT"));
    runner
        .withBean(ReturnsAFuture.class)
        .run(
            app ->
                assertThat(app)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "java.util.concurrent.CompletableFuture is not accepted"));
    runner
        .withBean(BadDuration.class)
        .run(
            app ->
                assertThat(app)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("ttl 'soon' is not accepted"));
    runner
        .withBean(BadKey.class)
        .run(app -> assertThat(app).getFailure().rootCause().hasMessageContaining("key '#name +'"));
  }

  public static class SkipsAnInt {
    @RedlockLocked(key = "#name", ifHeld = IfHeld.SKIP)
    public int count(String name) {
      return 1;
    }
  }

  public static class WaitsWithABound {
    @RedlockLocked(key = "#name", ifHeld = IfHeld.WAIT, waitFor = "5s")
    public void run(String name) {}
  }

  public static class ReturnsAFuture {
    @RedlockLocked(key = "#name")
    public CompletableFuture<String> start(String name) {
      return CompletableFuture.completedFuture(name);
    }
  }

  public static class BadDuration {
    @RedlockLocked(key = "#name", ttl = "soon")
    public void run(String name) {}
  }

  public static class BadKey {
    @RedlockLocked(key = "#name +")
    public void run(String name) {}
  }
}
