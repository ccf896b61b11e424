package io.redlock.internal;

import io.redlock.RedlockConfig;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeStalledException;
import io.redlock.spi.Refusals;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The restart guard's view of the nodes' max-ttl registers ({@link
 * io.redlock.FreshMarker#maxTtlKey}): whether this client's own entry on each node is known to
 * outlast a lease granted now, and the window the longest live value of the cluster sets.
 *
 * <p>Each of the guard's probes raises this client's entry for {@link #holdMillis}; {@link
 * #raised} takes in the answer. A node counts for this client only while {@link #covers} says
 * its entry outlasts {@code maxTtl} plus drift from now, so that other clients keep waiting out
 * this client's leases after it is gone. The window ({@link #windowNanos}) is the longest
 * value read from any node, never less than this client's own: it grows at once when a longer
 * value is read and shrinks once that value lapsed (its client stopped raising it and its
 * leases are over). A value no client can have written ({@link MaxTtlRegister#plausible}) never
 * widens it.
 *
 * <p>Thread safety: {@link #covers}, {@link #windowNanos} and {@link #clusterMaxTtlMillis} read
 * atomics and may be called from any thread (the first is on the lock path); every other
 * method is called under the restart guard's monitor, which guards the plain fields. It logs
 * as the restart guard, whose part it is, through the guard's {@link LogLines}.
 */
final class MaxTtlRegisters {
  private static final Logger log = LoggerFactory.getLogger(RestartGuard.class);

  /**
   * How long after this client's last confirmed raise of a node's max-ttl register the node
   * still counts for it: its entry is raised to outlast any lease by this much, so a few failed
   * probes (each a second apart) do not take the node out, and a longer gap does.
   */
  static final long SLACK_NANOS = 5_000_000_000L;

  private static final int NOT_CONFIRMED = 0;
  private static final int CONFIRMED = 1;
  private static final int NO_REGISTER = 2;

  private final List<String> names;
  private final AtomicIntegerArray epochs;
  private final String key;
  private final long ownMaxTtlMillis;
  private final long ownWindowNanos;
  private final long holdMillis;
  private final double driftFactor;
  private final AtomicIntegerArray state;
  private final AtomicLongArray coveredUntil;
  private final AtomicLong clusterMaxTtlMillis;
  private final AtomicLong windowNanos;
  private final long[] seenMaxTtl;
  private final long[] seenUntil;
  private final boolean[] seenForever;
  private final String[] failure;
  private final boolean[] refusalLogged;
  private final boolean[] failureLogged;
  private final boolean[] poisonLogged;
  private boolean widenedLogged;

  /**
   * @param names the nodes' names, for the log
   * @param epochs the guard's connection epochs: an answer sent on an older connection than
   *     the current one confirms nothing
   * @param key the register's key
   * @param maxTtlMillis this client's {@code maxTtl}
   * @param driftFactor the rate by which a node's clock may run ahead of ours
   */
  MaxTtlRegisters(
      List<String> names,
      AtomicIntegerArray epochs,
      String key,
      long maxTtlMillis,
      double driftFactor) {
    int n = names.size();
    this.names = names;
    this.epochs = epochs;
    this.key = key;
    this.ownMaxTtlMillis = maxTtlMillis;
    this.driftFactor = driftFactor;
    this.ownWindowNanos = window(maxTtlMillis, driftFactor);
    this.holdMillis = holdMillis(maxTtlMillis, driftFactor);
    this.state = new AtomicIntegerArray(n);
    this.coveredUntil = new AtomicLongArray(n);
    this.clusterMaxTtlMillis = new AtomicLong(maxTtlMillis);
    this.windowNanos = new AtomicLong(ownWindowNanos);
    this.seenMaxTtl = new long[n];
    this.seenUntil = new long[n];
    this.seenForever = new boolean[n];
    this.failure = new String[n];
    this.refusalLogged = new boolean[n];
    this.failureLogged = new boolean[n];
    this.poisonLogged = new boolean[n];
  }

  /**
   * How long a client with {@code maxTtlMillis} asks its entry in the max-ttl register to
   * last, by the node's clock, with each raise: its window ({@code maxTtl} plus drift) plus
   * {@link #SLACK_NANOS}, stretched by {@code driftFactor} for a node clock that runs fast,
   * plus a millisecond for the node's rounding.
   */
  static long holdMillis(long maxTtlMillis, double driftFactor) {
    long nanos = window(maxTtlMillis, driftFactor) + SLACK_NANOS;
    return (long) Math.ceil(nanos * (1 + driftFactor) / 1_000_000.0) + 1;
  }

  /** {@code maxTtl} plus its drift margin, in nanoseconds. */
  static long window(long maxTtlMillis, double driftFactor) {
    return maxTtlMillis * 1_000_000L + Validity.driftNanos(maxTtlMillis, driftFactor);
  }

  /** The register's key. */
  String key() {
    return key;
  }

  /** This client's {@code maxTtl}, in milliseconds: the value each raise writes. */
  long ownMaxTtlMillis() {
    return ownMaxTtlMillis;
  }

  /** How long each raise asks this client's entry to last, in milliseconds. */
  long holdMillis() {
    return holdMillis;
  }

  /** The longest live {@code maxTtl} of this client and the registers, plus drift, in nanos. */
  long windowNanos() {
    return windowNanos.get();
  }

  /** The longest live {@code maxTtl} of this client and the registers, in milliseconds. */
  long clusterMaxTtlMillis() {
    return clusterMaxTtlMillis.get();
  }

  /**
   * Whether this client's entry in node {@code index}'s register is known to outlast any lease
   * granted at {@code now} ({@code maxTtl} plus drift from it). A transport without a register
   * is not asked. Lock free.
   */
  boolean covers(int index, long now) {
    int register = state.get(index);
    return register == NO_REGISTER
        || (register == CONFIRMED && coveredUntil.get(index) - now >= ownWindowNanos);
  }

  /** Why the last raise on node {@code index} failed, in one line; null if it did not. */
  String failure(int index) {
    return failure[index];
  }

  /** Node {@code index}'s connection was lost: the entry may be gone with the process. */
  void disconnected(int index) {
    state.compareAndSet(index, CONFIRMED, NOT_CONFIRMED);
  }

  /**
   * Takes in the answer to a raise of node {@code index}'s register, sent at {@code sent} on
   * the connection of {@code epoch}: how long this client's own entry is known to last there,
   * and the longest value in the register with its time left, which sets the window while it
   * lasts. Called under the guard's monitor.
   *
   * @param counted whether the guard knows the node's process now (only then is a failure other
   *     than a lost or slow connection said at WARN)
   */
  void raised(
      int index,
      int epoch,
      long sent,
      long received,
      boolean counted,
      MaxTtlRegister held,
      Throwable error,
      LogLines logs) {
    String name = names.get(index);
    if (error != null) {
      failed(index, name, counted, Futures.unwrap(error), logs);
      return;
    }
    failure[index] = null;
    failureLogged[index] = false;
    if (!held.ignored().isEmpty() && !poisonLogged[index]) {
      poisonLogged[index] = true;
      String entry = held.ignored();
      logs.add(
          () ->
              log.warn(
                  "node={} max-ttl register held an entry no client can have written ({}):"
                      + " ignored and dropped (values above 365 days, or expiring further than"
                      + " 3 × value + 10 s ahead, are never trusted)",
                  name,
                  entry));
    }
    if (epoch == epochs.get(index)) {
      // Our entry lapses no earlier than hold after the node ran the script (after we
      // sent it), on a clock at most driftFactor fast, rounded down to the millisecond.
      coveredUntil.set(
          index, sent + (long) (holdMillis * 1_000_000.0 / (1 + driftFactor)) - 1_000_000L);
      state.set(index, CONFIRMED);
      if (epoch != epochs.get(index)) {
        state.compareAndSet(index, CONFIRMED, NOT_CONFIRMED);
      }
    }
    seenMaxTtl[index] = held.maxTtlMillis();
    seenForever[index] = held.remainingMillis() < 0;
    // Kept a drift margin longer than the node says: a slow node clock keeps it longer.
    seenUntil[index] = received + (long) (held.remainingMillis() * 1_000_000.0 * (1 + driftFactor));
    recomputeWindow(received, logs);
  }

  private void failed(int index, String name, boolean counted, Throwable cause, LogLines logs) {
    if (cause instanceof UnsupportedOperationException) {
      state.set(index, NO_REGISTER);
      return;
    }
    // Named in the votes' detail whatever it is (an OOM, say), but a refusal only at WARN.
    String failed = RestartGuard.oneLine(cause);
    failure[index] = failed;
    if (Refusals.isRefusal(cause)) {
      if (!refusalLogged[index]) {
        refusalLogged[index] = true;
        logs.add(
            () ->
                log.warn(
                    "node={} refused the raise of the max-ttl register ({}): it does not"
                        + " count while the guard is on; allow EVAL, and GET, SET and TIME"
                        + " inside scripts, on key {} (see docs/production.md)",
                    name,
                    failed,
                    key));
      }
    } else if (!failureLogged[index]
        && !(cause instanceof TimeoutException)
        && !(cause instanceof IOException)
        && !(cause instanceof NodeStalledException)
        && counted) {
      // A node that answers with an error (OOM, LOADING, a failing script); a lost, slow or
      // stalled connection is routine, and said at DEBUG (the transport tells a stall once).
      // Said once loudly: the node does not count for this client until a raise succeeds;
      // then at DEBUG, for it repeats every second.
      failureLogged[index] = true;
      logs.add(
          () ->
              log.warn(
                  "node={} max-ttl register not raised ({}): it does not count for this client"
                      + " until a raise succeeds",
                  name,
                  failed));
    } else {
      logs.add(() -> log.debug("node={} max-ttl register not raised: {}", name, failed));
    }
  }

  /**
   * The window from the longest live value read from any node's register (never less than
   * this client's own): it grows at once when another client's longer value is read, and
   * shrinks once that value lapsed (its client stopped raising it, and its leases are over),
   * also when the node that told it no longer answers. Called under the guard's monitor, at
   * each of its ticks.
   */
  void recomputeWindow(long now, LogLines logs) {
    long longest = ownMaxTtlMillis;
    for (int i = 0; i < seenMaxTtl.length; i++) {
      long value = seenMaxTtl[i];
      if (value <= longest || (!seenForever[i] && seenUntil[i] - now <= 0)) {
        continue;
      }
      if (value > RedlockConfig.MAX_DURATION.toMillis()) {
        // No client can have written it (maxTtl is at most MAX_DURATION): not trusted to
        // freeze the cluster.
        logs.add(
            () -> log.debug("max-ttl register holds {} ms, beyond any maxTtl: ignored", value));
        continue;
      }
      longest = value;
    }
    long before = clusterMaxTtlMillis.getAndSet(longest);
    if (longest == before) {
      return;
    }
    windowNanos.set(window(longest, driftFactor));
    long widest = longest;
    if (longest > ownMaxTtlMillis && !widenedLogged) {
      widenedLogged = true;
      logs.add(
          () ->
              log.warn(
                  "a client of this cluster uses maxTtl {} ms, longer than this client's {} ms:"
                      + " restarted nodes are held back for the longer one while it raises the"
                      + " register; set the same maxTtl on every client",
                  widest,
                  ownMaxTtlMillis));
    } else if (longest < before) {
      String window = Durations.formatNanos(window(longest, driftFactor));
      logs.add(
          () ->
              log.info(
                  "the longest maxTtl in the cluster's register is now {} ms (was {} ms):"
                      + " restarted nodes are held back for {}",
                  widest,
                  before,
                  window));
    }
  }
}
