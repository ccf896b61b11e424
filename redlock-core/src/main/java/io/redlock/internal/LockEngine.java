package io.redlock.internal;

import io.redlock.Lease;
import io.redlock.NodeOutcome.Vote;
import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redlock algorithm over a fixed list of nodes: the state every acquisition, lease and
 * release of one {@code Redlock} shares.
 *
 * <p>Thread-safe. All work is asynchronous: no method blocks.
 */
public final class LockEngine {
  /** The acquisitions' logger: {@value} ({@code Redlock.ACQUISITION_LOGGER} is this one). */
  public static final String ACQUISITION_LOGGER = "io.redlock.acquisition";

  private static final Logger log = LoggerFactory.getLogger(LockEngine.class);

  /** The longest ttl accepted: 365 days, far below where nanosecond arithmetic overflows. */
  public static final Duration MAX_TTL = RedlockConfig.MAX_DURATION;

  private final RedlockConfig config;
  private final List<NodeClient> nodes;
  private final TimeSource time;
  private final Random random;
  private final Tokens tokens = new Tokens();
  private final int quorum;
  private final long nodeTimeoutNanos;
  private final RoundTimeouts roundTimeouts;
  private final Executor callbacks;
  private final Set<HeldLease> live = ConcurrentHashMap.newKeySet();
  private final Set<Acquisition> acquiring = ConcurrentHashMap.newKeySet();
  private final Set<CompletableFuture<Void>> releasing = ConcurrentHashMap.newKeySet();
  private final RestartGuard guard;
  private final AtomicInteger tracked = new AtomicInteger();
  private final Events events;
  private final ExtensionBatcher batcher;
  private volatile boolean closed;

  /** An engine whose listeners are called inline (for simulations on a fake clock). */
  public LockEngine(
      RedlockConfig config,
      List<NodeClient> nodes,
      TimeSource time,
      Random random,
      Executor callbacks) {
    this(config, nodes, time, random, callbacks, new Events(config.listeners()));
  }

  /**
   * @param callbacks where futures handed to callers complete and lost listeners run: never
   *     the timer thread or a transport thread, so that a caller that blocks there cannot stall
   *     the algorithm
   * @param events where this engine reports to the configured listeners (see {@link Events})
   */
  public LockEngine(
      RedlockConfig config,
      List<NodeClient> nodes,
      TimeSource time,
      Random random,
      Executor callbacks,
      Events events) {
    this.config = config;
    this.nodes = List.copyOf(nodes);
    this.time = time;
    this.random = random;
    this.callbacks = callbacks;
    this.quorum = Quorum.of(this.nodes.size());
    this.nodeTimeoutNanos = config.nodeTimeout().toNanos();
    this.roundTimeouts = new RoundTimeouts(time, nodeTimeoutNanos);
    this.guard =
        new RestartGuard(
            this.nodes,
            time,
            config.restartGuard(),
            config.maxTtl().toMillis(),
            config.driftFactor(),
            io.redlock.FreshMarker.key(config.keyPrefix()),
            io.redlock.FreshMarker.maxTtlKey(config.keyPrefix()));
    this.events = events;
    this.guard.listen(events);
    this.batcher = new ExtensionBatcher(this);
  }

  /** Where held leases wait for their auto-extension, sent in batches. */
  ExtensionBatcher batcher() {
    return batcher;
  }

  /** Where this engine reports to its listeners. */
  public Events events() {
    return events;
  }

  Executor callbacks() {
    return callbacks;
  }

  /**
   * A copy of {@code source} that completes on the callback executor, for work that the
   * caller's future must not stop: cancelling or completing the copy leaves {@code source}
   * alone (a release or an extension, once sent, runs its course).
   */
  public <T> CompletableFuture<T> handOff(CompletableFuture<T> source) {
    CompletableFuture<T> copy = new CompletableFuture<>();
    source.whenCompleteAsync(
        (value, error) -> {
          if (error != null) {
            copy.completeExceptionally(Futures.unwrap(error));
          } else {
            copy.complete(value);
          }
        },
        callbacks);
    return copy;
  }

