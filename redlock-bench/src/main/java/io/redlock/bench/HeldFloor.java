package io.redlock.bench;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.SetArgs;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandType;
import io.redlock.spi.ExtendRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * The floor of holding many leases with this library's batched extensions (issue 26, item 2):
 * what any client that keeps N keys alive on every node with this library's extension script
 * costs here, so that the held-lease figures are read against a floor of the same run. The keys
 * go in chunks of {@value #CHUNK} in the order they were taken (the library's largest batch);
 * every half ttl (the library extends a lease when half its ttl is left) each chunk goes to
 * every node as one {@code EXTEND_BATCH} script, this library's own, read from {@code
 * io.redlock.lettuce.Script} and encoded as its transport encodes it ({@link
 * TransportEncoding#batchBody}).
 *
 * <p>Nothing else: the answers are not read beyond their arrival, so no lease is judged on its
 * majority or validity, no node timeout or restart guard runs, no listener, metric or log is
 * told, and the keys, tokens and requests of a chunk are made once, not per extension (the
 * library makes a batch's requests each time; they stay in the floor's heap per lock). Each
 * time a chunk goes, it is encoded once for every node, as the transport encodes a batch.
 * A chunk is sent on the floor's one timer thread, as the library sends its batches. The keys
 * are taken with {@code SET NX PX} on every node; which keys the floor lost it cannot tell
 * ({@link #lost} answers -1): the servers' expired keys say it.
 */
final class HeldFloor implements HeldLocks {
  /** The floor's name, as in {@code --impls}. */
  static final String NAME = "lettuce-batch-floor";

  /** The keys of one script: {@value}, as the library's largest batch. */
  static final int CHUNK = 1000;

  private final List<String> uris;
  private final Duration ttl;
  private final Fanout fanout;
  private final byte[] extendSha;
  private final byte[] unlockSha;
  private final ScheduledExecutorService timer;
  private final AtomicLong sequence = new AtomicLong(ThreadLocalRandom.current().nextLong());
  private final List<ScheduledFuture<?>> schedules = new ArrayList<>();
  private volatile String[] keys = new String[0];
  private volatile String[] tokens = new String[0];

  HeldFloor(List<String> uris, Duration ttl) {
    this.uris = uris;
    this.ttl = ttl;
    this.fanout = new Fanout(uris);
    try {
      this.extendSha = fanout.load(FencedFloor.source("EXTEND_BATCH"));
      this.unlockSha = fanout.load(FencedFloor.source("UNLOCK"));
    } catch (ReflectiveOperationException | RuntimeException e) {
      fanout.close();
      throw new IllegalStateException("the floor could not load the library's scripts", e);
    }
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread thread = new Thread(r, "held-floor-timer");
              thread.setDaemon(true);
              return thread;
            });
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int nodes() {
    return fanout.size();
  }

  /**
   * Takes the keys, {@link HeldLocks#IN_FLIGHT} at a time; each chunk's extensions start half a
   * ttl after its first key was asked for, once all its keys are held.
   */
  @Override
  public void hold(String prefix, int count) throws InterruptedException {
    String[] held = new String[count];
    String[] heldTokens = new String[count];
    int chunks = (count + CHUNK - 1) / CHUNK;
    long[] firstAsked = new long[chunks];
    AtomicInteger[] left = new AtomicInteger[chunks];
    for (int c = 0; c < chunks; c++) {
      left[c] = new AtomicInteger(Math.min(CHUNK, count - c * CHUNK));
    }
    SetArgs nx = SetArgs.Builder.nx().px(ttl.toMillis());
    HeldLocks.acquireAll(
        count,
        i -> {
          int c = i / CHUNK;
          if (i % CHUNK == 0) {
            firstAsked[c] = System.nanoTime();
          }
          String key = prefix + i;
          String token = Fanout.token(sequence);
          held[i] = key;
          heldTokens[i] = token;
          return everyNode(n -> fanout.node(n).set(key, token, nx), "OK", key)
              .thenRun(
                  () -> {
                    if (left[c].decrementAndGet() == 0) {
                      extendEvery(held, heldTokens, c, firstAsked[c]);
                    }
                  });
        });
    keys = held;
    tokens = heldTokens;
  }

  /** Sends chunk {@code c} of {@code keys} every half ttl from {@code firstAsked} on. */
  private void extendEvery(String[] keys, String[] tokens, int c, long firstAsked) {
    int from = c * CHUNK;
    int to = Math.min(keys.length, from + CHUNK);
    List<ExtendRequest> requests = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      requests.add(new ExtendRequest(List.of(keys[i]), tokens[i], ttl.toMillis()));
    }
    long period = ttl.toNanos() / 2;
    long delay = Math.max(0, firstAsked + period - System.nanoTime());
    Runnable send =
        () -> {
          // Encoded once for every node, as the transport encodes a batch.
          Object body = TransportEncoding.batchBody(requests);
          for (int n = 0; n < fanout.size(); n++) {
            fanout
                .node(n)
                .dispatch(
                    CommandType.EVALSHA,
                    new ValueOutput<>(TransportEncoding.CODEC),
                    TransportEncoding.withScript(body, extendSha));
          }
        };
    synchronized (schedules) {
      schedules.add(timer.scheduleAtFixedRate(send, delay, period, TimeUnit.NANOSECONDS));
    }
  }

  /** Asks every node at once; completes once each answered {@code expected}. */
  private CompletableFuture<Void> everyNode(
      IntFunction<RedisFuture<String>> request, String expected, String key) {
    CompletableFuture<?>[] answers = new CompletableFuture<?>[fanout.size()];
    for (int n = 0; n < answers.length; n++) {
      int node = n;
      answers[n] =
          request
              .apply(n)
              .toCompletableFuture()
              .thenAccept(
                  answer -> {
                    if (!expected.equals(answer)) {
                      throw new IllegalStateException(
                          "node " + (node + 1) + " answered " + answer + " for " + key);
                    }
                  });
    }
    return CompletableFuture.allOf(answers);
  }

  /** Stops the extensions, then releases every key on every node (after the warm-up). */
  @Override
  public void releaseAll() throws InterruptedException {
    synchronized (schedules) {
      schedules.forEach(s -> s.cancel(false));
      schedules.clear();
    }
    String[] held = keys;
    String[] heldTokens = tokens;
    HeldLocks.acquireAll(
        held.length,
        i -> {
          // Every node's answer (an error is one), not a majority's: on return the keys are
          // gone everywhere, unless a node was silent for a whole round's limit.
          String[] key = {held[i]};
          CompletableFuture<?>[] answers = new CompletableFuture<?>[fanout.size()];
          for (int n = 0; n < answers.length; n++) {
            answers[n] =
                Fanout.evalsha(fanout.node(n), unlockSha, key, heldTokens[i])
                    .toCompletableFuture()
                    .handle((deleted, error) -> null);
          }
          return CompletableFuture.allOf(answers)
              .completeOnTimeout(null, Fanout.ROUND_LIMIT.toNanos(), TimeUnit.NANOSECONDS);
        });
    keys = new String[0];
    tokens = new String[0];
  }

  /** {@code SET NX PX} on every node at once, held at a majority, then the release script. */
  @Override
  public boolean takeAndRelease(String resource) {
    String token = Fanout.token(sequence);
    SetArgs nx = SetArgs.Builder.nx().px(ttl.toMillis());
    try {
      boolean held =
          Fanout.await(
              fanout.majority((n, node) -> node.set(resource, token, nx).thenApply("OK"::equals)));
      fanout.release(unlockSha, resource, token);
      return held;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public HeldLocks peer() {
    return new HeldFloor(uris, ttl);
  }

  @Override
  public long lost() {
    return -1;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    fanout.close();
  }
}
