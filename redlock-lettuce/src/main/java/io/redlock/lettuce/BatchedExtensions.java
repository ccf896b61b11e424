package io.redlock.lettuce;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeStalledException;
import java.net.ConnectException;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The batched auto-extension on one node ({@link io.redlock.spi.NodeClient#extendBatch}):
 * single-key leases with the same ttl go as one {@link Script#EXTEND_BATCH} script of at most
 * {@link LettuceTransport#MAX_BATCH_KEYS} keys, each key checked against its own lease's
 * token; a lease on several keys goes as an extension of its own. A batch that is one script
 * is encoded once for all the transport's nodes ({@link BatchBody.Last}).
 *
 * <p>By {@code EVALSHA} once the node has answered the script's {@code SCRIPT LOAD} on the
 * current connection ({@link RoundScripts}), by {@code EVAL} before that (and for good where an
 * ACL refuses the load), without a Lettuce timeout either way ({@link RoundCommand}: the rounds
 * of the batch's leases time out its votes). Never re-sent: a script the node answers {@code NOSCRIPT} (an operator emptied its
 * script cache) ran nothing, and every lease it carried gets that error as its vote on this
 * node, while the script is loaded again for the next batch. Re-sent later, an extension
 * could land after a newer one and shorten it (see {@link LettuceNodeClient}); a lost vote
 * only makes the lease count on the other nodes, and its next extension is due soon.
 *
 * <p>A script counts in the node's {@link NodeBacklog} as one request of its size, from the
 * moment it is handed to Lettuce until the node answers it; a backlog that refuses it fails
 * the whole batch at once, {@code STALLED}. Cancelling the batch's future (the batch's wait
 * passed) tells the backlog that its caller stopped waiting; the script stays counted until
 * the node answers it.
 *
 * <p>Thread-safe.
 */
final class BatchedExtensions {

  private final String name;
  private final NodeBacklog backlog;
  private final int maxKeys;
  private final RoundScripts scripts;
  private final LongConsumer scriptLost;
  private final LongSupplier connectionNumber;
  private final BatchBody.Last encoded;

  /**
   * @param scripts which scripts the node has loaded, on which connection
   * @param scriptLost told the connection number on which the node answered {@code NOSCRIPT}
   *     to the script: it goes by {@code EVAL} until loaded again
   * @param connectionNumber the current connection's number: a script answered on another
   *     connection than the one it was sent for fails (see {@link LettuceNodeClient#MADE_AGAIN})
   * @param encoded the last batch encoded by any node of the transport: a batch goes to every
   *     node, encoded once
   */
  BatchedExtensions(
      String name,
      NodeBacklog backlog,
      int maxKeys,
      RoundScripts scripts,
      LongConsumer scriptLost,
      LongSupplier connectionNumber,
      BatchBody.Last encoded) {
    this.name = name;
    this.backlog = backlog;
    this.maxKeys = maxKeys;
    this.scripts = scripts;
    this.scriptLost = scriptLost;
    this.connectionNumber = connectionNumber;
    this.encoded = encoded;
  }

  /**
   * Sends {@code requests} on {@code commands} ({@code null} when not connected), on the
   * connection {@code number}; a lease on several keys goes to {@code alone}. One future for
   * all the answers (see {@link io.redlock.spi.NodeClient#extendBatch}).
   */
  CompletableFuture<List<Boolean>> send(
      RedisAsyncCommands<String, String> commands,
      long number,
      List<ExtendRequest> requests,
      Function<ExtendRequest, CompletionStage<Boolean>> alone) {
    if (commands == null) {
      return CompletableFuture.failedFuture(new ConnectException(name + " is not connected"));
    }
    if (requests.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    boolean bySha = scripts.isLoaded(Script.EXTEND_BATCH, number);
    if (oneScript(requests)) {
      // The common case: one script for the whole batch, its answer as it comes.
      return sendScript(commands, number, bySha, encoded.of(requests));
    }
    // The requests of one script share a ttl.
    Map<Long, List<Integer>> byTtl = new LinkedHashMap<>();
    List<Integer> several = new ArrayList<>(0);
    for (int i = 0; i < requests.size(); i++) {
      ExtendRequest request = requests.get(i);
      if (request.keys().size() == 1) {
        byTtl.computeIfAbsent(request.ttlMillis(), ttl -> new ArrayList<>()).add(i);
      } else {
        several.add(i);
      }
    }
    List<int[]> partIndexes = new ArrayList<>();
    List<CompletableFuture<List<Boolean>>> parts = new ArrayList<>();
    for (List<Integer> indexes : byTtl.values()) {
      for (int from = 0; from < indexes.size(); from += maxKeys) {
        List<Integer> part = indexes.subList(from, Math.min(indexes.size(), from + maxKeys));
        partIndexes.add(part.stream().mapToInt(Integer::intValue).toArray());
        parts.add(sendScript(commands, number, bySha, BatchBody.encode(requests, part)));
      }
    }
    for (int index : several) {
      partIndexes.add(new int[] {index});
      parts.add(alone.apply(requests.get(index)).toCompletableFuture().thenApply(List::of));
    }
    return new Combined(requests.size(), partIndexes, parts);
  }

  /** Where the batches of this node are encoded: shared by the nodes of its transport. */
  BatchBody.Last encodedBatches() {
    return encoded;
  }

  /** Whether {@code requests} (not empty) fit one script: single keys, one ttl, few enough. */
  private boolean oneScript(List<ExtendRequest> requests) {
    if (requests.size() > maxKeys) {
      return false;
    }
    long ttlMillis = requests.get(0).ttlMillis();
    for (int i = 0; i < requests.size(); i++) {
      ExtendRequest request = requests.get(i);
      if (request.keys().size() != 1 || request.ttlMillis() != ttlMillis) {
        return false;
      }
    }
    return true;
  }

  /** One script of {@code body}. */
  private CompletableFuture<List<Boolean>> sendScript(
      RedisAsyncCommands<String, String> commands, long number, boolean bySha, BatchBody body) {
    long size = body.size();
    if (!backlog.admitBatch(size)) {
      return CompletableFuture.failedFuture(new NodeStalledException(backlog.batchRefusal()));
    }
    Batch batch = new Batch(body.keys(), number);
    CommandArgs<String, String> arguments =
        body.withScript(
            bySha
                ? RoundScripts.digest(Script.EXTEND_BATCH)
                : RoundScripts.source(Script.EXTEND_BATCH));
    // Counted as one request (no bytes) like a vote; its bytes in the batches' own budget,
    // until Lettuce lets go of the command whichever way.
    CountedVote<String, String> vote = new CountedVote<>(backlog, 0, Function.identity(), false);
    RedisFuture<String> command =
        commands.dispatch(
            bySha ? RoundCommand.EVALSHA : RoundCommand.EVAL,
            new ValueOutput<>(ExactUtf8Codec.UTF8),
            arguments);
    long counted = size;
    vote.follow(command);
    command
        .whenComplete((answer, error) -> backlog.batchLeft(counted))
        // The caller hears the answers only once their bytes are back in the budget: the
        // order of two callbacks on one future is not specified.
        .whenComplete((answer, error) -> vote.whenComplete(batch::answered));
    return batch;
  }

  /** The answers of one script: one character per key, {@code 1} for extended. */
  private static final class Answers extends AbstractList<Boolean> implements RandomAccess {
    private final String answer;

    Answers(String answer) {
      this.answer = answer;
    }

    @Override
    public Boolean get(int index) {
      return answer.charAt(index) == '1';
    }

    @Override
    public int size() {
      return answer.length();
    }
  }

  /** One script's answers. */
  private final class Batch extends CompletableFuture<List<Boolean>> {
    private final int size;
    private final long number;

    Batch(int size, long number) {
      this.size = size;
      this.number = number;
    }

    void answered(String answer, Throwable error) {
      if (error != null) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
          cause = cause.getCause();
        }
        if (cause instanceof RedisNoScriptException) {
          scriptLost.accept(number);
        }
        completeExceptionally(cause);
      } else if (connectionNumber.getAsLong() != number) {
        completeExceptionally(
            new java.net.ConnectException(name + ": " + LettuceNodeClient.MADE_AGAIN));
      } else if (answer == null || answer.length() != size) {
        completeExceptionally(
            new IllegalStateException(
                "extend-batch answered "
                    + (answer == null ? "nothing" : answer.length() + " answers")
                    + " for "
                    + size
                    + " keys"));
      } else {
        complete(new Answers(answer));
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      // The script stays counted until the node answers it; the backlog hears that its
      // caller stopped waiting, as for a vote of its own (CountedVote).
      if (!isDone()) {
        backlog.late();
      }
      return super.cancel(mayInterruptIfRunning);
    }
  }

  /** The answers of several parts (scripts, and leases on several keys), in request order. */
  private static final class Combined extends CompletableFuture<List<Boolean>> {
    private final List<CompletableFuture<List<Boolean>>> parts;

    Combined(int size, List<int[]> partIndexes, List<CompletableFuture<List<Boolean>>> parts) {
      this.parts = parts;
      CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
          .whenComplete(
              (done, error) -> {
                if (error != null) {
                  Throwable cause = error;
                  while (cause instanceof CompletionException && cause.getCause() != null) {
                    cause = cause.getCause();
                  }
                  completeExceptionally(cause);
                  return;
                }
                Boolean[] answers = new Boolean[size];
                for (int p = 0; p < parts.size(); p++) {
                  List<Boolean> part = parts.get(p).join();
                  int[] indexes = partIndexes.get(p);
                  for (int i = 0; i < indexes.length; i++) {
                    answers[indexes[i]] = part.get(i);
                  }
                }
                complete(Arrays.asList(answers));
              });
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      if (!isDone()) {
        for (CompletableFuture<List<Boolean>> part : parts) {
          part.cancel(false);
        }
      }
      return super.cancel(mayInterruptIfRunning);
    }
  }
}
