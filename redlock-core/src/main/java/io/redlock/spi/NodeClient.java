package io.redlock.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The operations the algorithm needs from one Redis master, all asynchronous.
 *
 * <p>Each operation acts atomically on all of its keys on this node and answers with a
 * {@code Boolean}. A transport must never block the caller: the algorithm sends a request to
 * every node before it waits for any. It must fail a request it cannot send at once (for
 * example while disconnected) instead of queueing it. It must fail any other request that got
 * no answer with a {@link java.util.concurrent.TimeoutException} (directly or as the cause),
 * except those the algorithm counts as votes ({@link #lock}, {@link #unlock}, {@link #extend},
 * {@link #extendBatch}, {@link #lockFenced}, {@link #fence}): the algorithm enforces the node
 * timeout on each of them on its own (on a batch of extensions, a longer wait: up to ten node
 * timeouts, which a transport's own timeout would cut short), so a transport may leave them
 * without a timeout of its own. Each call returns a future of its own, never one shared with another request: when
 * the node timeout passes before {@link #lock}, {@link #unlock}, {@link #extend}, {@link
 * #extendBatch} or {@link #fence} was answered,
 * the algorithm cancels the future the transport returned, if it is a
 * {@link CompletableFuture} (not the one of {@link #lockFenced}, which it
 * does not count directly). A transport may then leave a {@link #lock} request unsent, if it
 * has not sent it yet; it must still send every other request.
 *
 * <p>Locks, fenced locks, confirmations and releases sent on one client are executed by the node
 * in the order they were sent, and so are extensions ({@link #extend}, {@link #extendBatch})
 * among themselves; each request is written once: a transport must not re-send a request
 * later on its own (a fallback after an error reply, a replay after a reconnect). The
 * algorithm relies on both. A release sent after an acquisition that timed out is executed
 * after it, also on a node that was paused and resumes after the client closed. An extension
 * is sent once the previous one is decided, maybe before a slow node answered it; that node
 * still runs the previous one first, so it ends with the newer expiry, which is the one the
 * client counts on. Between the two kinds no order is needed ({@link #extendBatch} says why),
 * but both must reach the same process: the one whose history the restart guard judges.
 *
 * <p>One exception: an {@link #unlock} that the node answered without running any of it (such
 * as {@code NOSCRIPT}) may be sent once more while the client is open. Running late, behind
 * requests sent meanwhile, is harmless for it: it deletes only keys holding its token, each
 * attempt has a token of its own, and nothing the algorithm sends after a token's unlock
 * creates a key with that token ({@link #extend} never does). The re-send needs the
 * connection: an unlock answered after {@link #close()} is lost, and the node keeps the key
 * until its ttl runs out. So a transport should send an unlock in a form the node runs by
 * itself unless it knows the node can run the short form (the default transport sends it by
 * {@code EVAL} until the node has answered its {@code SCRIPT LOAD}).
 *
 * <p>Memory. A transport should bound what waits on one node: a node may keep its connection
 * open and stop answering, and a request once written may have to be kept until its answer
 * comes. Past its bound, or while the node is known not to answer, it fails a vote request at
 * once with a {@link NodeStalledException} instead of sending it; the algorithm records
 * {@link io.redlock.NodeOutcome.Vote#STALLED}. A release or an undo not sent that way leaves
 * its key to expire with its ttl, which is safe: it only keeps a key longer.
 *
 * <p>Implementations are thread-safe.
 *
 * @since 0.1.0
 */
public interface NodeClient extends AutoCloseable {

  /** The node's address without credentials, for logs and outcomes. */
  String name();

  /**
   * Completes when the client is first connected (every connection it holds to the node).
   * Completes exceptionally with a
   * {@link io.redlock.RedlockConfigException} when the node refused the configuration (wrong
   * credentials, unknown database), which no reconnect can fix; with any other exception when
   * the node could not be reached yet (the client keeps trying).
   */
  CompletionStage<Void> connected();

  /**
   * Sets every key to {@code token} with a time to live of {@code ttlMillis}, only if none of
   * them exists. {@code true} when they were set, {@code false} when any of them exists (and
   * then none was changed).
   */
  CompletionStage<Boolean> lock(List<String> keys, String token, long ttlMillis);

  /**
   * Sets the time to live of every key to {@code ttlMillis}, only if every key holds
   * {@code token}. {@code true} when they were extended; {@code false} when any key is missing
   * or holds another value (and then none was changed). Never creates a key.
   */
  CompletionStage<Boolean> extend(List<String> keys, String token, long ttlMillis);

  /**
   * Extends many leases at once: for each request, what {@link #extend} does with its keys,
   * token and ttl, each request by itself (its keys are extended together or not at all,
   * whatever the other requests find). The auto-extension of leases that fall due together
   * calls this once per node instead of {@link #extend} once per lease, so that a transport
   * can send them as one request, or a few of bounded size: the default transport runs up to
   * {@code LettuceTransport.MAX_BATCH_KEYS} single-key leases in one script.
   *
   * <p>The answer holds one {@code Boolean} per request, in order: {@code true} when its keys
   * were extended, {@code false} when one of them is missing or holds another value. A
   * failure (a timeout, an error reply, a {@link NodeStalledException}, one request that
   * could not be sent) fails the whole answer: every lease of the batch then counts this node
   * as failed, by the failure's type, and is decided on the other nodes' votes.
   *
   * <p>The requests are executed in their order, after every extension ({@link #extend},
   * {@link #extendBatch}) sent to this client before the call and before every extension sent
   * after it, as if {@link #extend} had been called for each in turn; like {@link #extend},
   * they are votes, each written once and never re-sent. Locks, fenced locks, confirmations
   * and releases need no order against extensions, and a transport may send them on another
   * path (the default transport: another connection), where they may run before an extension
   * sent earlier or after one sent later: an extension only sets the ttl of a key holding its
   * token and never creates one, so a lock or fenced lock (another attempt, another token)
   * finds what it would have found, a confirmation still finds its key holding its token, and
   * a released key stays deleted. The default runs them in order, one {@link #extend} per
   * request: a transport that cannot batch keeps working, one request per lease.
   *
   * @param requests the extensions, in order; may be empty
   * @return the answers, one per request, in the same order
   * @since 0.1.0
   */
  default CompletionStage<List<Boolean>> extendBatch(List<ExtendRequest> requests) {
    CompletableFuture<?>[] replies = new CompletableFuture<?>[requests.size()];
    for (int i = 0; i < replies.length; i++) {
      ExtendRequest request = requests.get(i);
      try {
        replies[i] =
            extend(request.keys(), request.token(), request.ttlMillis()).toCompletableFuture();
      } catch (RuntimeException e) {
        replies[i] = CompletableFuture.failedFuture(e);
      }
    }
    // Cancelled when the node timeout passed: each extension hears it, as when sent alone.
    CompletableFuture<List<Boolean>> answers =
        new CompletableFuture<>() {
          @Override
          public boolean cancel(boolean mayInterruptIfRunning) {
            for (CompletableFuture<?> reply : replies) {
              reply.cancel(false);
            }
            return super.cancel(mayInterruptIfRunning);
          }
        };
    CompletableFuture.allOf(replies)
        .whenComplete(
            (done, error) -> {
              if (error != null) {
                answers.completeExceptionally(
                    error instanceof CompletionException && error.getCause() != null
                        ? error.getCause()
                        : error);
                return;
              }
              List<Boolean> list = new ArrayList<>(replies.length);
              for (CompletableFuture<?> reply : replies) {
                list.add((Boolean) reply.join());
              }
              answers.complete(list);
            });
    return answers;
  }

  /**
   * Deletes each key that holds {@code token}, and no other. {@code true} when every key was
   * deleted, {@code false} when any of them was missing or held another value.
   */
  CompletionStage<Boolean> unlock(List<String> keys, String token);

  /**
   * Like {@link #lock}, for a fenced lease: sets every key of {@code keys} to {@code token}
   * with a time to live of {@code ttlMillis}, only if none of them exists, and in the same
   * atomic step reads the numbers stored at {@code counters} (a missing one counts as 0).
   *
   * @return the largest of the counters when the keys were set (0 or more); -1 when any key
   *     exists (and then nothing was changed)
   * @since 0.1.0
   */
  default CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot fence"));
  }

  /**
   * {@link #lockFenced(List, List, String, long)}, checking in the same atomic step that the
   * node's record of its history at {@code recordKey} (see {@link io.redlock.FreshMarker})
   * still admits its current process with no key evicted since: if not, the keys are set all
   * the same (a grant) and the answer is -2, so that counters lost since the restart guard's
   * last probe never yield a token. The default cannot check and answers as the short form.
   *
   * @return as the short form, or -2 when the keys were set but the counters are not trusted
   * @since 0.1.0
   */
  default CompletionStage<Long> lockFenced(
      List<String> keys, List<String> counters, String token, long ttlMillis, String recordKey) {
    return lockFenced(keys, counters, token, ttlMillis);
  }

  /**
   * The second step of a fenced lease: only if every key of {@code keys} holds
   * {@code token}, raises the number stored at each of {@code counters} to
   * {@code fencingToken} unless it holds a larger one (no expiry), atomically.
   *
   * @return {@code true} when the counters were raised (or already held as much),
   *     {@code false} when a key is missing or holds another value (and then nothing was
   *     changed)
   * @since 0.1.0
   */
  default CompletionStage<Boolean> fence(
      List<String> keys, List<String> counters, String token, long fencingToken) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot fence"));
  }

  /**
   * Reads the node's run id, role, uptime and clock, for the restart guard and the start-up
   * checks. A transport that cannot answers with a failed stage; the restart guard then
   * cannot protect this node, which is logged once.
   */
  default CompletionStage<NodeInfo> info() {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot read INFO"));
  }

  /**
   * Like {@link #info()}, also reading the value of {@code markerKey} (the fresh marker of
   * {@link io.redlock.FreshMarker}) and, where the node allows it, how it persists writes.
   * The restart guard calls this one. The default reads {@link #info()} only, so the node
   * never counts at once after a restart.
   */
  default CompletionStage<NodeInfo> info(String markerKey) {
    return info();
  }

  /**
   * Replaces the node's record of its history (the value of {@code key}, see {@link
   * io.redlock.FreshMarker}) atomically: only if it still holds {@code expected} (an empty
   * string for no key) and the node's current process is {@code runId} ({@code run_id} of
   * {@code INFO server}, read in the same atomic step), sets it to {@code value} with no
   * expiry. The restart guard calls it after each probe. A transport that cannot answers with
   * a failed stage ({@link UnsupportedOperationException}); the guard then keeps the history
   * in this client's memory only, and no other client learns from it.
   *
   * @return {@code null} when the value was set, else what the key holds now (an empty string
   *     for no key), so that the caller learns what another client wrote meanwhile
   * @since 0.1.0
   */
  default CompletionStage<String> updateRecord(
      String key, String expected, String value, String runId) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot write a record"));
  }

  /**
   * Reads the cluster's max-ttl register at {@code key} without changing it: its longest live
   * value and the time left to it, or {@code null} when no entry is live (no client raised it
   * within its hold). {@link io.redlock.Redlock#init} refuses while an entry is live: clients
   * are running, or stopped too recently for their leases to have ended.
   *
   * @since 0.1.0
   */
  default CompletionStage<MaxTtlRegister> readMaxTtl(String key) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot read the register"));
  }

  /**
   * Reads every fencing counter on the node: each key that starts with {@code counterPrefix}
   * (the key prefix followed by {@code __redlock_fence__:}), with its value. For {@link
   * io.redlock.Redlock#readmit}; needs {@code KEYS} and {@code GET} inside a script.
   *
   * @return the counters by key; fails when the node refused
   * @since 0.1.0
   */
  default CompletionStage<java.util.Map<String, Long>> readCounters(String counterPrefix) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot read counters"));
  }

  /**
   * Re-admits the node, atomically: only if its current process is {@code runId} and its
   * record (at {@code recordKey}) still holds {@code expectedRecord}, raises each counter of
   * {@code counters} to the value given unless it holds more, then sets the record to {@code
   * record}. For {@link io.redlock.Redlock#readmit}.
   *
   * @return whether it was done; {@code false} when the process or the record changed
   * @since 0.1.0
   */
  default CompletionStage<Boolean> readmit(
      String recordKey,
      String expectedRecord,
      String record,
      String runId,
      java.util.Map<String, Long> counters) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot re-admit"));
  }

  /**
   * Looks for keys that may be locks, without changing anything: any key that starts with
   * {@code keyPrefix} (with an empty prefix: any key), except the library's own keys, which
   * start with {@code keyPrefix +} {@link io.redlock.FreshMarker#OWN_KEYS}. Used by
   * {@link io.redlock.Redlock#init}.
   *
   * @return an empty string when there is none, else what was found (such as
   *     {@code "3 keys, e.g. orders:42"}); fails when the node refused the check
   */
  default CompletionStage<String> findLockKeys(String markerKey, String keyPrefix) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot look for keys"));
  }

  /**
   * Writes the fresh marker: atomically, sets {@code markerKey} to {@code markerValue}
   * followed by the {@code run_id} of the node's current process, read in the same atomic step
   * (with no expiry), unless the node holds a key that may be a lock, as {@link #findLockKeys}
   * looks for them. With {@code force}, sets it without looking. Used by {@link
   * io.redlock.Redlock#init}: the marker names exactly the process it was written to, even if
   * the node restarted since {@code init} read its {@code run_id}.
   *
   * @return an empty string when the marker was written, else what was found (such as
   *     {@code "holds 3 keys under the prefix, e.g. orders:42"}); fails when the node
   *     refused the check or the write (the caller names it)
   */
  default CompletionStage<String> writeMarker(
      String markerKey, String markerValue, String keyPrefix, boolean force) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport cannot write a marker"));
  }

  /**
   * Raises this client's value in the max-ttl register at {@code key}, atomically: the
   * register keeps one value per {@code maxTtl}, each with its own expiry. The caller's value
   * {@code maxTtlMillis} is kept for at least {@code holdMillis} from now (by the node's
   * clock; a later expiry is not shortened); other values are left as they are, and values
   * whose expiry passed are dropped. Answers the longest live value and its time left. The
   * restart guard calls it with every probe. A transport that cannot answers with a failed
   * stage of {@link UnsupportedOperationException}; the guard then uses its own
   * {@code maxTtl} only.
   */
  default CompletionStage<MaxTtlRegister> raiseMaxTtl(
      String key, long maxTtlMillis, long holdMillis) {
    return CompletableFuture.failedFuture(
        new UnsupportedOperationException(name() + ": this transport has no max-ttl register"));
  }

  /**
   * Which commands the library needs the node refuses to this client's user, as far as that
   * can be found without side effects beyond {@code checkKey} (one of the library's own keys,
   * which a check may write with a short expiry). Names as in an ACL rule, lower case
   * ({@code "set"}, {@code "evalsha"}, {@code "script|load"}, {@code "config|get"}, and
   * {@code "eval:get"} for a command refused inside a script). The restart guard asks once
   * per node, at its first probe, and logs what is refused at WARN. A transport that cannot
   * check answers an empty list.
   */
  default CompletionStage<List<String>> refusedCommands(String checkKey) {
    return CompletableFuture.completedFuture(List.of());
  }

  /**
   * Calls {@code listener} each time the connection of votes to the node is lost, before any
   * request can reach the node over a new connection (which may be a restarted process). A
   * transport with other connections (the Lettuce transport's for extensions) need not call it
   * for them if it counts nothing they carry from another process than the one its connection
   * of votes reaches. The listener
   * must be quick; it runs on a transport thread.
   */
  default void onDisconnect(Runnable listener) {}

  /** Frees the connection; requests after this fail. Idempotent. */
  @Override
  void close();
}
