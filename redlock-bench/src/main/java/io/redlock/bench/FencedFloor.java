package io.redlock.bench;

import io.redlock.FreshMarker;
import io.redlock.RedlockConfig;
import io.redlock.internal.Fencing;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The floor of a fenced Redlock cycle with Lettuce over N nodes (issue 26, item 4): what any
 * client that sends this library's fenced scripts costs here, so that the fenced path's
 * throughput is read against a floor of the same run. Per attempt: the fenced lock script to
 * every node at once; at a majority of grants, the token (the largest counter those grants
 * read, plus one) and the confirmation script to every node at once, sent from the thread that
 * saw the majority, as this library sends it; the lease is held once a majority confirmed.
 * Released with the release script to every node. The scripts are this library's own, read
 * from {@code io.redlock.lettuce.Script}, so the floor sends what the library sends, keys and
 * arguments laid out the same way.
 *
 * <p>With {@code check}, the lock script runs the restart guard's check of the node's record
 * ({@code run_id} and {@code evicted_keys} from {@code INFO}), as the defaults run it; a node
 * that answers "granted, counters not trusted" counts as no. It probes nothing itself: a client
 * of this library beside it keeps the nodes' records admitting their processes (the harness
 * runs several), and where a majority refuses, the floor fails with the records. Without
 * {@code check}, the check is skipped: the floor of fencing with that safety check dropped.
 * Nothing else: no validity, node timeout, guard probes or lease bookkeeping. Connections as
 * {@code lettuce-fanout} ({@link Fanout}).
 */
final class FencedFloor {
  private FencedFloor() {}

  static LockUnderTest create(String name, List<String> uris, Adapters.Retry retry, boolean check)
      throws ReflectiveOperationException {
    String lockSource = source("LOCK_FENCED");
    String fenceSource = source("FENCE");
    String unlockSource = source("UNLOCK");
    Fanout fanout = new Fanout(uris);
    byte[] lockSha = fanout.load(lockSource);
    byte[] fenceSha = fanout.load(fenceSource);
    byte[] unlockSha = fanout.load(unlockSource);
    String prefix = RedlockConfig.DEFAULT_KEY_PREFIX;
    String record = FreshMarker.key(prefix);
    String ttl = Long.toString(Adapters.TTL.toMillis());
    String mode = check ? "check" : "";
    AtomicLong sequence = new AtomicLong(ThreadLocalRandom.current().nextLong());
    int n = fanout.size();
    return new Adapters.Named(name, n) {
      @Override
      public AutoCloseable lock(String resource) throws InterruptedException {
        String lockKey = prefix.concat(resource);
        String counterKey = prefix.concat(Fencing.COUNTER_KEYS).concat(resource);
        String[] lockKeys =
            check ? new String[] {lockKey, counterKey, record} : new String[] {lockKey, counterKey};
        String[] fenceKeys = {lockKey, counterKey};
        long start = System.nanoTime();
        while (true) {
          String token = Fanout.token(sequence);
          AtomicLongArray counters = new AtomicLongArray(n);
          for (int i = 0; i < n; i++) {
            counters.set(i, NO_ANSWER);
          }
          AtomicLongArray confirmations = new AtomicLongArray(n);
          AtomicReference<Throwable> failure = new AtomicReference<>();
          CompletableFuture<Boolean> held =
              fanout
                  .majority(
                      (i, node) ->
                          Fanout.evalsha(node, lockSha, lockKeys, token, ttl, "1", mode)
                              .handle(
                                  (counter, error) -> {
                                    if (failed(error, failure)) {
                                      return false;
                                    }
                                    counters.set(i, counter);
                                    return counter >= 0;
                                  }))
                  .thenCompose(
                      granted -> {
                        if (!granted) {
                          return CompletableFuture.completedFuture(false);
                        }
                        String fencing = Long.toString(token(counters));
                        return fanout.majority(
                            (i, node) ->
                                Fanout.evalsha(node, fenceSha, fenceKeys, token, "1", fencing)
                                    .handle(
                                        (confirmed, error) -> {
                                          if (failed(error, failure)) {
                                            return false;
                                          }
                                          confirmations.set(i, confirmed);
                                          return confirmed == 1;
                                        }));
                      });
          if (Fanout.await(held)) {
            return () -> fanout.release(unlockSha, lockKey, token);
          }
          fanout.release(unlockSha, lockKey, token);
          if (failure.get() != null) {
            // A healthy floor never sees one: its figures would not be a floor's.
            throw new IllegalStateException(
                "a script of the fenced floor failed: " + failure.get(), failure.get());
          }
          if (refusedByTheCheck(counters)) {
            throw new IllegalStateException(
                "the fenced lock script's check refused a majority: the node's record does not"
                    + " admit its process, or it evicted keys since; the floor probes nothing,"
                    + " a client of this library beside it must; records: "
                    + fanout.values(record));
          }
          if (!retry.waitAgain(start)) {
            // In the bench every thread locks a resource of its own: say why it never could.
            System.err.printf(
                Locale.ROOT,
                "%s: gave up on %s; the last attempt's lock answers per node %s (%d: none),"
                    + " confirmations %s%n",
                name,
                resource,
                counters,
                NO_ANSWER,
                confirmations);
            return null;
          }
        }
      }

      @Override
      public void close() {
        fanout.close();
      }
    };
  }

  /**
   * Whether a node answered with an error, kept in {@code failure} if it is the attempt's first:
   * the answer and its vote in one stage, not a stage for each.
   */
  private static boolean failed(Throwable error, AtomicReference<Throwable> failure) {
    if (error == null) {
      return false;
    }
    failure.compareAndSet(null, error);
    return true;
  }

  /** Whether a majority answered "granted, counters not trusted" (-2; see the lock script). */
  private static boolean refusedByTheCheck(AtomicLongArray counters) {
    int refused = 0;
    for (int i = 0; i < counters.length(); i++) {
      if (counters.get(i) == UNTRUSTED) {
        refused++;
      }
    }
    return refused > counters.length() / 2;
  }

  /** A node's place in an attempt's answers before it answered. */
  private static final long NO_ANSWER = Long.MIN_VALUE;

  /** The lock script's answer for "granted, counters not trusted". */
  private static final long UNTRUSTED = -2;

  /**
   * The token of a won lock round: the largest counter among the grants that arrived by the
   * time the majority was reached (each is recorded before it is counted), plus one. A node
   * that has not answered, or refused, holds a negative answer and changes nothing.
   */
  private static long token(AtomicLongArray counters) {
    long max = 0;
    for (int i = 0; i < counters.length(); i++) {
      max = Math.max(max, counters.get(i));
    }
    return max + 1;
  }

  /** The source of the script in the static field {@code field} of redlock-lettuce's Script. */
  static String source(String field) throws ReflectiveOperationException {
    Class<?> scripts = Class.forName("io.redlock.lettuce.Script");
    Field script = scripts.getDeclaredField(field);
    script.setAccessible(true);
    Method source = scripts.getDeclaredMethod("source");
    source.setAccessible(true);
    return (String) source.invoke(script.get(null));
  }
}
