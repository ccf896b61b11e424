package io.redlock.simulation;

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
  RESTARTS_GUARD_ON(true);

  final boolean restartGuard;

  SimulationMode(boolean restartGuard) {
    this.restartGuard = restartGuard;
  }
}
