package io.redlock.randomized;

import io.redlock.fake.FakeTime;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One client's connection to one {@link SimNodeStore}, as one TCP connection.
 *
 * <p>Requests arrive at the node in the order they were sent and replies come back in the
 * order the node answered, each after a random delay of the {@link Network}. A request may be
 * lost (never executed) and a reply may be lost (executed, never answered): the transport then
 * fails the request with a {@link TimeoutException} after its own timeout, as the
 * {@link NodeClient} contract asks. A request sent while the node is down fails at once; one
 * sent or arriving after the connection broke (the node crashed or restarted since this
 * connection was made) fails with a reset, as on a real socket, and is not executed: only
 * after the client has run the disconnect listeners does it connect to the new process. Replies and disconnect events reach
 * the client through its {@link ClientProcess}, so a paused client sees them late.
 */
final class SimConnection implements NodeClient {
  private final SimNodeStore node;
  private final FakeTime truth;
  private final ClientProcess process;
  private final Network network;
  private final List<Runnable> disconnectListeners = new ArrayList<>();
  private int connectedTo;
  private long lastArrival;
  private long lastReply;
  private boolean closed;

  SimConnection(SimNodeStore node, FakeTime truth, ClientProcess process, Network network) {
    this.node = node;
    this.truth = truth;
    this.process = process;
    this.network = network;
    this.connectedTo = node.epoch();
    node.attach(this);
  }

  @Override
  public String name() {
    return node.name;
  }

  @Override
  public CompletionStage<Void> connected() {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis) {
    return send(() -> node.keys.lock(keys, token, ttlMillis));
  }

  @Override
  public CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis) {
    return send(() -> node.keys.lockFenced(keys, counters, token, ttlMillis));
  }

  @Override
  public CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis, String recordKey) {
    return send(() -> node.lockFencedChecked(keys, counters, token, ttlMillis, recordKey));
  }

  @Override
  public CompletionStage<Boolean> fence(
      List<String> keys, List<String> counters, String token, long fencingToken) {
    return send(() -> node.fence(keys, counters, token, fencingToken));
  }

  @Override
  public CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis) {
    return send(() -> node.keys.extend(keys, token, ttlMillis));
  }

  @Override
  public CompletionStage<Boolean> unlock(List<String> keys, String token) {
    return send(() -> node.keys.unlock(keys, token));
  }

  @Override
  public CompletionStage<NodeInfo> info() {
    return send(node::info);
  }

  @Override
  public CompletionStage<NodeInfo> info(String markerKey) {
    return send(() -> node.info(markerKey));
  }

  @Override
  public CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    return send(() -> node.updateRecord(key, expected, value, runId));
  }

  @Override
  public CompletionStage<io.redlock.spi.MaxTtlRegister> raiseMaxTtl(
      String key, long maxTtlMillis, long holdMillis) {
    return send(() -> node.raiseMaxTtl(key, maxTtlMillis, holdMillis));
  }

  @Override
  public void onDisconnect(Runnable listener) {
    disconnectListeners.add(listener);
  }

  @Override
  public void close() {
    closed = true;
  }

  /**
   * The node's process died or restarted. As on TCP, the client sees the connection close
   * only after the replies the node sent before it (they were already on their way); and it
   * learns it only when it next runs, and only then connects again: until then requests fail
   * on the dead socket. The listeners run before any request can reach the node over the new
   * connection, as the contract asks.
   */
  void disconnected() {
    long now = truth.nanoTime();
    long at = Math.max(now, lastReply);
    lastReply = at;
    truth.schedule(
        () ->
            process.run(
                () -> {
                  disconnectListeners.forEach(Runnable::run);
                  connectedTo = node.epoch();
                }),
        at - now);
  }

  private <T> CompletionStage<T> send(Supplier<T> operation) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException(node.name + ": closed"));
    }
    if (node.isDown()) {
      return CompletableFuture.failedFuture(new Refused(node.name + ": refused"));
    }
    if (connectedTo != node.epoch()) {
      return CompletableFuture.failedFuture(new Refused(node.name + ": connection reset"));
    }
    if (network.immediate) {
      try {
        return CompletableFuture.completedFuture(operation.get());
      } catch (io.redlock.fake.Keyspace.ErrorReply errorReply) { // what Redis answers with an error
        return CompletableFuture.failedFuture(errorReply);
      }
    }
    CompletableFuture<T> reply = new CompletableFuture<>();
    long now = truth.nanoTime();
    if (network.lost()) {
      failLater(reply);
      return reply;
    }
    boolean replyLost = network.lost();
    int epoch = connectedTo;
    long arrival = Math.max(lastArrival, now + network.delayNanos());
    lastArrival = arrival;
    truth.schedule(() -> arrive(operation, epoch, replyLost, reply), arrival - now);
    return reply;
  }

  private <T> void arrive(
      Supplier<T> operation, int epoch, boolean replyLost, CompletableFuture<T> reply) {
    if (node.isDown() || node.epoch() != epoch) {
      process.run(() -> reply.completeExceptionally(new Refused(node.name + ": connection reset")));
      return;
    }
    T answer;
    io.redlock.fake.Keyspace.ErrorReply error;
    try {
      answer = operation.get();
      error = null;
    } catch (io.redlock.fake.Keyspace.ErrorReply errorReply) { // what Redis answers with an error
      answer = null;
      error = errorReply;
    }
    if (replyLost) {
      failLater(reply);
      return;
    }
    long now = truth.nanoTime();
    long back = Math.max(lastReply, now + network.delayNanos());
    lastReply = back;
    T answered = answer;
    io.redlock.fake.Keyspace.ErrorReply failed = error;
    truth.schedule(
        () ->
            process.run(
                () -> {
                  if (failed != null) {
                    reply.completeExceptionally(failed);
                  } else {
                    reply.complete(answered);
                  }
                }),
        back - now);
  }

  private void failLater(CompletableFuture<?> reply) {
    truth.schedule(
        () ->
            process.run(() -> reply.completeExceptionally(new NoAnswer(node.name + ": no answer"))),
        network.transportTimeoutNanos);
  }

  /** A refused or reset connection; without a stack trace, as there are many. */
  private static final class Refused extends ConnectException {
    Refused(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  /** A request the transport gave up waiting for; without a stack trace. */
  private static final class NoAnswer extends TimeoutException {
    NoAnswer(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
