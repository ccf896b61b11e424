package io.redlock.torture;

/** The faults the nemesis of a torture run can inject. */
public enum Fault {
  /** SIGKILL one node, leave it down for a while, then start it again (empty, unless AOF). */
  KILL,
  /** Kill one node and start it again at once, without its keys unless persistence is on. */
  RESTART_EMPTY,
  /**
   * SIGSTOP one node for a stall of {@link Nemesis#STALL_MIN} to {@link Nemesis#STALL_MIN} +
   * {@link Nemesis#STALL_SPREAD} (at most a tenth of the run), then SIGCONT: long enough for
   * the clients to set the node aside and for its backlog to reach its bound.
   */
  PAUSE,
  /** Keep one node busy with {@code DEBUG SLEEP} (a slow command) for up to half a ttl. */
  SLOW_COMMAND,
  /** Cut one client off from some nodes (a partition), while the others still reach them. */
  PARTITION,
  /** Add latency and jitter to one node's traffic, around the node timeout, for a while. */
  LATENCY,
  /**
   * Swallow one node's traffic without closing connections, for a stall as long as a {@link
   * #PAUSE}.
   */
  BLACKHOLE,
  /**
   * Stop one client for longer than its lease is valid, as a long GC pause would: before it
   * checks its lease (the safe case), or, in the unsafe variant, between check and write.
   */
  CLIENT_PAUSE,
  /**
   * While a lease is held, restart a majority of the nodes empty at once: the case the
   * restart guard exists for.
   */
  MAJORITY_RESTART,
  /**
   * Copy one node's data files (after a {@code SAVE}), let leases be granted for a while, then
   * kill the node and start it on the copy: a restored backup, with counters and lock keys older
   * than what the node confirmed since. The restart guard must not trust it.
   */
  RESTORE_BACKUP,
  /**
   * An out-of-memory incident on one node: an evicting policy and a memory limit just above
   * what is used, writes until keys are evicted (lock keys and counters among them), then the
   * limit and {@code noeviction} set back. The node's {@code evicted_keys} is the tripwire.
   */
  EVICTION
}