  /**
   * A copy of an acquisition's {@code source} that completes on the callback executor. The
   * copy belongs to the caller: whoever completes it first, for whatever reason (cancel,
   * {@code orTimeout}, {@code complete}), stops the acquisition, and a lease that arrives
   * after that goes to {@code orphan}, whose owner is gone.
   */
  private <T> CompletableFuture<T> handOffOwned(
      CompletableFuture<T> source, java.util.function.Consumer<? super T> orphan) {
    CompletableFuture<T> copy = new CompletableFuture<>();
    source.whenCompleteAsync(
        (value, error) -> {
          if (error != null) {
            copy.completeExceptionally(Futures.unwrap(error));
          } else if (!copy.complete(value)) {
            orphan.accept(value);
          }
        },
        callbacks);
    // When the copy completed first, the source is still running: stop it. When the source
    // completed first, cancelling it does nothing.
    copy.whenComplete((value, error) -> source.cancel(false));
    return copy;
  }

  /** How long a blocking release waits at most: the round's own timeout, with room to spare. */
  long releaseWaitNanos() {
    return 2 * nodeTimeoutNanos + 100_000_000L;
  }

  public RedlockConfig config() {
    return config;
  }

  public List<NodeClient> nodes() {
    return nodes;
  }

  public int quorum() {
    return quorum;
  }

  public TimeSource time() {
    return time;
  }

  long nodeTimeoutNanos() {
    return nodeTimeoutNanos;
  }

  /**
   * Starts acquiring a lease on {@code resources}; with {@code retry}, failed attempts are
   * retried within the configured budget. Cancelling the returned future stops the retries
   * and releases whatever an attempt still in flight acquires.
   *
   * @throws IllegalArgumentException if a resource name is not accepted
   * @throws io.redlock.RedlockConfigException if the ttl is not accepted ({@link TtlRule})
   * @throws IllegalStateException if the engine is closed
   */
  public CompletableFuture<Lease> acquire(
      Collection<String> resources, Duration ttl, boolean retry) {
    List<String> names = checkResources(resources);
    long ttlMillis = checkTtl(ttl);
    ensureOpen();
    Acquisition acquisition =
        new Acquisition(
            this,
            names,
            keysFor(names),
            config.fencing() ? Fencing.counterKeys(config.keyPrefix(), names) : null,
            ttlMillis,
            retry);
    acquiring.add(acquisition);
    CompletableFuture<Lease> result = acquisition.start();
    // Tracked until its last undo or release settled, not only until it has a result: close()
    // must not close the connections before then (see close()).
    acquisition.finished().whenComplete((ignored, error) -> acquiring.remove(acquisition));
    if (closed) {
      acquisition.abort(); // close() may have missed it: see close()
    }
    return result;
  }

  /**
   * Like {@link #acquire}, for callers that do not block: the future completes on the
   * callback executor. Completing it in any other way (cancelling it, a timeout the caller
   * set, completing it by hand) stops the acquisition, and a lease that arrives after that is
   * released.
   */
  public CompletableFuture<Lease> acquireAsync(Collection<String> resources, Duration ttl) {
    return handOffOwned(acquire(resources, ttl, true), Lease::releaseAsync);
  }

  /**
   * Sends {@code request} at once to every node whose vote counts; a node the restart guard
   * holds back is not asked and votes {@link Vote#HELD_BACK}, with the reason.
   */
  Round countedRound(Function<NodeClient, CompletionStage<Boolean>> request) {
    return countedRound((index, node) -> request.apply(node));
  }

  /** Like {@link #countedRound(Function)}, for a request that needs the node's index. */
  Round countedRound(Round.Request request) {
    return Round.start(
        nodes,
        quorum,
        roundTimeouts,
        (index, node) -> {
          if (guard.counts(index)) {
            return request.send(index, node);
          }
          String why = guard.whyHeldBack(index);
          guard.probeIfUnknown(index);
          return CompletableFuture.failedFuture(new HeldBack(why));
        });
  }

  /** Each node as the restart guard knows it now; sends nothing. */
  public List<io.redlock.NodeState> nodeStates() {
    return guard.nodeStates();
  }

  /** The restart guard of this engine, for the failure report of an acquisition. */
  RestartGuard guard() {
    return guard;
  }

