package io.redlock.lettuce;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which of the scripts the rounds run a node has answered {@code SCRIPT LOAD} for, on which
 * connection: a script goes by {@code EVALSHA} only on the connection whose node answered its
 * load (see {@link LettuceNodeClient} on per-node order), by {@code EVAL} otherwise. Also keeps
 * each script's text and digest as bytes, encoded once instead of once per request.
 *
 * <p>Thread-safe: each entry is one atomic long, the connection number of the load, or -1.
 */
final class RoundScripts {
  /** The scripts the rounds send, those loaded on each new connection first (each its own). */
  private static final List<Script> SCRIPTS =
      List.of(
          Script.UNLOCK,
          Script.LOCK,
          Script.LOCK_FENCED,
          Script.FENCE,
          Script.EXTEND_BATCH,
          Script.EXTEND);

  /**
   * The scripts loaded on new connections, in the order they are loaded: each connection loads
   * those it sends (see {@link LettuceNodeClient}). The extension of
   * one lease stays with {@code EVAL}: the whole text on every request, never a {@code
   * NOSCRIPT}.
   */
  static final List<Script> LOADED = SCRIPTS.subList(0, 5);

  private static final byte[][] SOURCES = encode(false);
  private static final byte[][] DIGESTS = encode(true);

  private final AtomicLongArray loadedOn = new AtomicLongArray(LOADED.size());

  RoundScripts() {
    for (int i = 0; i < LOADED.size(); i++) {
      loadedOn.set(i, -1);
    }
  }

  private static byte[][] encode(boolean digest) {
    byte[][] encoded = new byte[SCRIPTS.size()][];
    for (int i = 0; i < encoded.length; i++) {
      Script script = SCRIPTS.get(i);
      encoded[i] = (digest ? script.sha1() : script.source()).getBytes(StandardCharsets.UTF_8);
    }
    return encoded;
  }

  /**
   * The script's place in {@link #SCRIPTS}, found by identity: every round script is one of
   * {@link Script}'s constants. Not {@code indexOf}: a record's {@code equals} compares every
   * field, on every command, and its first call links a method handle (about 20 ms of a cold
   * start, on an event loop while the first connections load their scripts).
   */
  private static int index(Script script) {
    for (int i = 0; i < SCRIPTS.size(); i++) {
      if (SCRIPTS.get(i) == script) {
        return i;
      }
    }
    throw new IllegalArgumentException("not a round script: " + script.name());
  }

  /**
   * Whether the node answered the load of {@code script} on connection {@code number}; never
   * for a negative number.
   */
  boolean isLoaded(Script script, long number) {
    int index = index(script);
    return number >= 0 && index < LOADED.size() && loadedOn.get(index) == number;
  }

  /** The node answered the load of {@code script} on connection {@code number}. */
  void loaded(Script script, long number) {
    loadedOn.set(index(script), number);
  }

  /**
   * The node answered {@code NOSCRIPT} for {@code script} on connection {@code number}: it goes
   * by {@code EVAL} until loaded again. Whether this call was the one that forgot it (and should
   * load it again).
   */
  boolean forget(Script script, long number) {
    return loadedOn.compareAndSet(index(script), number, -1);
  }

  /** The script's text, UTF-8. */
  static byte[] source(Script script) {
    return SOURCES[index(script)];
  }

  /** The script's SHA-1 in hex, as {@code EVALSHA} takes it. */
  static byte[] digest(Script script) {
    return DIGESTS[index(script)];
  }
}
