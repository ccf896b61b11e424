package io.redlock.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** The implementations the harness compares, each behind {@link LockUnderTest}. */
final class Adapters {
  private Adapters() {}

  /** Set (to true) when the harness declared the servers fresh itself. */
  static final String DECLARED = "redlock.bench.declared";

  /** Lease time to live everywhere: 10 s, far longer than any run holds a lock. */
  static final Duration TTL = Duration.ofSeconds(10);

  /** What every adapter answers the same way: its name and its node count. */
  abstract static class Named implements LockUnderTest {
    private final String implName;
    private final int nodeCount;

    Named(String implName, int nodeCount) {
      this.implName = implName;
      this.nodeCount = nodeCount;
    }

    @Override
    public String name() {
      return implName;
    }

    @Override
    public int nodes() {
      return nodeCount;
    }
  }

  /** Retry policy shared by every implementation that retries by polling. */
  record Retry(Duration delay, Duration jitter, Duration maxWait) {
    long nextDelayNanos() {
      long d = delay.toNanos();
      long j = jitter.toNanos();
      return j == 0 ? d : Math.max(0, d + ThreadLocalRandom.current().nextLong(-j, j + 1));
    }

    /**
     * After a failed attempt of a lock that began at {@code startNanos}: false once the wait
     * budget is spent, else true after the retry delay.
     */
    boolean waitAgain(long startNanos) throws InterruptedException {
      if (System.nanoTime() - startNanos > maxWait.toNanos()) {
        return false;
      }
      LockSupport.parkNanos(nextDelayNanos());
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      return true;
    }
  }

  /**
   * The implementation named {@code name} in {@code --impls} over {@code uris} (the 1-node
   * implementations use the first).
   *
   * @throws IllegalArgumentException if no implementation has that name
   */
  static LockUnderTest create(String name, List<String> uris, Retry retry) {
    return switch (name) {
      case Results.OURS -> redlock(name, uris, retry);
      case LoadHarness.REDLOCK_FENCED -> redlock(name, uris, retry, true);
      case PathsHarness.REDLOCK_MULTIKEY -> redlock(name, uris, retry, false, 2);
      case LoadHarness.REDISSON_REDLOCK -> redisson(name, uris, true, retry);
      case LoadHarness.REDISSON_RLOCK -> redisson(name, uris.subList(0, 1), false, retry);
      case LoadHarness.LETTUCE_RAW -> lettuceRaw(name, uris.get(0), retry);
      case LoadHarness.LETTUCE_FANOUT -> lettuceFanout(name, uris, retry);
      case LoadHarness.OWNIO_FANOUT -> OwnIo.fanout(name, uris, retry);
      case PathsHarness.LETTUCE_FENCED_FANOUT -> fencedFloor(name, uris, retry, true);
      case PathsHarness.LETTUCE_FENCED_NOCHECK -> fencedFloor(name, uris, retry, false);
      default -> throw new IllegalArgumentException("no Java implementation named " + name);
    };
  }

  private static LockUnderTest fencedFloor(
      String name, List<String> uris, Retry retry, boolean check) {
    try {
      return FencedFloor.create(name, uris, retry, check);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("redlock-lettuce's scripts could not be read", e);
    }
  }

  /** How many of {@code uris} the implementation {@code name} locks on. */
  static int nodes(String name, List<String> uris) {
    return name.equals(LoadHarness.REDISSON_RLOCK) || name.equals(LoadHarness.LETTUCE_RAW)
        ? 1
        : uris.size();
  }

  /** This project's Redlock over the given nodes (Lettuce transport, declared fresh). */
  static LockUnderTest redlock(String name, List<String> uris, Retry retry) {
    return redlock(name, uris, retry, false);
  }

  /** The same, with fenced leases (one more round trip per acquisition) when asked. */
  static LockUnderTest redlock(String name, List<String> uris, Retry retry, boolean fencing) {
    return redlock(name, uris, retry, fencing, 1);
  }

  /**
   * The same, each lease on {@code resources} resources at once ({@code name:0}, {@code
   * name:1}, ...; with more than one, the lock goes by a script instead of {@code SET NX PX}).
   */
  static LockUnderTest redlock(
      String name, List<String> uris, Retry retry, boolean fencing, int resources) {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(uris)
            .ttl(TTL)
            .retryCount(1_000_000)
            .retryDelay(retry.delay())
            .retryJitter(retry.jitter())
            .maxWait(retry.maxWait())
            .fencing(fencing)
            .build();
    // The harness started these servers for the run; the keys other implementations left
    // on them are not leases of any client of ours: declare them fresh without looking, so
    // that the restart guard (on, as in production) counts them at once.
    // PathsHarness declares its servers fresh once, before it starts its clients: a second
    // forced init would rewrite the record under the first client's guard, which then holds
    // every node back as data that went back.
    if (!Boolean.getBoolean(DECLARED) && !Redlock.init(config, true).complete()) {
      throw new IllegalStateException("could not declare the bench servers fresh: " + uris);
    }
    Redlock redlock = Redlock.create(config);
    return new Named(name, uris.size()) {
      @Override
      public AutoCloseable lock(String resource) throws InterruptedException {
        try {
          if (resources == 1) {
            return redlock.acquire(resource, TTL);
          }
          List<String> names = new ArrayList<>(resources);
          for (int i = 0; i < resources; i++) {
            names.add(resource + ":" + i);
          }
          return redlock.acquire(names, TTL);
        } catch (LockUnavailableException e) {
          return null;
        }
      }

      @Override
      public void close() {
        redlock.close();
      }
    };
  }