  /**
   * Starts the restart guard and the start-up checks; the future completes when every node was
   * probed once, exceptionally with a {@link io.redlock.RedlockConfigException} if a node is a
   * replica or the same server as another.
   */
  public CompletableFuture<Void> startGuard() {
    return guard.start();
  }

  /**
   * Compare-and-delete on every node at once; completes when all answered or timed out, never
   * exceptionally. Safe to send any number of times: it only deletes keys holding
   * {@code token}.
   */
  CompletableFuture<Void> releaseEverywhere(
      List<String> resources, List<String> keys, String token) {
    return release(
        resources, keys, token, EVERY_NODE, null, null, (index, node) -> node.unlock(keys, token));
  }

  /**
   * Like {@link #releaseEverywhere(List, List, String)}, also completing {@code majority} as
   * soon as a majority of the nodes answered without an error (deleted the key, or held none
   * with this token: free either way), or when the round settles. An error answer does not
   * count: it does not show that the node holds no key of this lease.
   */
  CompletableFuture<Void> releaseEverywhere(
      List<String> resources, List<String> keys, String token, CompletableFuture<Void> majority) {
    return release(
        resources,
        keys,
        token,
        EVERY_NODE,
        majority,
        null,
        (index, node) -> node.unlock(keys, token));
  }

  /**
   * Undoes the failed lock round {@code attempt}: releases {@code token} on every node except
   * those that answered {@link Vote#TAKEN}, which set nothing (see {@link NodeClient#lock}).
   * The votes are read as the release is sent, so answers that arrived since the decision
   * spare their nodes too; a node that has not answered yet gets the release, behind its lock
   * request on the same connection. {@code sent} completes once every node's request has been
   * handed to its connection; the returned future, once every node answered or timed out.
   */
  CompletableFuture<Void> undo(
      List<String> resources,
      List<String> keys,
      String token,
      Round attempt,
      CompletableFuture<Void> sent) {
    return release(
        resources,
        keys,
        token,
        index -> attempt.vote(index) != Vote.TAKEN,
        null,
        sent,
        (index, node) -> node.unlock(keys, token));
  }

  /**
   * Instead of deleting them, makes every key that still holds {@code token} expire in
   * {@code ttlMillis}, on every node at once (the compare-and-{@code PEXPIRE} of an
   * extension); completes {@code majority} as {@link #releaseEverywhere(List, List, String,
   * CompletableFuture)} does. Never touches another holder's key and never creates one.
   *
   * <p>A node that has not answered {@code lockRound} (the round that took the keys; {@code
   * null} once every node answered it or timed out) gets the expiry once it answers, or once
   * the transport fails the lock: the expiry goes like an extension, which a transport may carry
   * on another connection than the lock, with no order between the two (the Lettuce transport
   * does). Sent before the lock ran there, it would find no key, and the lock would then set the
   * full ttl. Past the node timeout the lease no longer keeps the round, and a node that has
   * still not answered the lock gets the expiry at once.
   */
  CompletableFuture<Void> expireEverywhere(
      List<String> resources,
      List<String> keys,
      String token,
      long ttlMillis,
      CompletableFuture<Void> majority,
      Round lockRound) {
    return release(
        resources,
        keys,
        token,
        EVERY_NODE,
        majority,
        null,
        (index, node) -> afterLock(lockRound, index, () -> node.extend(keys, token, ttlMillis)));
  }

  /**
   * Sends {@code request} to node {@code index} at once, or, when that node has not answered
   * {@code lockRound} (the round that took the keys; {@code null} once it settled), once it
   * answers or its transport fails the request: a transport may carry the lock and the request
   * on two connections, and a request that overtook the lock would find no key there, then
   * the lock would set its own ttl (after an extension, the key expires early on that node;
   * after a shorter expiry, it outlives the expiry). Only within the lock
   * round's node timeout: a lock request cut off by it was cancelled, and one already written
   * may still run later.
   */
  CompletionStage<Boolean> afterLock(
      Round lockRound, int index, Supplier<CompletionStage<Boolean>> request) {
    CompletableFuture<?> lock = lockRound == null ? null : lockRound.unanswered(index);
    return lock == null ? request.get() : after(lock, request);
  }

