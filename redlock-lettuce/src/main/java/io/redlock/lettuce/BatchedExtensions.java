package io.redlock.lettuce;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
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
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batched auto-extension on one node ({@link io.redlock.spi.NodeClient#extendBatch}):
 * single-key leases with the same ttl go as one {@link Script#EXTEND_BATCH} script of at most
 * {@link LettuceTransport#MAX_BATCH_KEYS} keys, each key checked against its own lease's
 * token; a lease on several keys goes as an extension of its own.
 *
 * <p>By {@code EVALSHA} once the node has answered the script's {@code SCRIPT LOAD} on the
 * current connection, by {@code EVAL} before that (and for good where an ACL refuses the
 * load). Never re-sent: a script the node answers {@code NOSCRIPT} (an operator emptied its
 * script cache) ran nothing, and every lease it carried gets that error as its vote on this
 * node, while the script is loaded again for the next batch. Re-sent later, an extension
 * could land after a newer one and shorten it (see {@link LettuceNodeClient}); a lost vote
 * only makes the lease count on the other nodes, and its next extension is due soon.
 *
 * <p>A script counts in the node's {@link NodeBacklog} as one request of its size, from the
 * moment it is handed to Lettuce until the node answers it; a backlog that refuses it fails
 * the whole batch at once, {@code STALLED}. Cancelling the batch's future (the node timeout
 * passed) tells the backlog that its caller stopped waiting; the script stays counted until
 * the node answers it.
 *
 * <p>Thread-safe.
 */
final class BatchedExtensions {
  private static final Logger log = LoggerFactory.getLogger(BatchedExtensions.class);

  private final String name;
  private final NodeBacklog backlog;
  private final int maxKeys;
  private final LongSupplier connectionNumber;
  private final Runnable reload;

  /**
   * The connection number on which the node answered the script's load, or -1: the script
   * goes by {@code EVALSHA} only while this equals the current connection's number.
   */
  private volatile long loadedOn = -1;

  /**
   * @param connectionNumber the node client's current connection number
   * @param reload loads the script again on the current connection, if there is one
   */
  BatchedExtensions(
      String name,
      NodeBacklog backlog,
      int maxKeys,
      LongSupplier connectionNumber,
      Runnable reload) {
    this.name = name;
    this.backlog = backlog;
    this.maxKeys = maxKeys;
    this.connectionNumber = connectionNumber;
    this.reload = reload;
  }

  /** Sends {@code SCRIPT LOAD} of the script on {@code conn}, the connection {@code number}. */
  void load(StatefulRedisConnection<String, String> conn, long number) {
    conn.async()
        .scriptLoad(Script.EXTEND_BATCH.source())
        .whenComplete(
            (sha, error) -> {
              if (error != null) {
                log.debug(
                    "node={} did not load the batched extension script, it goes by EVAL: {}",
                    name,
                    error.getMessage());
              } else if (number == connectionNumber.getAsLong()
                  && Script.EXTEND_BATCH.sha1().equals(sha)) {
                loadedOn = number;
              }
            });
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
    // The requests of one script share a ttl: nearly always one group (the leases' ttl).
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
    boolean bySha = loadedOn == number;
    if (several.isEmpty() && byTtl.size() == 1 && requests.size() <= maxKeys) {
      // The common case: one script for the whole batch, its answer as it comes.
      return sendScript(commands, bySha, requests.get(0).ttlMillis(), null, requests);
    }
    List<int[]> partIndexes = new ArrayList<>();
    List<CompletableFuture<List<Boolean>>> parts = new ArrayList<>();
    for (Map.Entry<Long, List<Integer>> group : byTtl.entrySet()) {
      List<Integer> indexes = group.getValue();
      for (int from = 0; from < indexes.size(); from += maxKeys) {
        List<Integer> part = indexes.subList(from, Math.min(indexes.size(), from + maxKeys));
        partIndexes.add(part.stream().mapToInt(Integer::intValue).toArray());
        parts.add(sendScript(commands, bySha, group.getKey(), part, requests));
      }
    }
    for (int index : several) {
      partIndexes.add(new int[] {index});
      parts.add(alone.apply(requests.get(index)).toCompletableFuture().thenApply(List::of));
    }
    return new Combined(requests.size(), partIndexes, parts);
  }

  /** One script of {@code indexes} of {@code requests} (all of them when {@code null}). */
  private CompletableFuture<List<Boolean>> sendScript(
      RedisAsyncCommands<String, String> commands,
      boolean bySha,
      long ttlMillis,
      List<Integer> indexes,
      List<ExtendRequest> requests) {
    int n = indexes == null ? requests.size() : indexes.size();
    String[] keys = new String[n];
    String[] args = new String[n + 1];
    args[0] = Long.toString(ttlMillis);
    long size = NodeBacklog.OVERHEAD_BYTES + args[0].length();
    for (int i = 0; i < n; i++) {
      ExtendRequest request = requests.get(indexes == null ? i : indexes.get(i));
      keys[i] = request.keys().get(0);
      args[i + 1] = request.token();
      size += keys[i].length() + args[i + 1].length() + 2;
    }
    if (!backlog.admit(size, false)) {
      return CompletableFuture.failedFuture(new NodeStalledException(backlog.refusal()));
    }
    Batch batch = new Batch(n);
    new CountedVote<String, String>(backlog, size, Function.identity(), false)
        .follow(
            bySha
                ? commands.<String>evalsha(
                    Script.EXTEND_BATCH.sha1(), ScriptOutputType.VALUE, keys, args)
                : commands.<String>eval(
                    Script.EXTEND_BATCH.source(), ScriptOutputType.VALUE, keys, args))
        .whenComplete(batch::answered);
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

    Batch(int size) {
      this.size = size;
    }

    void answered(String answer, Throwable error) {
      if (error != null) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
          cause = cause.getCause();
        }
        if (cause instanceof RedisNoScriptException) {
          log.debug("node={} lost the batched extension script, loading it again", name);
          loadedOn = -1;
          reload.run();
        }
        completeExceptionally(cause);
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
