package io.redlock.spi.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.spi.NodeClient;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
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
 * holds this package only; the test class path also needs {@code junit-jupiter} and
 * {@code assertj-core}. See {@code docs/transport-contract.md}.
 *
 * <p>The suite keeps no state between tests; whether tests of one subclass may run in parallel
 * depends on the subclass's own fields.
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

  @Test
  void lockSetsTheKeyWithTokenAndTtl() {
    String key = key();
    String token = token();
    assertThat(await(client().lock(List.of(key), token, TTL))).isTrue();
    assertThat(valueOf(key)).isEqualTo(token);
    assertThat(pttl(key)).isBetween(TTL - 1_000, TTL);
  }

  @Test
  void lockRefusesAKeyThatExistsAndLeavesItAlone() {
    String key = key();
    put(key, "someone-else", Duration.ofSeconds(20));
    assertThat(await(client().lock(List.of(key), token(), TTL))).isFalse();
    assertThat(valueOf(key)).isEqualTo("someone-else");
    assertThat(pttl(key)).isGreaterThan(TTL);
  }

  @Test
  void lockOfSeveralKeysIsAllOrNothing() {
    String free = key();
    String taken = key();
    put(taken, "someone-else", Duration.ofSeconds(20));
    assertThat(await(client().lock(List.of(free, taken), token(), TTL))).isFalse();
    assertThat(valueOf(free)).isNull();

    String a = key();
    String b = key();
    String token = token();
    assertThat(await(client().lock(List.of(a, b), token, TTL))).isTrue();
    assertThat(valueOf(a)).isEqualTo(token);
    assertThat(valueOf(b)).isEqualTo(token);
  }

  @Test
  void lockedKeyExpiresAfterItsTtl() {
    String key = key();
    assertThat(await(client().lock(List.of(key), token(), 50))).isTrue();
    passTime(Duration.ofMillis(80));
    assertThat(valueOf(key)).isNull();
    assertThat(await(client().lock(List.of(key), token(), TTL))).isTrue();
  }

  @Test
  void extendSetsTheTtlOnlyForTheOwner() {
    String key = key();
    String token = token();
    assertThat(await(client().lock(List.of(key), token, 1_000))).isTrue();
    assertThat(await(client().extend(List.of(key), token, 30_000))).isTrue();
    assertThat(pttl(key)).isBetween(29_000L, 30_000L);

    assertThat(await(client().extend(List.of(key), "not-the-token", 60_000))).isFalse();
    assertThat(pttl(key)).isBetween(29_000L, 30_000L);
    assertThat(valueOf(key)).isEqualTo(token);
  }

  @Test
  void extendNeverCreatesAMissingKey() {
    String key = key();
    assertThat(await(client().extend(List.of(key), token(), TTL))).isFalse();
    assertThat(valueOf(key)).isNull();
    assertThat(pttl(key)).isEqualTo(-2);
  }

  @Test
  void extendOfSeveralKeysChangesNothingIfOneIsNotOwned() {
    String mine = key();
    String lost = key();
    String token = token();
    assertThat(await(client().lock(List.of(mine, lost), token, 1_000))).isTrue();
    put(lost, "someone-else", Duration.ofSeconds(20));
    assertThat(await(client().extend(List.of(mine, lost), token, 30_000))).isFalse();
    assertThat(pttl(mine)).isLessThanOrEqualTo(1_000);
    assertThat(valueOf(lost)).isEqualTo("someone-else");
  }

  @Test
  void unlockDeletesOnlyAKeyHoldingTheToken() {
    String key = key();
    String token = token();
    assertThat(await(client().lock(List.of(key), token, TTL))).isTrue();
    assertThat(await(client().unlock(List.of(key), "not-the-token"))).isFalse();
    assertThat(valueOf(key)).isEqualTo(token);
    assertThat(await(client().unlock(List.of(key), token))).isTrue();
    assertThat(valueOf(key)).isNull();
    assertThat(await(client().unlock(List.of(key), token))).isFalse();
  }

  @Test
  void unlockOfSeveralKeysDeletesOwnKeysAndSparesOthers() {
    String mine = key();
    String theirs = key();
    String token = token();
    assertThat(await(client().lock(List.of(mine, theirs), token, TTL))).isTrue();
    put(theirs, "someone-else", Duration.ofSeconds(20));
    assertThat(await(client().unlock(List.of(mine, theirs), token))).isFalse();
    assertThat(valueOf(mine)).isNull();
    assertThat(valueOf(theirs)).isEqualTo("someone-else");
  }

  @Test
  void keysMayHoldAnyUnicodeText() {
    String key = "contract:ключ:鍵:🔒:" + UUID.randomUUID();
    String token = token();
    assertThat(await(client().lock(List.of(key), token, TTL))).isTrue();
    assertThat(valueOf(key)).isEqualTo(token);
    assertThat(await(client().unlock(List.of(key), token))).isTrue();
  }
}
