package io.redlock.fake;

import io.redlock.spi.MaxTtlRegister;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The keys of one in-memory Redis master: values with expiry instants on the node's own clock,
 * and the lock, extend and unlock operations with the semantics of the real transport's Lua
 * scripts. The one keyspace behind both fakes: {@link SimulatedNode}, which unit tests steer
 * by hand, and the node of the randomized simulation.
 *
 * <p>A key is gone once the node's clock reaches its expiry instant, as in Redis; an
 * operation forgets the expired keys it touches first. Keys without expiry never expire.
 *
 * <p>Not thread-safe: the node that owns it guards it.
 */
public final class Keyspace {
  private record Entry(String value, long expiresAt) {}

  private final LongSupplier clock;
  private final Map<String, Entry> keys = new HashMap<>();

  /**
   * A keyspace whose keys expire by {@code clock}: the node's wall clock, in nanoseconds (any
   * origin), by which Redis expires keys.
   */
  public Keyspace(LongSupplier clock) {
    this.clock = clock;
  }

  /**
   * Sets every key to {@code token} for {@code ttlMillis}, only if none of them exists; as
   * {@code SET NX PX}, for several keys all or nothing.
   */
  public boolean lock(List<String> names, String token, long ttlMillis) {
    purge(names);
    for (String key : names) {
      if (keys.containsKey(key)) {
        return false;
      }
    }
    setAll(names, token, ttlMillis);
    return true;
  }

  /**
   * A fenced lock, as the transport's script: sets every key to {@code token} for
   * {@code ttlMillis} only if none exists, and answers the largest of the {@code counters}
   * (0 for a missing one), or -1 if a key exists.
   */
  public long lockFenced(List<String> names, List<String> counters, String token, long ttlMillis) {
    purge(names);
    for (String key : names) {
      if (keys.containsKey(key)) {
        return -1;
      }
    }
    long max = 0;
    for (String counter : counters) {
      max = Math.max(max, counter(counter)); // a corrupt counter fails before anything is set
    }
    setAll(names, token, ttlMillis);
    return max;
  }

