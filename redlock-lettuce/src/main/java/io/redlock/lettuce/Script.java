package io.redlock.lettuce;

/**
 * A Lua script the client sends by {@code EVAL} (see {@link LettuceNodeClient} on why never
 * by {@code EVALSHA}). Redis caches what {@code EVAL} runs by its digest, so the text costs
 * bytes on the wire, not a compilation per call.
 *
 * <p>Each script acts on all of its keys atomically: Redis runs a script without
 * interleaving other commands.
 */
record Script(String name, String source) {

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
    return new Script(name, source);
  }
}