  /**
   * Redisson: {@code RedissonRedLock} over one {@code RedissonClient} per node (single-server
   * configuration, Redisson's defaults otherwise), or its plain {@code RLock} when given one
   * node and {@code redLock} is false. Locks are taken with a lease time, so Redisson's
   * watchdog is not involved; waiting is Redisson's own (pub/sub notification).
   */
  static LockUnderTest redisson(String name, List<String> uris, boolean redLock, Retry retry) {
    RedissonClient[] clients = new RedissonClient[uris.size()];
    try {
      for (int i = 0; i < clients.length; i++) {
        Config config = new Config();
        config.useSingleServer().setAddress(uris.get(i));
        clients[i] = Redisson.create(config);
      }
    } catch (RuntimeException e) {
      for (RedissonClient client : clients) {
        if (client != null) {
          client.shutdown();
        }
      }
      throw e;
    }
    long leaseMs = TTL.toMillis();
    long waitMs = retry.maxWait().toMillis();
    return new Named(name, clients.length) {
      @Override
      public AutoCloseable lock(String resource) throws InterruptedException {
        RLock lock;
        if (redLock) {
          RLock[] parts = new RLock[clients.length];
          for (int i = 0; i < clients.length; i++) {
            parts[i] = clients[i].getLock(resource);
          }
          lock = new RedissonRedLock(parts);
        } else {
          lock = clients[0].getLock(resource);
        }
        if (!lock.tryLock(waitMs, leaseMs, TimeUnit.MILLISECONDS)) {
          return null;
        }
        return lock::unlock;
      }

      @Override
      public void close() {
        for (RedissonClient client : clients) {
          client.shutdown(0, 2, TimeUnit.SECONDS);
        }
      }
    };
  }

  /** Compare-and-delete, as every Redlock client releases. */
  static final String UNLOCK_SCRIPT =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end"
          + " return 0";

  /**
   * The floor for one node: {@code SET key token NX PX ttl}, then {@code EVALSHA} of a
   * compare-and-delete script, on one multiplexed Lettuce connection with the synchronous API.
   * A taken key is polled with the shared retry delay.
   */
  static LockUnderTest lettuceRaw(String name, String uri, Retry retry) {
    RedisClient client = RedisClient.create(uri);
    StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
    RedisCommands<String, String> sync = connection.sync();
    String sha = sync.scriptLoad(UNLOCK_SCRIPT);
    SetArgs args = SetArgs.Builder.nx().px(TTL.toMillis());
    AtomicLong sequence = new AtomicLong(ThreadLocalRandom.current().nextLong());
    long maxWaitNanos = retry.maxWait().toNanos();
    return new Named(name, 1) {
      @Override
      public AutoCloseable lock(String resource) {
        String token = Long.toHexString(sequence.incrementAndGet());
        long start = System.nanoTime();
        while (!"OK".equals(sync.set(resource, token, args))) {
          if (System.nanoTime() - start > maxWaitNanos) {
            return null;
          }
          LockSupport.parkNanos(retry.nextDelayNanos());
          if (Thread.interrupted()) {
            return null;
          }
        }
        return () ->
            sync.<Long>evalsha(sha, ScriptOutputType.INTEGER, new String[] {resource}, token);
      }

      @Override
      public void close() {
        connection.close();
        client.shutdown(0, 2, TimeUnit.SECONDS);
      }
    };
  }

  /**
   * The floor for a Redlock cycle with Lettuce over N nodes: {@code SET NX PX} to every node at
   * once and wait for a majority of {@code OK}, then {@code EVALSHA} compare-and-delete to
   * every node at once and wait for a majority of answers. Nothing else: no validity, node
   * timeout, restart guard or lease bookkeeping. Same connections as {@code redlock}'s locks
   * (one per node, asynchronous API, flushes consolidated: {@link Fanout}). A failed attempt deletes
   * what it set and polls with the shared retry delay.
   */
  static LockUnderTest lettuceFanout(String name, List<String> uris, Retry retry) {
    Fanout fanout = new Fanout(uris);
    byte[] unlockSha = fanout.load(UNLOCK_SCRIPT);
    SetArgs args = SetArgs.Builder.nx().px(TTL.toMillis());
    AtomicLong sequence = new AtomicLong(ThreadLocalRandom.current().nextLong());
    return new Named(name, fanout.size()) {
      @Override
      public AutoCloseable lock(String resource) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
          String token = Fanout.token(sequence);
          boolean granted =
              Fanout.await(
                  fanout.majority(
                      (i, node) -> node.set(resource, token, args).thenApply("OK"::equals)));
          if (granted) {
            return () -> fanout.release(unlockSha, resource, token);
          }
          fanout.release(unlockSha, resource, token);
          if (!retry.waitAgain(start)) {
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
}
