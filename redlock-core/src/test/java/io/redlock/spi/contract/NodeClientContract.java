package io.redlock.spi.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redlock.spi.ExtendRequest;
import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What every {@link NodeClient} must do with keys: the semantics of lock, extend and unlock
 * that the algorithm relies on, as one JUnit Jupiter suite. It runs against the fake nodes
 * the core's unit tests use and against the Lettuce client on a real Redis server, so that the
 * fakes the algorithm is tested on cannot drift from Redis; a third-party transport runs it
 * too.
 *
 * <p>To run it, extend this class in a test of the transport and provide the client under
 * test, a way to look at and set keys on the node behind it without going through the client
 * (on Redis: {@code GET}, {@code PTTL}, {@code SET key value PX ttl} over a connection of its
 * own), and a way to let time pass on the node's clock (on Redis: sleep). Every test uses keys
 * of its own ({@code contract:} and a random UUID), so one node may serve all of them and
 * keep other keys meanwhile. Each reply is awaited for at most 5 seconds.
 *
 * <pre>{@code
 * class MyTransportContractIT extends NodeClientContract {
 *   protected NodeClient client() { return client; }
 *   protected String valueOf(String key) { return redis.get(key); }
 *   protected long pttl(String key) { return redis.pttl(key); }
 *   protected void put(String key, String value, Duration ttl) { redis.psetex(key, ttl, value); }
 *   protected void passTime(Duration duration) { sleep(duration); } // Redis has no fake clock
 * }
 * }</pre>
 *
 * <p>It is published in the {@code redlock-core} test jar ({@code <type>test-jar</type>}), which
 * holds this package only. It asserts with JUnit Jupiter alone: {@code junit-jupiter} on the
 * test class path is all it needs besides. See {@code docs/transport-contract.md}.
 *
 * <p>The suite keeps no state between tests; whether tests of one subclass may run in parallel
 * depends on the subclass's own fields.
 *
 * @since 0.1.0
 */
public abstract class NodeClientContract {
  private static final long TTL = 10_000;

  /** The client under test. */
  protected abstract NodeClient client();

  /** The value stored under {@code key}, read directly, or {@code null}. */
  protected abstract String valueOf(String key);

  /** {@code PTTL key}: milliseconds left, -1 without expiry, -2 if missing. */
  protected abstract long pttl(String key);

  /** {@code SET key value PX ttl}, as another client would. */
  protected abstract void put(String key, String value, Duration ttl);

  /** Lets {@code duration} pass on the node's clock. */
  protected abstract void passTime(Duration duration);

  private static String key() {
    return "contract:" + UUID.randomUUID();
  }

  private static String token() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  private static Boolean await(CompletionStage<Boolean> reply) {
    try {
      return reply.toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("no answer", e);
    }
  }

  private void assertPttlBetween(long min, long max, String key) {
    long pttl = pttl(key);
    assertTrue(
        pttl >= min && pttl <= max,
        () -> "PTTL of " + key + " is " + pttl + ", expected " + min + " to " + max);
  }

  private static io.redlock.spi.MaxTtlRegister raised(
      CompletionStage<io.redlock.spi.MaxTtlRegister> reply) {
    try {
      return reply.toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("no answer", e);
    }
  }

  @Test
  void theMaxTtlRegisterKeepsEachValueForItsOwnHoldAndAnswersTheLongestLiveOne() {
    String key = key() + ":__redlock__:max-ttl";
    // holds as clients ask for them: at most 2.25 x value + 7.5 s (see MaxTtlRegister)
    io.redlock.spi.MaxTtlRegister first = raised(client().raiseMaxTtl(key, 3_000, 14_000));
    assertEquals(3_000, first.maxTtlMillis());
    assertTrue(
        first.remainingMillis() > 13_000 && first.remainingMillis() <= 14_000, first::toString);
    io.redlock.spi.MaxTtlRegister longer = raised(client().raiseMaxTtl(key, 5_000, 300));
    assertEquals(5_000, longer.maxTtlMillis());
    assertTrue(longer.remainingMillis() <= 300, longer::toString);
    // A shorter raise leaves the longer value alone and does not shorten its own entry.
    io.redlock.spi.MaxTtlRegister shorter = raised(client().raiseMaxTtl(key, 3_000, 100));
    assertEquals(5_000, shorter.maxTtlMillis());
    assertTrue(shorter.remainingMillis() <= 300, shorter::toString);
    passTime(Duration.ofMillis(400));
    // The longer value lapsed; the shorter one kept its 14 s expiry.
    io.redlock.spi.MaxTtlRegister after = raised(client().raiseMaxTtl(key, 3_000, 100));
    assertEquals(3_000, after.maxTtlMillis());
    assertTrue(after.remainingMillis() > 12_000, after::toString);
  }