  /**
   * Sends {@code request} once {@code first} completes, however it completes, from the timer
   * thread: not from the thread that completes {@code first}, which may be an event loop (from
   * there, a request could overtake those handed to that loop and not yet written).
   */
  private CompletableFuture<Boolean> after(
      CompletableFuture<?> first, Supplier<CompletionStage<Boolean>> request) {
    CompletableFuture<Boolean> reply = new CompletableFuture<>();
    first.handle(
        (ignored, error) ->
            time.schedule(
                () -> {
                  CompletionStage<Boolean> sent;
                  try {
                    sent = request.get();
                  } catch (RuntimeException e) {
                    reply.completeExceptionally(e);
                    return;
                  }
                  sent.handle( // handle: no CompletionException per failed reply
                      (ok, failure) ->
                          failure == null
                              ? reply.complete(ok)
                              : reply.completeExceptionally(failure));
                },
                0));
    return reply;
  }

  private static final IntPredicate EVERY_NODE = index -> true;
  private static final CompletableFuture<Boolean> NOTHING_TO_DELETE =
      CompletableFuture.completedFuture(Boolean.TRUE);

  private CompletableFuture<Void> release(
      List<String> resources,
      List<String> keys,
      String token,
      IntPredicate mayHold,
      CompletableFuture<Void> majority,
      CompletableFuture<Void> sent,
      Round.Request request) {
    CompletableFuture<Round.Result> settled = new CompletableFuture<>();
    AtomicInteger answered = new AtomicInteger();
    dispatch(
        () -> {
          Round round =
              Round.start(
                  nodes,
                  quorum,
                  roundTimeouts,
                  (index, node) -> {
                    CompletionStage<Boolean> reply =
                        mayHold.test(index) ? request.send(index, node) : NOTHING_TO_DELETE;
                    if (majority != null) {
                      // handle: no CompletionException per failed reply (see Round.start)
                      reply.handle(
                          (ok, error) -> {
                            if (error == null && answered.incrementAndGet() == quorum) {
                              majority.complete(null);
                            }
                            return null;
                          });
                    }
                    return reply;
                  });
          if (sent != null) {
            sent.complete(null);
          }
          round
              .settled()
              .whenComplete(
                  (result, e) -> {
                    if (e == null) {
                      settled.complete(result);
                    } else {
                      settled.completeExceptionally(e);
                    }
                  });
        });
    CompletableFuture<Void> done =
        settled.thenAccept(
            result -> {
              int unconfirmed =
                  result.count(Vote.TIMEOUT)
                      + result.count(Vote.ERROR)
                      + result.count(Vote.STALLED);
              if (unconfirmed > 0) {
                unconfirmedRelease(resources, unconfirmed, result);
              }
            });
    releasing.add(done);
    done.whenComplete(
        (ignored, error) -> {
          releasing.remove(done);
          if (majority != null) {
            majority.complete(null);
          }
        });
    return done;
  }

  /**
   * Counts a release that some nodes did not confirm, and logs it: each one at DEBUG, and at
   * INFO the first, then one line per {@link #RELEASE_REPORT_INTERVAL_NANOS} with how many
   * there were since the last line. A stalled or lost node leaves every release unconfirmed,
   * thousands a second under load: one line per release would flood the log (the transport
   * tells the node's story once, see docs/production.md).
   */
  private void unconfirmedRelease(List<String> resources, int unconfirmed, Round.Result result) {
    if (log.isDebugEnabled()) {
      log.debug(
          "release unconfirmed on {} of {} nodes, their keys expire with the ttl: resource={}"
              + " outcomes={}",
          unconfirmed,
          nodes.size(),
          Printable.of(String.valueOf(resources)),
          result.outcomes());
    }
    unconfirmedReleases.incrementAndGet();
    long now = time.nanoTime();
    long last = lastReleaseReport.get();
    if (last != NEVER && now - last < RELEASE_REPORT_INTERVAL_NANOS) {
      return;
    }
    if (!lastReleaseReport.compareAndSet(last, now)) {
      return; // another thread writes this line
    }
    long count = unconfirmedReleases.getAndSet(0);
    log.info(
        "{} release(s) unconfirmed on some nodes{}, their keys expire with the ttl;"
            + " the latest: resource={} outcomes={}",
        count,
        last == NEVER ? "" : " in the last " + Durations.formatNanos(now - last),
        Printable.of(String.valueOf(resources)),
        result.outcomes());
  }

