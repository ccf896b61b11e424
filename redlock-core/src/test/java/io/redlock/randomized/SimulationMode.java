package io.redlock.randomized;

/**
 * What a schedule is drawn to test. {@link #SAFE} stays within the assumptions the library
 * declares and must never break mutual exclusion; the others break one assumption on purpose
 * (or keep it, as a control) to show that the simulation can see a violation at all.
 */
enum SimulationMode {
  /**
   * Every fault the model has, within the declared bounds: clocks drift at most ±0.5% each
   * (so any client and node differ by at most the drift factor, 1%), message delays and
   * losses, node crashes with or without persistence, empty restarts, client pauses; the
   * restart guard on.
   */
  SAFE(true),
  /** Clients' clocks 20% slow against the nodes' (beyond the 1% declared); no other fault. */
  DRIFT_BEYOND_BOUND(true),
  /** A majority of nodes restart empty while leases are held, with the restart guard off. */
  RESTARTS_GUARD_OFF(false),
  /** The same restarts as {@link #RESTARTS_GUARD_OFF}, with the restart guard on. */
  RESTARTS_GUARD_ON(true),
  /**
   * The same restarts, on a cluster declared fresh at the start ({@code init}): the marker
   * makes the nodes count at once until they restart, and must stop counting then.
   */
  FRESH_MARKER_RESTARTS(true),
  /**
   * The same cluster, but right after the restarts an operator forces {@code init} on it
   * while leases are held: a marker bound to the new processes. Breaks the rule that init is
   * for unused clusters, to show that the marker is what counts a node at once.
   */
  INIT_FORCED_ON_A_USED_CLUSTER(true),
  /**
   * Nodes report AOF with {@code appendfsync always} and were declared fresh; a majority
   * crashes and recovers with its keys: they count at once, and keep mutual exclusion.
   */
  AOF_RESTARTS(true),
  /**
   * Nodes report AOF always and were declared fresh, but a majority restarts empty (a lost
   * data directory): no marker of an earlier process, so they must be held back.
   */
  AOF_LOST_DIRECTORY(true),
  /**
   * {@link #SAFE}'s faults on a cluster declared fresh, with fenced leases: successive holders
   * of a resource must get strictly increasing fencing tokens, restarts and drift included.
   */
  FENCED(true),
  /**
   * Fenced leases whose tokens are never confirmed: the nodes answer the second round without
   * raising their counters, as if the client skipped it. Tokens repeat.
   */
  FENCED_WITHOUT_CONFIRMATION(true),
  /**
   * Fenced leases, and a majority of nodes restart empty while an operator forces
   * {@code init} on them: nodes that lost their counters are trusted again, breaking the rule
   * that keeps a node that lost state out of fencing. Tokens go back.
   */
  FENCED_INIT_FORCED(true),
  /**
   * A minority of nodes have clocks running {@link Schedule#FAST_CLOCK_RATE} fast, for their
   * {@code TIME} and their keys' expiry alike (beyond the drift factor, 1%), with the restart
   * guard off: their keys expire early, and a client holding a lease on just a majority that
   * includes them may lose it to another.
   */
  FAST_CLOCKS_GUARD_OFF(false),
  /**
   * The same clocks with the restart guard on. The workload starts once every client has
   * probed each node twice (the rate rule needs two readings): the guard then holds the fast
   * nodes back for good, and the others, a majority, grant every lease.
   */
  FAST_CLOCKS_GUARD_ON(true),
  /**
   * Fenced leases on nodes that report AOF with {@code appendfsync always} and were declared
   * fresh; a majority crashes and recovers with its keys, counters included: the one path on
   * which a restarted node's counters are trusted at once. Tokens must keep increasing.
   */
  FENCED_AOF_RESTARTS(true),
  /**
   * The rule of docs/safety.md switched off: a majority of nodes restart empty while leases
   * are held, and each one's counters are trusted as soon as the restart guard lets it count
   * for locks again (here: its process is declared fresh once the guard's window has passed).
   * Mutual exclusion holds, but tokens go back.
   */
  FENCED_COUNTERS_TRUSTED_ONCE_COUNTING(true),
  /**
   * Fenced leases on nodes that persist every write, with events of a node's history: data
   * restored from an older copy, another node's data, counters evicted in place. The restored
   * or foreign data carries a record that admits an earlier process and AOF always is reported:
   * only history (the watchers' sequence, the record's process, the eviction count, checked by
   * the fenced lock itself) keeps tokens from going back.
   */
  FENCED_HISTORY_FAULTS(true);

  final boolean restartGuard;

  SimulationMode(boolean restartGuard) {
    this.restartGuard = restartGuard;
  }

  /**
   * Whether the nodes carry a fresh marker from the start, as after {@code redlock init}: in
   * every mode, as users declare a new cluster; the restart guard then holds back only the
   * nodes that restart, and a node no client saw before is never counted by its uptime.
   */
  boolean declaredFresh() {
    return true;
  }

  /** Whether the nodes report AOF with {@code appendfsync always}. */
  boolean aofAlways() {
    return this == AOF_RESTARTS
        || this == AOF_LOST_DIRECTORY
        || this == FENCED_AOF_RESTARTS
        || this == FENCED_HISTORY_FAULTS;
  }

  /** Whether the clients take fenced leases. */
  boolean fenced() {
    return this == FENCED
        || this == FENCED_WITHOUT_CONFIRMATION
        || this == FENCED_INIT_FORCED
        || this == FENCED_AOF_RESTARTS
        || this == FENCED_COUNTERS_TRUSTED_ONCE_COUNTING
        || this == FENCED_HISTORY_FAULTS;
  }

  /** Whether an operator forces {@code init} on nodes right after they restart empty. */
  boolean initForcedAfterRestarts() {
    return this == INIT_FORCED_ON_A_USED_CLUSTER || this == FENCED_INIT_FORCED;
  }

  /** Whether a minority of nodes run {@link Schedule#FAST_CLOCK_RATE} fast. */
  boolean fastClocks() {
    return this == FAST_CLOCKS_GUARD_OFF || this == FAST_CLOCKS_GUARD_ON;
  }

  /** Whether the schedule draws every fault of {@link #SAFE}. */
  boolean allFaults() {
    return this == SAFE || this == FENCED;
  }
}
