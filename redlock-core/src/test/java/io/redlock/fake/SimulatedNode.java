package io.redlock.fake;

import io.redlock.spi.NodeClient;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * An in-memory Redis master for unit tests of the algorithm, on a {@link FakeTime}.
 *
 * <p>It keeps its keys in a {@link Keyspace}, which has the semantics of the real transport's
 * Lua scripts (the shared {@link io.redlock.spi.contract.NodeClientContract} checks that).
 * Faults are set by intention-named methods: {@link #latency}, {@link #crash} (refuses
 * requests), {@link #pause} (holds requests unanswered until {@link #resume}, as
 * {@code SIGSTOP} does), {@link #restartEmpty}. Requests are executed in the order they were
 * sent, as on one TCP connection.
 *
 * <p>Thread-safe.
 */
public final class SimulatedNode implements NodeClient {
  /** How long a node has been up when a test creates it: long past any hold-back. */
  public static final Duration INITIAL_UPTIME = Duration.ofHours(1);

  private final String name;
  private final FakeTime time;
  private final java.util.List<Runnable> disconnectListeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private String runId = java.util.UUID.randomUUID().toString();
  private long startedAt;
  private long clockOffsetNanos;
  private String role = "master";
  private io.redlock.spi.NodeInfo.Persistence persistence;
  private String refusal;
  private String registerRefusal;
  private io.redlock.spi.NodeInfo.Memory memory =
      new io.redlock.spi.NodeInfo.Memory(0, "noeviction");
  private Long uptimeClaimFrom;
  private long evictedKeys;

  /** The max-ttl register, kept apart from the keys so that tests counting keys miss it. */
  private final Keyspace register = new Keyspace(this::nodeNow);

  private final Keyspace keyspace = new Keyspace(this::nodeNow);
  private final Queue<Runnable> held = new ArrayDeque<>();
  private long latencyNanos;
  private long lockLatencyNanos;
  private volatile Runnable onLockRequest = () -> {};
  private volatile Runnable onUnlockRequest = () -> {};
  private boolean crashed;
  private boolean paused;
  private boolean closed;
  private final AtomicInteger locks = new AtomicInteger();
  private final AtomicInteger infos = new AtomicInteger();
  private final AtomicInteger extends_ = new AtomicInteger();
  private final AtomicInteger unlocks = new AtomicInteger();
  private final AtomicInteger batches = new AtomicInteger();
  private final AtomicInteger batched = new AtomicInteger();

  public SimulatedNode(String name, FakeTime time) {
    this.name = name;
    this.time = time;
    this.startedAt = time.nanoTime() - INITIAL_UPTIME.toNanos();
  }

  @Override
  public CompletionStage<io.redlock.spi.NodeInfo> info() {
    infos.incrementAndGet();
    synchronized (this) {
      if (crashed) {
        return CompletableFuture.failedFuture(new ConnectException(name + ": connection refused"));
      }
    }
    return submitInfo();
  }

  @Override
  public CompletionStage<io.redlock.spi.NodeInfo> info(String markerKey) {
    return info()
        .thenApply(
            info -> {
              synchronized (this) {
                return new io.redlock.spi.NodeInfo(
                    info.runId(),
                    info.role(),
                    info.uptimeSeconds(),
                    info.serverTimeMicros(),
                    keyspace.valueOf(markerKey),
                    persistence,
                    memory,
                    info.version(),
                    evictedKeys);
              }
            });
  }

  @Override
  public CompletionStage<String> findLockKeys(String markerKey, String keyPrefix) {
    return submitText(() -> lockKeys(markerKey, keyPrefix));
  }

  @Override
  public CompletionStage<String> writeMarker(
      String markerKey, String markerValue, String keyPrefix, boolean force) {
    return submitText(
        () -> {
          String found = force ? "" : lockKeys(markerKey, keyPrefix);
          if (found.isEmpty()) {
            keyspace.putPersistent(markerKey, markerValue + runId);
          }
          return found;
        });
  }

  @Override
  public CompletionStage<io.redlock.spi.MaxTtlRegister> readMaxTtl(String key) {
    return submitValue(
        () -> io.redlock.spi.MaxTtlRegister.read(register.valueOf(key), nodeNow() / 1_000_000L));
  }

  @Override
  public CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    return submitValue(
        () -> {
          String current = keyspace.valueOf(key);
          String held = current == null ? "" : current;
          if (!this.runId.equals(runId) || !expected.equals(held)) {
            return held;
          }
          keyspace.putPersistent(key, value);
          return null;
        });
  }

  @Override
  public CompletionStage<io.redlock.spi.MaxTtlRegister> raiseMaxTtl(
      String key, long maxTtlMillis, long holdMillis) {
    synchronized (this) {
      if (registerRefusal != null) {
        return CompletableFuture.failedFuture(new IllegalStateException(registerRefusal));
      }
    }
    return submitValue(() -> register.raiseMaxTtl(key, maxTtlMillis, holdMillis));
  }

  /**
   * The longest live value of the max-ttl register (default key prefix), or 0 if none; kept
   * apart from the keys so that tests counting keys do not see it (Redis keeps it as a key);
   * an empty restart forgets it.
   */
  public synchronized long maxTtlRegister() {
    io.redlock.spi.MaxTtlRegister held =
        io.redlock.spi.MaxTtlRegister.read(
            register.valueOf(io.redlock.FreshMarker.maxTtlKey("")),
            Math.floorDiv(nodeNow(), 1_000_000L));
    return held == null ? 0 : held.maxTtlMillis();
  }

  /**
   * Raises the max-ttl register (default key prefix) as a client with that {@code maxTtl}
   * would, for {@code hold}.
   */
  public synchronized void maxTtlRegister(Duration maxTtl, Duration hold) {
    register.raiseMaxTtl(io.redlock.FreshMarker.maxTtlKey(""), maxTtl.toMillis(), hold.toMillis());
  }

  private String lockKeys(String markerKey, String keyPrefix) {
    String own = keyPrefix + io.redlock.FreshMarker.OWN_KEYS;
    int count = keyspace.count(key -> !key.startsWith(own) && key.startsWith(keyPrefix));
    return count == 0 ? "" : "holds " + count + " key(s) that may be locks";
  }

  private CompletionStage<String> submitText(Supplier<String> operation) {
    return submitValue(operation);
  }

  /** Like {@link #submit}, for an operation that answers something other than a vote. */
  private <T> CompletionStage<T> submitValue(Supplier<T> operation) {
    return submitValue(operation, false);
  }

  private <T> CompletionStage<T> submitValue(Supplier<T> operation, boolean lock) {
    List<T> answer = new java.util.ArrayList<>(1);
    return submit(
            () -> {
              answer.add(operation.get());
              return true;
            },
            lock)
        .thenApply(ok -> answer.get(0));
  }

  @Override
  public void onDisconnect(Runnable listener) {
    disconnectListeners.add(listener);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CompletionStage<Void> connected() {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
    locks.incrementAndGet();
    onLockRequest.run();
    return submit(() -> keyspace.lock(keys, token, ttlMillis), true);
  }

  @Override
  public CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis) {
    locks.incrementAndGet();
    onLockRequest.run();
    return submitValue(() -> keyspace.lockFenced(keys, counters, token, ttlMillis), true);
  }

  @Override
  public CompletionStage<Boolean> fence(
      List<String> keys, List<String> counters, String token, long fencingToken) {
    return submit(() -> keyspace.fence(keys, counters, token, fencingToken));
  }

  @Override
  public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
    extends_.incrementAndGet();
    return submit(() -> keyspace.extend(keys, token, ttlMillis));
  }

  /**
   * One request for the whole batch, as the default transport sends one script: executed in
   * one step, each lease's keys checked against its own token.
   */
  @Override
  public CompletionStage<List<Boolean>> extendBatch(List<io.redlock.spi.ExtendRequest> requests) {
    batches.incrementAndGet();
    batched.addAndGet(requests.size());
    extends_.addAndGet(requests.size());
    return submitValue(
        () -> {
          List<Boolean> each = new java.util.ArrayList<>(requests.size());
          for (io.redlock.spi.ExtendRequest r : requests) {
            each.add(keyspace.extend(r.keys(), r.token(), r.ttlMillis()));
          }
          return List.copyOf(each);
        });
  }

  @Override
  public CompletionStage<Boolean> unlock(List<String> keys, String token) {
    unlocks.incrementAndGet();
    onUnlockRequest.run();
    return submit(() -> keyspace.unlock(keys, token));
  }

  /**
   * Closes the client side, as a closed connection: requests from now on fail at once; those
   * already sent still run, on a paused node when it resumes, as bytes already written do.
   */
  @Override
  public synchronized void close() {
    closed = true;
  }

  // ---- faults ----

  /** Every request from now on is executed and answered {@code latency} after it is sent. */
  public synchronized SimulatedNode latency(Duration latency) {
    this.latencyNanos = latency.toNanos();
    return this;
  }

  /**
   * Locks and fenced locks are executed and answered {@code latency} later than the other
   * requests: as on a transport that carries locks and extensions on two connections, with no
   * order between them, the locks' the slower.
   */
  public synchronized SimulatedNode lockLatency(Duration latency) {
    this.lockLatencyNanos = latency.toNanos();
    return this;
  }

  /** The node is down: requests fail at once, as on a refused connection. Keys are kept. */
  public void crash() {
    synchronized (this) {
      crashed = true;
    }
    disconnectListeners.forEach(Runnable::run);
  }

  /** Comes back after {@link #crash()} as a new process with the keys it had (persistence). */
  public synchronized void recover() {
    crashed = false;
    newProcess();
  }

  /**
   * A copy of every key, the record included, as a backup holds them; the max-ttl register,
   * kept apart here, is not in it (a real backup holds it too).
   */
  public synchronized java.util.Map<String, Object> copyData() {
    return keyspace.snapshot();
  }

  /**
   * Comes back after {@link #crash()} as a new process on {@code copy} (from {@link #copyData}):
   * a restored backup.
   */
  public synchronized void recoverFrom(java.util.Map<String, Object> copy) {
    keyspace.restore(copy);
    recover();
  }

  /** Restarts with no keys, as a process without persistence does. */
  public void restartEmpty() {
    boolean wasUp;
    synchronized (this) {
      wasUp = !crashed;
      crashed = false;
      keyspace.clear();
      register.clear();
      newProcess();
    }
    if (wasUp) {
      disconnectListeners.forEach(Runnable::run);
    }
  }

  /** Moves the node's wall clock forward: Redis expires keys by it, so they expire early. */
  public synchronized void jumpClock(Duration forward) {
    clockOffsetNanos += forward.toNanos();
  }

  /** What the node reports about its persistence from now on ({@code null}: unknown). */
  public synchronized void persistence(io.redlock.spi.NodeInfo.Persistence persistence) {
    this.persistence = persistence;
  }

  /**
   * Makes the node answer raises of the max-ttl register with {@code error} (none with
   * {@code null}), while lock commands still succeed.
   */
  public synchronized void refuseRegister(String error) {
    this.registerRefusal = error;
  }

  /**
   * What the node reports about its memory limit and eviction policy from now on ({@code
   * null}: could not be read).
   */
  public synchronized void memory(io.redlock.spi.NodeInfo.Memory memory) {
    this.memory = memory;
  }

  /**
   * Evicts {@code key} as a node at its memory limit does: the key is gone and {@code
   * evicted_keys} grows.
   */
  public synchronized void evict(String key) {
    keyspace.remove(key);
    evictedKeys++;
  }

  /** Deletes every key in place, as {@code FLUSHALL} does: the process stays the same. */
  public synchronized void flushAll() {
    keyspace.clear();
  }

  /** Makes the node answer its probes with an error, as under an ACL without INFO. */
  public synchronized void refuseInfo(String error) {
    this.refusal = error;
  }

  /**
   * Restarts empty, as {@link #restartEmpty()}, but reports {@code uptime} at once: a process
   * whose wall clock stepped forward right after it started.
   */
  public void restartEmptyClaimingUptime(Duration uptime) {
    restartEmpty();
    synchronized (this) {
      uptimeClaimFrom = time.nanoTime() - uptime.toNanos();
    }
  }

  /** The run id of the current process. */
  public synchronized String runId() {
    return runId;
  }

  /** Sets a key without expiry, as {@code SET key value} does. */
  public synchronized void putPersistent(String key, String value) {
    keyspace.putPersistent(key, value);
  }

  /** Makes this node report itself as a replica. */
  public synchronized void becomeReplica() {
    role = "slave";
  }

  /** Makes this node report itself as a master again. */
  public synchronized void becomeMaster() {
    role = "master";
  }

  /** How many times the node was asked for its {@code INFO}. */
  public int infoRequests() {
    return infos.get();
  }

  /** Makes this node report the same process id as {@code other}: one server, two names. */
  public synchronized void sameServerAs(SimulatedNode other) {
    runId = other.runId;
  }

  private void newProcess() {
    evictedKeys = 0;
    runId = java.util.UUID.randomUUID().toString();
    startedAt = time.nanoTime();
    uptimeClaimFrom = null;
  }

  private long nodeNow() {
    return time.nanoTime() + clockOffsetNanos;
  }

  /** Holds requests unanswered and unexecuted, as a process stopped by {@code SIGSTOP}. */
  public synchronized void pause() {
    paused = true;
  }

  /** Executes the held requests in order and answers them, as after {@code SIGCONT}. */
  public void resume() {
    while (true) {
      Runnable next;
      synchronized (this) {
        next = held.poll();
        if (next == null) {
          paused = false;
          return;
        }
      }
      next.run();
    }
  }

  // ---- inspection ----

  /**
   * The node's keys, unguarded: for a test that sends requests and looks at keys on one
   * thread only (with no latency, every request runs on the sending thread).
   */
  Keyspace keyspace() {
    return keyspace;
  }

  /** The live value of {@code key}, or {@code null}. */
  public synchronized String valueOf(String key) {
    return keyspace.valueOf(key);
  }

  /** Milliseconds until {@code key} expires, or -2 if it does not exist (as {@code PTTL}). */
  public synchronized long pttl(String key) {
    return keyspace.pttl(key);
  }

  /** Sets a key as another client would ({@code SET key value PX ttl}). */
  public synchronized void put(String key, String value, Duration ttl) {
    keyspace.put(key, value, ttl);
  }

  /** Number of live keys. */
  public synchronized int size() {
    return keyspace.count(key -> true);
  }

  /**
   * Runs {@code action} on the sending thread each time a lock request is sent, after it is
   * counted and before it is executed: a test acts at a known point of an attempt this way,
   * without waiting for it.
   */
  public void onLockRequest(Runnable action) {
    onLockRequest = action;
  }

  /** Like {@link #onLockRequest}, for each release (unlock) request. */
  public void onUnlockRequest(Runnable action) {
    onUnlockRequest = action;
  }

  public int lockRequests() {
    return locks.get();
  }

  /** How many lease extensions the node was asked for, alone or in a batch. */
  public int extendRequests() {
    return extends_.get();
  }

  public int unlockRequests() {
    return unlocks.get();
  }

  /** How many batches of extensions ({@code extendBatch}) the node was sent. */
  public int batchRequests() {
    return batches.get();
  }

  /** How many leases those batches carried, together. */
  public int batchedExtensions() {
    return batched.get();
  }

  // ---- internals ----

  private CompletionStage<io.redlock.spi.NodeInfo> submitInfo() {
    CompletableFuture<io.redlock.spi.NodeInfo> reply = new CompletableFuture<>();
    submit(
            () -> {
              synchronized (this) {
                if (refusal != null) {
                  reply.completeExceptionally(new IllegalStateException(refusal));
                  return true;
                }
                long since = uptimeClaimFrom != null ? uptimeClaimFrom : startedAt;
                long up = (time.nanoTime() - since) / 1_000_000_000L;
                reply.complete(
                    new io.redlock.spi.NodeInfo(
                        runId,
                        role,
                        up,
                        java.util.concurrent.TimeUnit.NANOSECONDS.toMicros(nodeNow())));
              }
              return true;
            })
        .whenComplete(
            (ok, error) -> {
              if (error != null) {
                reply.completeExceptionally(error);
              }
            });
    return reply;
  }

  private CompletionStage<Boolean> submit(Supplier<Boolean> operation) {
    return submit(operation, false);
  }

  /** {@code lock}: a lock or fenced lock, which {@link #lockLatency} delays further. */
  private CompletionStage<Boolean> submit(Supplier<Boolean> operation, boolean lock) {
    CompletableFuture<Boolean> reply = new CompletableFuture<>();
    Runnable execute =
        () -> {
          Boolean answer;
          synchronized (this) {
            if (crashed) {
              reply.completeExceptionally(new ConnectException(name + ": connection refused"));
              return;
            }
            try {
              answer = operation.get();
            } catch (Keyspace.ErrorReply errorReply) { // what Redis answers with an error
              reply.completeExceptionally(errorReply);
              return;
            }
          }
          reply.complete(answer);
        };
    long delay;
    synchronized (this) {
      if (closed) {
        return CompletableFuture.failedFuture(new ConnectException(name + ": client closed"));
      }
      if (crashed) {
        return CompletableFuture.failedFuture(new ConnectException(name + ": connection refused"));
      }
      if (paused) {
        held.add(execute);
        return reply;
      }
      delay = latencyNanos + (lock ? lockLatencyNanos : 0);
    }
    if (delay == 0) {
      execute.run();
    } else {
      time.schedule(
          () -> {
            boolean hold;
            synchronized (this) {
              hold = paused;
              if (hold) {
                held.add(execute);
              }
            }
            if (!hold) {
              execute.run();
            }
          },
          delay);
    }
    return reply;
  }
}