  /** At most one INFO line about unconfirmed releases per this many nanoseconds: 10 s. */
  static final long RELEASE_REPORT_INTERVAL_NANOS = 10_000_000_000L;

  private static final long NEVER = Long.MIN_VALUE;
  private final java.util.concurrent.atomic.AtomicLong unconfirmedReleases =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong lastReleaseReport =
      new java.util.concurrent.atomic.AtomicLong(NEVER);

  /**
   * Runs {@code task}, which sends requests, now, or on the timer when this thread is
   * delivering a node's answer.
   *
   * <p>Why: a transport's answer may arrive on the event loop of one node's connection, and
   * Netty writes at once when called on a channel's own event loop but queues writes from
   * other threads. A request sent from there (a cleanup after a failed attempt, say) could
   * overtake a request for the same node that another thread made earlier and that still
   * waits in that loop's queue: the cleanup would run before the lock request it undoes.
   * Sent from any thread but an event loop, both queue in the order they were made. Only the
   * requests the algorithm sends in reaction to an answer pay for the hop; the requests
   * callers make are sent from their own threads.
   */
  void dispatch(Runnable task) {
    if (Round.isAnswering()) {
      time.schedule(task, 0);
    } else {
      task.run();
    }
  }

  String newToken() {
    return tokens.next();
  }

  /** A random delay of {@code retryDelay ± retryJitter}, in nanoseconds, never negative. */
  public long retryDelayNanos() {
    long delay = config.retryDelay().toNanos();
    long jitter = config.retryJitter().toNanos();
    if (jitter == 0) {
      return delay;
    }
    long offset;
    synchronized (random) {
      offset = (long) ((random.nextDouble() * 2 - 1) * jitter);
    }
    return Math.max(0, delay + offset);
  }

  void track(HeldLease lease) {
    live.add(lease);
    if ((tracked.incrementAndGet() & 1023) == 0) {
      // A lease nobody releases or watches becomes lost only when looked at; drop the ones
      // past their deadline now and then, so that "acquire and let it expire" cannot grow
      // this set without end. Their keys expire on the nodes by themselves.
      live.removeIf(HeldLease::isPastDeadline);
    }
  }

