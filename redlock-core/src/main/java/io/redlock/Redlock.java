package io.redlock;

import io.redlock.internal.LockEngine;
import io.redlock.internal.TimeSource;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A distributed lock over N independent Redis masters: the Redlock algorithm.
 *
 * <p>To acquire, it sends {@code SET key token NX PX ttl} to every node at once and holds the
 * lock when a majority ({@code N / 2 + 1}) granted it while validity is left
 * ({@code ttl − drift}, measured from before the first request on the monotonic clock). Any
 * minority of nodes may be down, slow or paused: each costs at most the node timeout. A failed
 * attempt is undone on every node that may hold its token (all but those that answered
 * "taken") and retried after a random delay, within the retry budget
 * of the {@link RedlockConfig}. Keys are the resource names (plus an optional prefix), so
 * other Redlock clients locking the same names exclude and are excluded by this one.
 *
 * <pre>{@code
 * try (Redlock redlock = Redlock.create(RedlockConfig.builder()
 *     .nodes("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379")
 *     .build())) {
 *   try (Lease lease = redlock.acquire("orders:42", Duration.ofSeconds(10))) {
 *     lease.ensureValid();
 *     // ... work
 *   }
 * }
 * }</pre>
 *
 * <p>Thread-safe: one instance serves a whole application; create it once and close it at
 * shutdown. {@link #close()} releases every lease still held and frees the connections.
 *
 * @since 0.1.0
 */
public final class Redlock implements AutoCloseable {
  /**
   * The name of the SLF4J logger that reports acquisitions: DEBUG per attempt, and WARN when
   * an acquisition ran out of attempts because node errors or timeouts (not contention) denied
   * it the majority. Its name is part of the API and stays; the classes behind it may change.
   * An application where contention and node faults are routine (a demo, a load test) may
   * raise its level to {@code ERROR}.
   */
  public static final String ACQUISITION_LOGGER = LockEngine.ACQUISITION_LOGGER;

  private static final Logger log = LoggerFactory.getLogger(Redlock.class);

  private final LockEngine engine;
  private final OwnedResources owned;
  private final LockViews lockViews;

  Redlock(LockEngine engine, OwnedResources owned) {
    this.engine = engine;
    this.owned = owned;
    this.lockViews = new LockViews(engine);
  }

  /**
   * Connects to the configured nodes with the transport found on the class path
   * ({@code redlock-lettuce} for {@code redis://} and {@code rediss://}), waiting up to the
   * connect timeout for first connections. Nodes that cannot be reached yet are logged and
   * keep being retried in the background; they count as soon as they connect.
   *
   * @throws RedlockConfigException if no transport supports a node's scheme, or a node
   *     refused the credentials or the database
   */
  public static Redlock create(RedlockConfig config) {
    return Connector.create(config);
  }

  /**
   * Connects to the configured nodes with the given transport, which the caller keeps
   * ownership of (and closes after this instance).
   *
   * @throws RedlockConfigException if the transport does not support a node's URI, or a node
   *     refused the credentials or the database
   */
  public static Redlock create(RedlockConfig config, NodeTransport transport) {
    return Connector.create(config, transport);
  }

  /**
   * Declares a brand-new cluster fresh: writes to each node the {@link FreshMarker fresh
   * marker}, bound to the {@code run_id} of its current Redis process, so that the restart
   * guard counts it at once instead of one {@code maxTtl} after it started. After a restart
   * (a new {@code run_id}) the marker no longer matches and the guard applies again.
   *
   * <p>It is a whole-cluster act, for a cluster no client has used yet, or while every
   * client is stopped: it first looks at every node, and writes nothing anywhere while any
   * node holds a key that may be a lock (a key under the {@link RedlockConfig#keyPrefix() key
   * prefix}, or with no prefix any key but the marker), or when it cannot rule that out (a
   * node unreachable, or refusing the check). Each write then checks its node again,
   * atomically. With {@code force}, it writes to every reachable node without looking: only
   * when you know no client holds a lease. A lease whose keys are gone from every node (all
   * restarted empty) cannot be seen by any check: do not declare a cluster fresh while
   * clients may hold leases.
   *
   * <p>Needs, besides what {@link #create} needs, {@code EVAL} with {@code DBSIZE},
   * {@code EXISTS}, {@code RANDOMKEY} and {@code KEYS} inside the script to look, and
   * {@code SET} to write. Blocks for at most
   * about twice the connect timeout per step.
   *
   * @param config the cluster, as clients use it (nodes, credentials, key prefix)
   * @param force write without looking for keys
   * @return what was done on each node; {@link InitReport#complete()} tells whether every
   *     node is marked
   * @throws RedlockConfigException as {@link #create} does (no transport, refused
   *     credentials, a replica, two URIs reaching one server)
   */
  public static InitReport init(RedlockConfig config, boolean force) {
    RedlockConfig plain = config.toBuilder().restartGuard(false).fencing(false).build();
    try (Redlock redlock = create(plain)) {
      return ClusterInit.over(redlock.engine.nodes(), config, force);
    }
  }

  /**
   * Brings one node back into fencing after it lost its counters while a majority of the nodes
   * did not: an empty restart, evicted keys, a restored backup (see {@code docs/fencing.md}, "A
   * node that lost its counters"). It waits for nothing: it refuses, and writes nothing, until
   * the node's restart guard window has passed since a client first saw its process; while more
   * than {@code quorum - 1} nodes (this one included) are untrusted; or while the node may
   * evict keys without a ttl. Otherwise, in one script on the node, bound to its process and
   * to its record as judged, it raises each counter to the largest value any trusted node
   * holds, and admits the node's current process.
   *
   * <p>Needs, besides what {@link #create} needs, {@code EVAL} with {@code KEYS}, {@code GET},
   * {@code SET} and {@code INFO} inside scripts: run it as an administrative user.
   *
   * @param config the cluster, as clients use it (nodes, credentials, key prefix)
   * @param node the node to re-admit, as written in {@link RedlockConfig#nodes()} or as shown
   *     without credentials
   * @return what was done, and why not if nothing was
   * @throws RedlockConfigException if {@code node} is not one of the configured nodes, or as
   *     {@link #create} does
   * @since 0.1.0
   */
  public static ReadmitReport readmit(RedlockConfig config, String node) {
    RedlockConfig plain = config.toBuilder().restartGuard(false).fencing(false).build();
    try (Redlock redlock = create(plain)) {
      List<io.redlock.spi.NodeClient> nodes = redlock.engine.nodes();
      int index = config.nodes().indexOf(node);
      for (int i = 0; index < 0 && i < nodes.size(); i++) {
        if (nodes.get(i).name().equals(node)) {
          index = i;
        }
      }
      if (index < 0) {
        throw new RedlockConfigException(
            "readmit: "
                + io.redlock.internal.NodeUris.redact(node)
                + " is not one of the configured nodes "
                + redlock.nodes());
      }
      return NodeReadmission.over(nodes, config, index);
    }
  }

  /**
   * Creates an instance over node clients that the caller supplies and keeps ownership of,
   * on the given clock, timer and callback executor. For tests and simulations; not part of
   * the supported API.
   */
  static Redlock over(
      RedlockConfig config,
      List<NodeClient> clients,
      TimeSource time,
      Random random,
      Executor callbacks) {
    LockEngine engine = new LockEngine(config, clients, time, random, callbacks);
    engine.startGuard().join();
    return new Redlock(engine, OwnedResources.none());
  }

  /**
   * Acquires {@code resource} for the configured {@link RedlockConfig#ttl() ttl}, retrying
   * within the retry budget.
   *
   * @see #acquire(Collection, Duration)
   */
  public Lease acquire(String resource) throws InterruptedException {
    return acquire(one(resource), engine.config().ttl());
  }

  /**
   * Acquires {@code resource} for {@code ttl}, retrying within the retry budget.
   *
   * @see #acquire(Collection, Duration)
   */
  public Lease acquire(String resource, Duration ttl) throws InterruptedException {
    return acquire(one(resource), ttl);
  }

  /**
   * Acquires every resource in one lease, all or none on each node, retrying failed attempts
   * after a random delay until one succeeds or the retry budget (count and total wait) is
   * spent. If interrupted, stops: an attempt in flight is undone once decided, and a lease
   * granted meanwhile is released, each sent to every node that may hold the key (a node that
   * cannot be reached keeps it until its ttl runs out).
   *
   * @param resources resource names, each 1 to {@link RedlockConfig#MAX_KEY_BYTES} bytes in
   *     UTF-8 with the key prefix, none twice
   * @param ttl how long the nodes keep the keys: more than the node timeout, at most 365 days,
   *     used in whole milliseconds
   * @return a valid lease
   * @throws LockUnavailableException if the retry budget was spent
   * @throws IllegalArgumentException if a resource name is not accepted
   * @throws RedlockConfigException if the ttl is not accepted under the configuration (at
   *     least 1 ms, longer than the node timeout, at most {@code maxTtl}, and long enough to
   *     leave validity after the drift margin)
   * @throws IllegalStateException if this instance is closed
   * @throws InterruptedException if interrupted while waiting
   */
  public Lease acquire(Collection<String> resources, Duration ttl) throws InterruptedException {
    return await(engine.acquire(resources, ttl, true));
  }

  /** One attempt at {@code resource} for the configured ttl; see {@link #tryAcquire(Collection, Duration)}. */
  public Optional<Lease> tryAcquire(String resource) throws InterruptedException {
    return tryAcquire(one(resource), engine.config().ttl());
  }

  /** One attempt at {@code resource} for {@code ttl}; see {@link #tryAcquire(Collection, Duration)}. */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) throws InterruptedException {
    return tryAcquire(one(resource), ttl);
  }

  /**
   * Makes exactly one attempt, without retrying, and blocks until the attempt is decided and,
   * if it failed, its undo is on its way: at most about one node timeout, or two with
   * {@link RedlockConfig.Builder#fencing(boolean) fencing}, whose attempt is the lock round
   * (which may wait for every node when the first answers hold too few trusted grants) and
   * then the confirmation round.
   *
   * @return the lease, or empty if a majority did not grant it in time (held by another
   *     client, or too few nodes answered); the undo of the attempt has then been sent to
   *     every node that may hold its token, as for {@link LockUnavailableException}
   * @throws IllegalArgumentException if a resource name is not accepted
   * @throws RedlockConfigException if the ttl is not accepted under the configuration (at
   *     least 1 ms, longer than the node timeout, at most {@code maxTtl}, and long enough to
   *     leave validity after the drift margin)
   * @throws IllegalStateException if this instance is closed
   * @throws InterruptedException if interrupted while waiting; the attempt is undone once
   *     decided, or its lease released, as for {@link #acquire(Collection, Duration)}
   */
  public Optional<Lease> tryAcquire(Collection<String> resources, Duration ttl)
      throws InterruptedException {
    try {
      return Optional.of(await(engine.acquire(resources, ttl, false)));
    } catch (LockUnavailableException e) {
      return Optional.empty();
    }
  }

  /**
   * Makes exactly one attempt at {@code resource} for {@code ttl}, as
   * {@link #tryAcquire(Collection, Duration)} does, but reports a failure by throwing instead
   * of returning empty, so that the caller can tell a lock held by another client
   * ({@link LockUnavailableException#heldElsewhere()}) from nodes that did not answer. For
   * adapters whose framework treats the two differently (ShedLock skips a task whose lock is
   * held, and reports one it could not lock because of an outage).
   *
   * @return a valid lease
   * @throws LockUnavailableException if a majority did not grant it in time; the undo of the
   *     attempt has been sent, as for {@link #tryAcquire(Collection, Duration)}
   * @throws IllegalArgumentException if the resource name is not accepted
   * @throws RedlockConfigException if the ttl is not accepted under the configuration
   * @throws IllegalStateException if this instance is closed
   * @throws InterruptedException if interrupted while waiting; the attempt is undone
   * @since 0.1.0
   */
  public Lease attempt(String resource, Duration ttl) throws InterruptedException {
    return await(engine.acquire(one(resource), ttl, false));
  }

  /** Acquires {@code resource} without blocking; see {@link #acquireAsync(Collection, Duration)}. */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl) {
    return acquireAsync(one(resource), ttl);
  }

  /**
   * Like {@link #acquire(Collection, Duration)}, without blocking any thread: the future
   * completes with the lease, or exceptionally with {@link LockUnavailableException}.
   * Completing the future in any other way (cancelling it, {@code orTimeout}, completing it
   * by hand) stops the retries: an attempt in flight is undone once decided, and a lease
   * granted meanwhile is released, each sent to every node that may hold the key (a node that
   * cannot be reached keeps it until its ttl runs out). It completes on a library callback
   * thread, never on the timer or a transport thread, so dependent actions may block.
   *
   * @throws IllegalArgumentException if a resource name is not accepted
   * @throws RedlockConfigException if the ttl is not accepted under the configuration (at
   *     least 1 ms, longer than the node timeout, at most {@code maxTtl}, and long enough to
   *     leave validity after the drift margin)
   * @throws IllegalStateException if this instance is closed
   */
  public CompletableFuture<Lease> acquireAsync(Collection<String> resources, Duration ttl) {
    return engine.acquireAsync(resources, ttl);
  }

  /**
   * Runs {@code action} while holding {@code resource}, with the lease auto-extended, and
   * releases it afterwards, also when the action throws.
   *
   * @throws LeaseLostException after the action returned, if the lease was lost while it
   *     ran: its work may have overlapped another holder's (if the action threw, its
   *     exception is thrown with this one attached as suppressed)
   * @throws LockUnavailableException if the lock could not be acquired
   * @throws InterruptedException if interrupted while acquiring
   */
  public void withLock(String resource, Duration ttl, Consumer<? super Lease> action)
      throws InterruptedException {
    callWithLock(
        resource,
        ttl,
        lease -> {
          action.accept(lease);
          return null;
        });
  }

  /**
   * Like {@link #withLock}, returning what {@code action} returns.
   *
   * @throws LeaseLostException after the action returned, if the lease was lost while it ran
   * @throws LockUnavailableException if the lock could not be acquired
   * @throws InterruptedException if interrupted while acquiring
   */
  public <T> T callWithLock(
      String resource, Duration ttl, Function<? super Lease, ? extends T> action)
      throws InterruptedException {
    Lease lease = acquire(resource, ttl);
    T result;
    try {
      lease.autoExtend();
      result = action.apply(lease);
    } catch (Throwable t) { // also what a "sneaky" checked exception throws
      boolean lost = lease.state() == Lease.State.LOST;
      lease.release();
      if (lost && !(t instanceof LeaseLostException)) {
        t.addSuppressed(lostError(lease));
      }
      throw t;
    }
    boolean lost = lease.state() == Lease.State.LOST;
    lease.release();
    if (lost) {
      throw lostError(lease);
    }
    return result;
  }

  private static LeaseLostException lostError(Lease lost) {
    try {
      lost.ensureValid();
    } catch (LeaseLostException e) {
      return e;
    }
    return new LeaseLostException(lost.resources(), "it was lost while the action ran");
  }

  /**
   * A {@link java.util.concurrent.locks.Lock} over {@code resource} with the configured
   * {@link RedlockConfig#ttl() ttl}; see {@link #asLock(String, Duration)}.
   *
   * @since 0.1.0
   */
  public RedlockLock asLock(String resource) {
    return asLock(resource, engine.config().ttl());
  }

  /**
   * A {@link java.util.concurrent.locks.Lock} over {@code resource}: thread-bound and
   * reentrant within this JVM, its lease taken with {@code ttl} and extended automatically
   * while held (see {@link RedlockLock}). Returns the same object for the same resource name
   * as long as anybody references or holds it, so that all threads of this JVM exclude each
   * other locally through it.
   *
   * @param resource the resource name, checked as by {@link #acquire(String, Duration)}
   * @param ttl the ttl of each lease the lock takes, checked as by
   *     {@link #acquire(String, Duration)}
   * @throws NullPointerException if {@code resource} or {@code ttl} is null
   * @throws IllegalArgumentException if the name is not accepted, or if this resource's lock
   *     view exists with another ttl
   * @throws RedlockConfigException if the ttl is not accepted under the configuration
   * @since 0.1.0
   */
  public RedlockLock asLock(String resource, Duration ttl) {
    return lockViews.get(resource, ttl);
  }

  /** The lock views: for tests. */
  LockViews lockViews() {
    return lockViews;
  }

  /** The configuration this instance runs with. */
  public RedlockConfig config() {
    return engine.config();
  }

  /** The nodes' addresses, without credentials, in configuration order. */
  public List<String> nodes() {
    List<String> names = new ArrayList<>();
    for (NodeClient node : engine.nodes()) {
      names.add(node.name());
    }
    return names;
  }

  /**
   * Each node as this instance sees it now, in configuration order: whether it answers,
   * whether the restart guard counts its votes, and what keeps it from voting (see {@link
   * NodeState}). Locks can be granted while at least {@link #quorum()} nodes are {@link
   * NodeState.Status#COUNTED}. It is what the library already knows from the restart guard's
   * probes, once a second, and the connections' events: it sends nothing and never blocks, so a
   * health check or a gauge may call it as often as it likes.
   *
   * @return an immutable list with one state per node
   * @since 0.1.0
   */
  public List<NodeState> nodeStates() {
    return List.copyOf(engine.nodeStates());
  }

  /** The number of nodes that must grant a lock: {@code nodes / 2 + 1}. */
  public int quorum() {
    return engine.quorum();
  }

  /**
   * Stops acquisitions in flight, releases every lease still held, and closes the connections
   * once that is done: an attempt still in flight is first decided and undone, so no key of
   * this instance is left behind on a node that is reachable, slow or paused (a paused node
   * runs the undo when it resumes, behind the attempt's own request). Waits for about two node
   * timeouts at most (an attempt's decision, then its undo or release), three with
   * {@link RedlockConfig.Builder#fencing(boolean) fencing} (the lock round, the confirmation
   * round, then the undo or release), and never more than four node timeouts plus 100 ms,
   * after which it closes the connections anyway. A pending {@link #acquireAsync} future
   * completes exceptionally with {@link IllegalStateException}; acquisitions after this throw
   * it. Idempotent.
   */
  @Override
  public void close() {
    CompletableFuture<Void> drained = engine.close();
    try {
      // Attempts in flight, their undos and the releases: each round ends by itself after one
      // node timeout, at most two in a row (three with fencing: lock, confirm, undo); the
      // bound only guards against a timer that cannot run.
      drained.get(engine.config().nodeTimeout().toNanos() * 4 + 100_000_000L, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.debug("close: releases not all confirmed", e);
    }
    closeOwned();
  }

  /**
   * {@link #close()} without blocking: the future completes once the connections are closed.
   * For tests on a fake clock, which must move the clock while close waits.
   */
  CompletableFuture<Void> closeAsync() {
    return engine.close().thenRun(this::closeOwned);
  }

  private void closeOwned() {
    owned.close();
  }

  /** {@code resource} as a list; a null one is named, as the engine's check would. */
  private static List<String> one(String resource) {
    return List.of(Objects.requireNonNull(resource, "resource name"));
  }

  private static Lease await(CompletableFuture<Lease> future) throws InterruptedException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      if (!future.cancel(false) && !future.isCompletedExceptionally()) {
        future.join().release(); // granted just before the interrupt
      }
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new RedlockException("acquisition failed: " + cause, cause);
    }
  }
}