  /**
   * Confirms a fencing token, as the transport's script: only if every key holds
   * {@code token}, raises every counter to {@code fencingToken} unless it holds more.
   */
  public boolean fence(List<String> names, List<String> counters, String token, long fencingToken) {
    purge(names);
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry == null || !entry.value().equals(token)) {
        return false;
      }
    }
    for (String counter : counters) {
      counter(counter); // a corrupt counter fails before any is raised
    }
    for (String counter : counters) {
      if (counter(counter) < fencingToken) {
        putPersistent(counter, Long.toString(fencingToken));
      }
    }
    return true;
  }

  /**
   * A counter's value, 0 if missing; a value that is not a non-negative integer fails, naming
   * the key, as the transport's script does: reading it as 0 would hand out a token that goes
   * back.
   */
  private long counter(String key) {
    String value = valueOf(key);
    if (value == null) {
      return 0;
    }
    if (!value.matches("[0-9]+")) {
      throw new ErrorReply(
          "ERR fencing counter "
              + key
              + " does not hold a non-negative integer: repair or delete it");
    }
    return Long.parseLong(value);
  }

  /** Sets the ttl of every key to {@code ttlMillis}, only if every key holds {@code token}. */
  public boolean extend(List<String> names, String token, long ttlMillis) {
    purge(names);
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry == null || !entry.value().equals(token)) {
        return false;
      }
    }
    setAll(names, token, ttlMillis);
    return true;
  }

  /** Deletes each key that holds {@code token}; {@code true} when every key was deleted. */
  public boolean unlock(List<String> names, String token) {
    purge(names);
    boolean all = true;
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry != null && entry.value().equals(token)) {
        keys.remove(key);
      } else {
        all = false;
      }
    }
    return all;
  }

  /**
   * Raises {@code maxTtlMillis} in the max-ttl register at {@code key} for at least
   * {@code holdMillis}, with the semantics of the Lettuce transport's {@code raise-max-ttl}
   * script (see {@link MaxTtlRegister} for the format): lapsed entries are dropped, the
   * caller's entry keeps the later of its expiry and now + hold, other entries are left alone,
   * and the key expires with its last entry.
   */
  public MaxTtlRegister raiseMaxTtl(String key, long maxTtlMillis, long holdMillis) {
    long now = Math.floorDiv(clock.getAsLong(), 1_000_000L);
    String held = valueOf(key);
    String mine = Long.toString(maxTtlMillis);
    long mineExpiry = now + holdMillis;
    List<long[]> entries = new ArrayList<>();
    List<String> parts = new ArrayList<>();
    if (held != null) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+):(\\d+)").matcher(held);
      while (m.find()) {
        long expiry = Long.parseLong(m.group(2));
        if (expiry > now) {
          if (m.group(1).equals(mine)) {
            mineExpiry = Math.max(mineExpiry, expiry);
          } else {
            entries.add(new long[] {Long.parseLong(m.group(1)), expiry});
            parts.add(m.group(1) + ":" + m.group(2));
          }
        }
      }
    }
    entries.add(new long[] {maxTtlMillis, mineExpiry});
    parts.add(mine + ":" + mineExpiry);
    long best = 0;
    long bestExpiry = 0;
    long last = 0;
    for (long[] entry : entries) {
      if (entry[0] > best) {
        best = entry[0];
        bestExpiry = entry[1];
      }
      last = Math.max(last, entry[1]);
    }
    put(key, String.join(",", parts), Duration.ofMillis(last - now));
    return new MaxTtlRegister(best, bestExpiry - now);
  }

  /** The live value of {@code key}, or {@code null}. */
  public String valueOf(String key) {
    purge(List.of(key));
    Entry entry = keys.get(key);
    return entry == null ? null : entry.value();
  }

  /**
   * Milliseconds until {@code key} expires, -1 without expiry, or -2 if it does not exist (as
   * {@code PTTL}).
   */
  public long pttl(String key) {
    purge(List.of(key));
    Entry entry = keys.get(key);
    if (entry == null) {
      return -2;
    }
    return entry.expiresAt() == Long.MAX_VALUE
        ? -1
        : (entry.expiresAt() - clock.getAsLong()) / 1_000_000L;
  }

  /** Sets a key as another client would ({@code SET key value PX ttl}). */
  public void put(String key, String value, Duration ttl) {
    keys.put(key, new Entry(value, clock.getAsLong() + ttl.toNanos()));
  }

  /** Sets a key without expiry, as {@code SET key value} does. */
  public void putPersistent(String key, String value) {
    keys.put(key, new Entry(value, Long.MAX_VALUE));
  }

  /** The number of live keys whose name passes {@code which}. */
  public int count(Predicate<String> which) {
    long now = clock.getAsLong();
    keys.values().removeIf(entry -> entry.expiresAt() - now <= 0);
    return (int) keys.keySet().stream().filter(which).count();
  }

  /** A copy of every key, as a backup or a copy of the data files holds them. */
  public Map<String, Object> snapshot() {
    return new HashMap<>(keys);
  }

  /** Replaces every key with those of {@code snapshot} (from {@link #snapshot}). */
  @SuppressWarnings("unchecked")
  public void restore(Map<String, Object> snapshot) {
    keys.clear();
    for (Map.Entry<String, Object> entry : snapshot.entrySet()) {
      keys.put(entry.getKey(), (Entry) entry.getValue());
    }
  }

  /** The names of the live keys that start with {@code prefix}. */
  public List<String> namesStartingWith(String prefix) {
    List<String> found = new java.util.ArrayList<>();
    for (String key : keys.keySet()) {
      if (key.startsWith(prefix)) {
        found.add(key);
      }
    }
    return found;
  }

  /** Deletes {@code key}, as {@code DEL} (or an eviction) does. */
  public void remove(String key) {
    keys.remove(key);
  }

  /** Forgets every key, as a restart without persistence does. */
  public void clear() {
    keys.clear();
  }

  private void setAll(List<String> names, String token, long ttlMillis) {
    long expiresAt = clock.getAsLong() + ttlMillis * 1_000_000L;
    for (String key : names) {
      keys.put(key, new Entry(token, expiresAt));
    }
  }

  private void purge(List<String> names) {
    long now = clock.getAsLong();
    for (String key : names) {
      Entry entry = keys.get(key);
      if (entry != null && entry.expiresAt() - now <= 0) {
        keys.remove(key);
      }
    }
  }

  /** What Redis answers with an error reply: the node clients fail the request with it. */
  public static final class ErrorReply extends RuntimeException {
    public ErrorReply(String message) {
      super(message);
    }
  }
}