  void forget(HeldLease lease) {
    live.remove(lease);
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("this Redlock is closed");
    }
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Stops new acquisitions and releases every live lease. The future completes once every
   * acquisition is decided and has undone or released what it set, and every release has
   * settled: then, and only then, may the node clients be closed without leaving a key of
   * this instance behind on a node that is reachable, slow or paused. That takes about two
   * node timeouts at most (an attempt's decision, then its undo). Does not close the clients.
   */
  public CompletableFuture<Void> close() {
    // The flag first, then the sets: an acquisition or a lease added concurrently either is
    // in the set when it is read here, or sees the flag itself (see acquire and Acquisition).
    closed = true;
    guard.close();
    for (Acquisition acquisition : acquiring) {
      acquisition.abort();
    }
    // The batcher last: releasing 100,000 leases takes seconds, and the leases not released
    // yet must be extended meanwhile, or their validity runs out and each is reported lost
    // (a WARN line, and its listeners told) only because this loop had not reached it.
    for (HeldLease lease : live) {
      lease.releaseInternal();
    }
    batcher.close();
    return drained();
  }

  /**
   * Completes when no acquisition and no release is in flight. Work that starts while it waits
   * (an undo after a decision, a lease granted meanwhile and released) is waited for too: the
   * sets are read again each time what was read before has completed.
   */
  private CompletableFuture<Void> drained() {
    // Done futures may linger in the sets for a moment (their removal is a dependent action
    // like this one, run in any order): they are finished work, not pending.
    List<CompletableFuture<?>> pending = new ArrayList<>();
    for (CompletableFuture<Void> release : releasing) {
      if (!release.isDone()) {
        pending.add(release);
      }
    }
    for (Acquisition acquisition : acquiring) {
      if (!acquisition.finished().isDone()) {
        pending.add(acquisition.finished());
      }
    }
    if (pending.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
        .handle((ignored, error) -> null)
        .thenCompose(ignored -> drained());
  }

  /**
   * Checks a ttl given to a method and returns it in whole milliseconds, the unit Redis
   * expires keys in.
   *
   * @throws NullPointerException if {@code ttl} is null
   * @throws io.redlock.RedlockConfigException if {@link TtlRule} refuses it under this
   *     configuration
   */
  public long checkTtl(Duration ttl) {
    if (ttl == null) {
      throw new NullPointerException("ttl");
    }
    TtlRule.Problem problem =
        TtlRule.check(ttl, config.maxTtl(), config.nodeTimeout(), config.driftFactor());
    if (problem != null) {
      throw TtlRule.refused(ttl, problem, config.maxTtl(), config.nodeTimeout());
    }
    return ttl.toMillis();
  }

  /**
   * Checks resource names given to a method and returns them as an immutable list.
   *
   * @throws NullPointerException naming the resource name that is null
   * @throws IllegalArgumentException if a name is empty, too long or given twice
   */
  public List<String> checkResources(Collection<String> resources) {
    if (resources == null) {
      throw new NullPointerException("resources");
    }
    if (resources.isEmpty()) {
      throw new IllegalArgumentException("resources: at least one resource name is required");
    }
    int prefixBytes = prefixBytes();
    if (resources.size() == 1) {
      // The common case, without the bookkeeping for duplicates; the name is checked before
      // it is copied, so that a null one is named. copyOf keeps a list that is already
      // immutable (Redlock passes List.of), so the common path allocates no second list.
      checkName(resources.iterator().next(), prefixBytes);
      return List.copyOf(resources);
    }
    List<String> names = new ArrayList<>(resources.size());
    Set<String> seen = new HashSet<>();
    for (String name : resources) {
      checkName(name, prefixBytes);
      if (!seen.add(name)) {
        throw new IllegalArgumentException(
            "resource '" + name + "' is named twice: each resource may appear once");
      }
      names.add(name);
    }
    return List.copyOf(names);
  }

  private int prefixBytes() {
    String prefix = config.keyPrefix();
    return prefix.isEmpty() ? 0 : prefix.getBytes(StandardCharsets.UTF_8).length;
  }

  private static void checkName(String name, int prefixBytes) {
    if (name == null) {
      throw new NullPointerException("resource name");
    }
    if (name.isEmpty()) {
      throw new IllegalArgumentException(
          "resource name is empty: it must be 1 to "
              + RedlockConfig.MAX_KEY_BYTES
              + " bytes in UTF-8, key prefix included");
    }
    // Anywhere in the name, not only at its start: without a key prefix, the name
    // "app:__redlock_fence__:x" is the key of another application's (prefix "app:") fencing
    // counter.
    if (name.contains(Fencing.RESERVED)) {
      throw new IllegalArgumentException(
          "resource name '"
              + Printable.of(name)
              + "' is not accepted: names containing '"
              + Fencing.RESERVED
              + "' are reserved for the library's own keys");
    }
    // A UTF-8 encoding takes at most 3 bytes per UTF-16 char: short names need no encoding.
    if (prefixBytes + 3L * name.length() <= RedlockConfig.MAX_KEY_BYTES) {
      return;
    }
    int bytes = prefixBytes + name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > RedlockConfig.MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "resource name of "
              + bytes
              + " bytes (key prefix included) is too long: it must be 1 to "
              + RedlockConfig.MAX_KEY_BYTES
              + " bytes in UTF-8");
    }
  }

  private List<String> keysFor(List<String> resources) {
    String prefix = config.keyPrefix();
    if (prefix.isEmpty()) {
      return resources;
    }
    List<String> keys = new ArrayList<>(resources.size());
    for (String resource : resources) {
      keys.add(prefix.concat(resource)); // one exact-sized copy (concatenation compiles inline)
    }
    return List.copyOf(keys);
  }
}
