package io.redlock.lettuce;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script and its SHA-1, computed here: lock and extend are sent by {@code EVAL}, release
 * by {@code EVALSHA} after a {@code SCRIPT LOAD} on each new connection (see
 * {@link LettuceNodeClient} on per-node order).
 *
 * <p>Each script acts on all of its keys atomically: Redis runs a script without
 * interleaving other commands.
 */
record Script(String name, String source, String sha1) {

  /**
   * Sets every key to ARGV[1] with a ttl of ARGV[2] ms, only if none exists. Used for
   * leases on several resources; a single resource uses plain {@code SET NX PX}.
   */
  static final Script LOCK =
      of(
          "lock",
          """
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

  /**
   * A fenced lock: KEYS[1..ARGV[3]] are the lock keys, the rest their fencing counters. Sets
   * every lock key to ARGV[1] with a ttl of ARGV[2] ms, only if none exists, and answers the
   * largest counter (a missing one is 0), or -1 if a lock key exists. A counter that does not
   * hold a non-negative integer fails the script with an error naming it, before any key is
   * set: read as 0, it would hand out a token that goes back. So does one above 2^53 - 1: Lua
   * compares numbers as doubles, exact only up to there. With ARGV[4] {@code check}, the last
   * key is the node's record (see {@code io.redlock.internal.NodeRecord}): when it does not
   * admit the node's current process ({@code INFO server}) with no key evicted since the last
   * probe ({@code INFO stats}), the keys are set all the same and the answer is -2 (granted,
   * counters not trusted): data lost or evicted since the last probe never yields a token. The
   * two fields are found by plain search, then read where they start: Lua patterns scanning the
   * whole of both sections cost more than producing them (measured: 4.3 of 10 µs per call).
   */
  static final Script LOCK_FENCED =
      of(
          "lock-fenced",
          """
      local n = tonumber(ARGV[3])
      for i = 1, n do
        if redis.call('exists', KEYS[i]) == 1 then
          return -1
        end
      end
      local last = #KEYS
      local untrusted = false
      if ARGV[4] == 'check' then
        last = #KEYS - 1
        local record = redis.call('get', KEYS[#KEYS]) or ''
        local server = redis.call('info', 'server')
        local run = string.match(server, '^%x+', string.find(server, 'run_id:', 1, true) + 7)
        local stats = redis.call('info', 'stats')
        local at = string.find(stats, 'evicted_keys:', 1, true)
        local evicted = tonumber(string.match(stats, '^%d+', at + 13))
        if string.sub(record, 1, 15) == 'redlock-node/2 ' then
          local kept = tonumber(string.match(record, ' evicted=(%d+) '))
          untrusted = not string.find(record, ' run=' .. run .. ' ', 1, true)
            or not string.find(record, ' admitted=' .. run .. ' ', 1, true)
            or not kept or evicted > kept
        else
          untrusted = record ~= 'redlock-fresh/1 run_id=' .. run or evicted > 0
        end
      end
      local max = 0
      for i = n + 1, last do
        local value = redis.call('get', KEYS[i])
        if value then
          if not string.match(value, '^%d+$') then
            return redis.error_reply('ERR fencing counter ' .. KEYS[i]
              .. ' does not hold a non-negative integer: repair or delete it')
          end
          if #value > 16 or tonumber(value) > 9007199254740991 then
            return redis.error_reply('ERR fencing counter ' .. KEYS[i]
              .. ' is above 2^53-1, beyond exact comparison: tokens end there')
          end
          local counter = tonumber(value)
          if counter > max then
            max = counter
          end
        end
      end
      for i = 1, n do
        redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])
      end
      if untrusted then
        return -2
      end
      return max
      """);

  /**
   * Confirms a fencing token: KEYS[1..ARGV[2]] are the lock keys, the rest their counters.
   * Only if every lock key holds ARGV[1], raises every counter to ARGV[3] unless it holds
   * more (no expiry), and answers 1; else changes nothing and answers 0. A counter that does
   * not hold a non-negative integer fails the script with an error naming it, before any
   * counter is raised.
   */
  static final Script FENCE =
      of(
          "fence",
          """
      local n = tonumber(ARGV[2])
      for i = 1, n do
        if redis.call('get', KEYS[i]) ~= ARGV[1] then
          return 0
        end
      end
      local values = {}
      for i = n + 1, #KEYS do
        local value = redis.call('get', KEYS[i])
        values[i - n] = value
        if value and not string.match(value, '^%d+$') then
          return redis.error_reply('ERR fencing counter ' .. KEYS[i]
            .. ' does not hold a non-negative integer: repair or delete it')
        end
        if value and (#value > 16 or tonumber(value) > 9007199254740991) then
          return redis.error_reply('ERR fencing counter ' .. KEYS[i]
            .. ' is above 2^53-1, beyond exact comparison: tokens end there')
        end
      end
      local token = tonumber(ARGV[3])
      for i = n + 1, #KEYS do
        if tonumber(values[i - n] or '0') < token then
          redis.call('set', KEYS[i], ARGV[3])
        end
      end
      return 1
      """);

  /** Sets the ttl of every key to ARGV[2] ms, only if every key holds ARGV[1]. */
  static final Script EXTEND =
      of(
          "extend",
          """
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

  /**
   * Many single-key leases extended at once (see {@link BatchedExtensions}): for each i, sets
   * the ttl of KEYS[i] to ARGV[1] ms only if it holds ARGV[i + 1], the token of that lease
   * alone. Answers one character per key, in order: {@code 1} extended, {@code 0} missing or
   * held by another value or by a value of another type (and then left as it is: one key that
   * became a hash fails its own lease's vote, not the batch's). Never creates a key.
   *
   * <p>The answer of a batch that extended every key, nearly every batch, is made in one call;
   * a table of answers is built only when a key was not extended. That, and {@code redis.call},
   * {@code redis.pcall} and the arrays held in locals, took about a tenth less time per key in
   * the script than a table built always (Redis 6.2, batches of 650 and 1,000 keys, the two
   * scripts in turn on one server).
   */
  static final Script EXTEND_BATCH =
      of(
          "extend-batch",
          """
      local ttl = ARGV[1]
      local keys, tokens = KEYS, ARGV
      local rcall, rpcall = redis.call, redis.pcall
      local failed
      for i = 1, #keys do
        local key = keys[i]
        if rpcall('get', key) == tokens[i + 1] then
          rcall('pexpire', key, ttl)
        else
          failed = failed or {}
          failed[#failed + 1] = i
        end
      end
      if not failed then
        return string.rep('1', #keys)
      end
      local answers = {}
      for i = 1, #keys do
        answers[i] = '1'
      end
      for _, i in ipairs(failed) do
        answers[i] = '0'
      end
      return table.concat(answers)
      """);

  /**
   * The fresh marker (see {@code io.redlock.FreshMarker}): KEYS[1] is the marker key, ARGV[1]
   * the mode ({@code check}: only look; {@code write}: look, then write if nothing was found;
   * {@code force}: write without looking), ARGV[2] the marker value, ARGV[3] a glob pattern
   * for the keys under the key prefix, or empty for "every key", ARGV[4] the beginning of the
   * library's own keys (never locks), ARGV[5] a glob pattern for them. Answers an empty string when
   * nothing that may be a lock was found (and the marker was written, unless checking), else
   * what was found. Atomic: no lock can be taken between the look and the write.
   */
  static final Script MARKER =
      of(
          "marker",
          """
      if ARGV[1] ~= 'force' then
        local count = 0
        local example = nil
        local own = ARGV[4]
        local function mine(key)
          return string.sub(key, 1, #own) == own
        end
        if ARGV[3] == '' then
          count = redis.call('dbsize') - #redis.call('keys', ARGV[5])
          for _ = 1, 3 do
            if count > 0 and not example then
              local key = redis.call('randomkey')
              if key and not mine(key) then
                example = key
              end
            end
          end
        else
          for _, key in ipairs(redis.call('keys', ARGV[3])) do
            if not mine(key) then
              count = count + 1
              example = example or key
            end
          end
        end
        if count > 0 then
          local shown = ''
          if example then
            shown = ', e.g. ' .. example
          end
          return 'holds ' .. count .. ' key(s) that may be locks' .. shown
        end
        if ARGV[1] == 'check' then
          return ''
        end
      end
      local run = string.match(redis.call('info', 'server'), 'run_id:(%x+)')
      redis.call('set', KEYS[1], ARGV[2] .. run)
      return ''
      """);

  /**
   * The node's record of its history (see {@code io.redlock.internal.NodeRecord}): sets
   * KEYS[1] to ARGV[2] (no expiry) only if it holds ARGV[1] (an empty string: no key) and the
   * node's current process is ARGV[3], read here with {@code INFO server} so that a write
   * judged on one process never lands on the next; {1} if set, else {0, what KEYS[1] holds}.
   */
  static final Script UPDATE_RECORD =
      of(
          "update-record",
          """
      local current = redis.call('get', KEYS[1]) or ''
      local run = string.match(redis.call('info', 'server'), 'run_id:(%x+)')
      if run ~= ARGV[3] or current ~= ARGV[1] then
        return {0, current}
      end
      redis.call('set', KEYS[1], ARGV[2])
      return {1}
      """);

  /**
   * Every fencing counter: the keys that match the glob ARGV[1], each followed by its value.
   */
  static final Script READ_COUNTERS =
      of(
          "read-counters",
          """
      local found = {}
      for _, key in ipairs(redis.call('keys', ARGV[1])) do
        local value = redis.call('get', key)
        if value then
          found[#found + 1] = key
          found[#found + 1] = value
        end
      end
      return found
      """);

  /**
   * Re-admission: only if the node's process is ARGV[1] and KEYS[1] (the record) holds ARGV[2]
   * (an empty string: no key), raises each counter named in ARGV[4], ARGV[6], ... to the value
   * after it unless it holds more, then sets KEYS[1] to ARGV[3]; 1 if done, else 0. One script:
   * the node is never admitted with a counter not yet raised.
   */
  static final Script READMIT =
      of(
          "readmit",
          """
      local run = string.match(redis.call('info', 'server'), 'run_id:(%x+)')
      if run ~= ARGV[1] then
        return 0
      end
      if (redis.call('get', KEYS[1]) or '') ~= ARGV[2] then
        return 0
      end
      for i = 4, #ARGV, 2 do
        local current = redis.call('get', ARGV[i])
        if not current or not string.match(current, '^%d+$')
            or tonumber(current) < tonumber(ARGV[i + 1]) then
          redis.call('set', ARGV[i], ARGV[i + 1])
        end
      end
      redis.call('set', KEYS[1], ARGV[3])
      return 1
      """);

  /**
   * The max-ttl register (see {@code io.redlock.FreshMarker#maxTtlKey} and
   * {@code io.redlock.spi.MaxTtlRegister} for its format): a string of {@code value:expiresAt}
   * entries, one per {@code maxTtl} in use, each lapsing at its own node time (ms). Drops
   * lapsed entries, keeps ARGV[1] until at least now + ARGV[2] ms (a later expiry is kept),
   * leaves the other entries alone, drops entries no client can have written (see {@code
   * MaxTtlRegister#plausible}), lets the key expire with its last entry, and answers {longest
   * live value, ms until it lapses, the first entry dropped or an empty string}. Only GET, SET and TIME, which the library's ACL
   * grants anyway. TIME makes the script non-deterministic: on Redis 6 its effects, not its
   * text, must be replicated (Redis 7 always does so).
   */
  static final Script RAISE_MAX_TTL =
      of(
          "raise-max-ttl",
          """
      if redis.replicate_commands then
        redis.replicate_commands()
      end
      local t = redis.call('time')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local held = redis.call('get', KEYS[1]) or ''
      local mineExpiry = now + tonumber(ARGV[2])
      local entries = {}
      local ignored = ''
      for v, e in string.gmatch(held, '(%d+):(%d+)') do
        local expiry = tonumber(e)
        if #v > 12 or #e > 16 or tonumber(v) > 31536000000
            or expiry - now > 3 * tonumber(v) + 10000 then
          if ignored == '' then
            ignored = string.sub(v, 1, 24) .. ':' .. string.sub(e, 1, 24)
          end
        elseif expiry > now then
          if v == ARGV[1] then
            if expiry > mineExpiry then
              mineExpiry = expiry
            end
          else
            entries[#entries + 1] = {tonumber(v), expiry, v .. ':' .. e}
          end
        end
      end
      entries[#entries + 1] =
        {tonumber(ARGV[1]), mineExpiry, ARGV[1] .. ':' .. string.format('%d', mineExpiry)}
      local best, bestExpiry, last, parts = 0, 0, 0, {}
      for i, entry in ipairs(entries) do
        if entry[1] > best then
          best, bestExpiry = entry[1], entry[2]
        end
        if entry[2] > last then
          last = entry[2]
        end
        parts[i] = entry[3]
      end
      redis.call('set', KEYS[1], table.concat(parts, ','), 'px', string.format('%d', last - now))
      return {best, bestExpiry - now, ignored}
      """);

  /**
   * The rights check: runs, with {@code redis.pcall}, each command the library's scripts use
   * on KEYS[1] (one of the library's own keys; SET gives it a 10 s expiry), and answers the
   * names of those the ACL refused. Redis 6 and 7 word the refusal differently.
   */
  static final Script ACL_CHECK =
      of(
          "acl-check",
          """
      local refused = {}
      local function try(name, ...)
        local reply = redis.pcall(name, ...)
        if type(reply) == 'table' and reply.err then
          local err = string.lower(reply.err)
          if string.find(err, 'noperm', 1, true) or string.find(err, "can't run", 1, true)
              or string.find(err, "can't access", 1, true)
              or string.find(err, 'no permissions', 1, true) then
            refused[#refused + 1] = name
          end
        end
      end
      try('set', KEYS[1], '1', 'px', '10000')
      try('get', KEYS[1])
      try('exists', KEYS[1])
      try('pexpire', KEYS[1], '10000')
      try('del', KEYS[1])
      try('time')
      return refused
      """);

  /** Deletes each key that holds ARGV[1]; 1 if all of them did, else 0. */
  static final Script UNLOCK =
      of(
          "unlock",
          """
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
      byte[] digest =
          MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
      return new Script(name, source, HexFormat.of().formatHex(digest));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every Java platform", e);
    }
  }
}
