package io.redlock.lettuce;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script and its SHA-1, computed here so that it can be called with {@code EVALSHA}
 * without a {@code SCRIPT LOAD} round trip; a node that does not know it yet answers
 * {@code NOSCRIPT}, and the client falls back to {@code EVAL}, which also caches it there.
 *
 * <p>Each script acts on all of its keys atomically: Redis runs a script without
 * interleaving other commands.
 */
record Script(String name, String source, String sha1) {

  /**
   * Sets every key to ARGV[1] with a ttl of ARGV[2] ms, only if none exists. Used for
   * leases on several resources; a single resource uses plain {@code SET NX PX}.
   */
  static final Script LOCK = of("lock", """
      for i = 1, #KEYS do
        if redis.call('exists', KEYS[i]) == 1 then
          return 0
        end
      end
      for i = 1, #KEYS do
        redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])
      end
      return 1
      """);

  /** Sets the ttl of every key to ARGV[2] ms, only if every key holds ARGV[1]. */
  static final Script EXTEND = of("extend", """
      for i = 1, #KEYS do
        if redis.call('get', KEYS[i]) ~= ARGV[1] then
          return 0
        end
      end
      for i = 1, #KEYS do
        redis.call('pexpire', KEYS[i], ARGV[2])
      end
      return 1
      """);

  /** Deletes each key that holds ARGV[1]; 1 if all of them did, else 0. */
  static final Script UNLOCK = of("unlock", """
      local deleted = 0
      for i = 1, #KEYS do
        if redis.call('get', KEYS[i]) == ARGV[1] then
          deleted = deleted + redis.call('del', KEYS[i])
        end
      end
      if deleted == #KEYS then
        return 1
      end
      return 0
      """);

  static Script of(String name, String source) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1")
          .digest(source.getBytes(StandardCharsets.UTF_8));
      return new Script(name, source, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every Java platform", e);
    }
  }
}