  @Test
  void lockSetsTheKeyWithTokenAndTtl() {
    String key = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(key), token, TTL)));
    assertEquals(token, valueOf(key));
    assertPttlBetween(TTL - 1_000, TTL, key);
  }

  @Test
  void lockRefusesAKeyThatExistsAndLeavesItAlone() {
    String key = key();
    put(key, "someone-else", Duration.ofSeconds(20));
    assertEquals(false, await(client().lock(List.of(key), token(), TTL)));
    assertEquals("someone-else", valueOf(key));
    assertPttlBetween(TTL + 1, Long.MAX_VALUE, key);
  }

  @Test
  void lockOfSeveralKeysIsAllOrNothing() {
    String free = key();
    String taken = key();
    put(taken, "someone-else", Duration.ofSeconds(20));
    assertEquals(false, await(client().lock(List.of(free, taken), token(), TTL)));
    assertNull(valueOf(free));

    String a = key();
    String b = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(a, b), token, TTL)));
    assertEquals(token, valueOf(a));
    assertEquals(token, valueOf(b));
  }

  @Test
  void lockedKeyExpiresAfterItsTtl() {
    String key = key();
    assertEquals(true, await(client().lock(List.of(key), token(), 50)));
    passTime(Duration.ofMillis(80));
    assertNull(valueOf(key));
    assertEquals(true, await(client().lock(List.of(key), token(), TTL)));
  }

  @Test
  void extendSetsTheTtlOnlyForTheOwner() {
    String key = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(key), token, 1_000)));
    assertEquals(true, await(client().extend(List.of(key), token, 30_000)));
    assertPttlBetween(29_000L, 30_000L, key);

    assertEquals(false, await(client().extend(List.of(key), "not-the-token", 60_000)));
    assertPttlBetween(29_000L, 30_000L, key);
    assertEquals(token, valueOf(key));
  }

  @Test
  void extendNeverCreatesAMissingKey() {
    String key = key();
    assertEquals(false, await(client().extend(List.of(key), token(), TTL)));
    assertNull(valueOf(key));
    assertEquals(-2, pttl(key));
  }

  @Test
  void extendOfSeveralKeysChangesNothingIfOneIsNotOwned() {
    String mine = key();
    String lost = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(mine, lost), token, 1_000)));
    put(lost, "someone-else", Duration.ofSeconds(20));
    assertEquals(false, await(client().extend(List.of(mine, lost), token, 30_000)));
    assertPttlBetween(Long.MIN_VALUE, 1_000, mine);
    assertEquals("someone-else", valueOf(lost));
  }

  private List<Boolean> awaitAll(List<CompletionStage<Boolean>> replies) {
    List<Boolean> answers = new java.util.ArrayList<>();
    for (CompletionStage<Boolean> reply : replies) {
      answers.add(await(reply));
    }
    return answers;
  }

  private static List<Boolean> awaitBatch(CompletionStage<List<Boolean>> reply) {
    try {
      return reply.toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("no answer", e);
    }
  }

  @Test
  void extendBatchExtendsEachLeaseThatHoldsItsOwnTokenAndNoOther() {
    String a = key();
    String b = key();
    String taken = key();
    String missing = key();
    String tokenA = token();
    String tokenB = token();
    String tokenTaken = token();
    assertEquals(true, await(client().lock(List.of(a), tokenA, 1_000)));
    assertEquals(true, await(client().lock(List.of(b), tokenB, 1_000)));
    put(taken, "someone-else", Duration.ofSeconds(20));
    CompletionStage<List<Boolean>> replies =
        client()
            .extendBatch(
                List.of(
                    new ExtendRequest(List.of(a), tokenA, 30_000),
                    new ExtendRequest(List.of(taken), tokenTaken, 30_000),
                    new ExtendRequest(List.of(b), tokenA, 30_000), // a's token: not b's
                    new ExtendRequest(List.of(missing), token(), 30_000)));
    assertEquals(List.of(true, false, false, false), awaitBatch(replies));
    assertPttlBetween(29_000L, 30_000L, a);
    assertPttlBetween(Long.MIN_VALUE, 1_000, b);
    assertEquals(tokenB, valueOf(b));
    assertEquals("someone-else", valueOf(taken));
    assertPttlBetween(Long.MIN_VALUE, 20_000, taken);
    assertNull(valueOf(missing)); // never created
  }

  @Test
  void extendBatchKeepsEachLeasesTtlAndItsSeveralKeysAllOrNothing() {
    String one = key();
    String mine = key();
    String lost = key();
    String both1 = key();
    String both2 = key();
    String tokenOne = token();
    String tokenLost = token();
    String tokenBoth = token();
    assertEquals(true, await(client().lock(List.of(one), tokenOne, 1_000)));
    assertEquals(true, await(client().lock(List.of(mine, lost), tokenLost, 1_000)));
    assertEquals(true, await(client().lock(List.of(both1, both2), tokenBoth, 1_000)));
    put(lost, "someone-else", Duration.ofSeconds(20));
    CompletionStage<List<Boolean>> replies =
        client()
            .extendBatch(
                List.of(
                    new ExtendRequest(List.of(one), tokenOne, 15_000),
                    new ExtendRequest(List.of(mine, lost), tokenLost, 30_000),
                    new ExtendRequest(List.of(both1, both2), tokenBoth, 30_000)));
    assertEquals(List.of(true, false, true), awaitBatch(replies));
    assertPttlBetween(14_000L, 15_000L, one);
    assertPttlBetween(Long.MIN_VALUE, 1_000, mine);
    assertEquals("someone-else", valueOf(lost));
    assertPttlBetween(29_000L, 30_000L, both1);
    assertPttlBetween(29_000L, 30_000L, both2);
  }

  @Test
  void extendBatchOfManyLeasesAnswersEachInOrder() {
    int count = 2_500; // more than one script of the default transport
    List<ExtendRequest> requests = new java.util.ArrayList<>();
    List<Boolean> expected = new java.util.ArrayList<>();
    List<String> keys = new java.util.ArrayList<>();
    List<CompletionStage<Boolean>> locked = new java.util.ArrayList<>();
    for (int i = 0; i < count; i++) {
      String key = key();
      String token = token();
      keys.add(key);
      boolean held = i % 7 != 3;
      if (held) {
        locked.add(client().lock(List.of(key), token, 20_000));
      }
      if (locked.size() == 500) { // in waves: a transport may bound what waits on a node
        assertTrue(awaitAll(locked).stream().allMatch(Boolean::booleanValue), "keys locked");
        locked.clear();
      }
      requests.add(new ExtendRequest(List.of(key), token, 30_000));
      expected.add(held);
    }
    assertTrue(awaitAll(locked).stream().allMatch(Boolean::booleanValue), "every key locked");
    List<Boolean> answers = awaitBatch(client().extendBatch(requests));
    List<Integer> wrong = new java.util.ArrayList<>();
    for (int i = 0; i < count; i++) {
      if (!expected.get(i).equals(answers.get(i))) {
        wrong.add(i);
      }
    }
    assertEquals(List.of(), wrong, "requests answered wrongly (held: all but every 7th from 3)");
    for (int i = 0; i < count; i += 97) {
      if (expected.get(i)) {
        assertPttlBetween(29_000L, 30_000L, keys.get(i));
      } else {
        assertNull(valueOf(keys.get(i)));
      }
    }
    assertEquals(List.of(), awaitBatch(client().extendBatch(List.of())));
  }

  @Test
  void unlockDeletesOnlyAKeyHoldingTheToken() {
    String key = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(key), token, TTL)));
    assertEquals(false, await(client().unlock(List.of(key), "not-the-token")));
    assertEquals(token, valueOf(key));
    assertEquals(true, await(client().unlock(List.of(key), token)));
    assertNull(valueOf(key));
    assertEquals(false, await(client().unlock(List.of(key), token)));
  }

  @Test
  void unlockOfSeveralKeysDeletesOwnKeysAndSparesOthers() {
    String mine = key();
    String theirs = key();
    String token = token();
    assertEquals(true, await(client().lock(List.of(mine, theirs), token, TTL)));
    put(theirs, "someone-else", Duration.ofSeconds(20));
    assertEquals(false, await(client().unlock(List.of(mine, theirs), token)));
    assertNull(valueOf(mine));
    assertEquals("someone-else", valueOf(theirs));
  }

  @Test
  void keysMayHoldAnyUnicodeText() {
    String key = "contract:ключ:鍵:🔒:" + UUID.randomUUID();
    String token = token();
    assertEquals(true, await(client().lock(List.of(key), token, TTL)));
    assertEquals(token, valueOf(key));
    assertEquals(true, await(client().unlock(List.of(key), token)));
  }

  // ---- fencing: a transport without lockFenced and fence skips these ----

  private <T> T awaitFencing(CompletionStage<T> reply) {
    try {
      return reply.toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      Assumptions.assumeFalse(
          e.getCause() instanceof UnsupportedOperationException, "this transport cannot fence");
      throw new AssertionError("failed", e);
    } catch (Exception e) {
      throw new AssertionError("no answer", e);
    }
  }

  @Test
  void aFencedLockReadsTheLargestCounterAndRefusesAKeyThatExists() {
    String a = key();
    String b = key();
    String counterA = key();
    String counterB = key();
    put(counterA, "7", Duration.ofSeconds(20));
    String token = token();
    assertEquals(
        7L,
        awaitFencing(client().lockFenced(List.of(a, b), List.of(counterA, counterB), token, TTL)));
    assertEquals(token, valueOf(a));
    assertEquals(token, valueOf(b));
    assertPttlBetween(TTL - 1_000, TTL, a);
  }

  @Test
  void aFencedLockRefusesAKeySetByAnotherClientAndSetsNothing() {
    String free = key();
    String foreign = key();
    String counter = key();
    put(foreign, "another-client", Duration.ofSeconds(20)); // as node-redlock or redsync would
    assertEquals(
        -1L,
        awaitFencing(client().lockFenced(List.of(free, foreign), List.of(counter), token(), TTL)));
    assertEquals("another-client", valueOf(foreign));
    assertNull(valueOf(free)); // all or nothing
    assertNull(valueOf(counter));
  }

  /** The error a fencing request failed with; fails the test if it did not fail. */
  private Throwable fencingFailure(CompletionStage<?> reply) {
    try {
      Object answer = reply.toCompletableFuture().get(5, TimeUnit.SECONDS);
      throw new AssertionError("answered " + answer + " instead of failing");
    } catch (java.util.concurrent.ExecutionException e) {
      Assumptions.assumeFalse(
          e.getCause() instanceof UnsupportedOperationException, "this transport cannot fence");
      return e.getCause();
    } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
      throw new AssertionError("no answer", e);
    }
  }

  @Test
  void aCounterThatIsNotANumberFailsTheFencedLockAndTheFenceNamingItAndChangesNothing() {
    String corrupt = key();
    put(corrupt, "seven", Duration.ofSeconds(20));
    String key = key();
    Throwable locked =
        fencingFailure(client().lockFenced(List.of(key), List.of(corrupt), token(), TTL));
    assertTrue(
        String.valueOf(locked.getMessage()).contains(corrupt),
        () -> "the error names the counter: " + locked);
    assertNull(valueOf(key)); // read 0 instead, the token would go back; nothing is set

    String other = key();
    String good = key();
    String token = token();
    assertEquals(0L, awaitFencing(client().lockFenced(List.of(other), List.of(good), token, TTL)));
    Throwable fenced =
        fencingFailure(client().fence(List.of(other), List.of(good, corrupt), token, 5));
    assertTrue(
        String.valueOf(fenced.getMessage()).contains(corrupt),
        () -> "the error names the counter: " + fenced);
    assertNull(valueOf(good)); // no counter raised
    assertEquals("seven", valueOf(corrupt));
  }

  @Test
  void fenceRaisesEveryCounterOnlyWhileTheKeysHoldTheToken() {
    String key = key();
    String low = key();
    String high = key();
    put(high, "9", Duration.ofSeconds(20));
    String token = token();
    assertEquals(0L, awaitFencing(client().lockFenced(List.of(key), List.of(low), token, TTL)));
    assertEquals(true, awaitFencing(client().fence(List.of(key), List.of(low, high), token, 5)));
    assertEquals("5", valueOf(low));
    assertEquals("9", valueOf(high)); // never lowered
    assertEquals(-1, pttl(low)); // no expiry
    assertEquals(false, awaitFencing(client().fence(List.of(key), List.of(low), token(), 6)));
    assertEquals("5", valueOf(low));
  }
}
