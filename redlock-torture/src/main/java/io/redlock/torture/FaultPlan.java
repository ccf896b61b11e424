package io.redlock.torture;

import java.util.List;
import java.util.Objects;

/**
 * What the nemesis of a torture run does: draw faults at random from the run's options
 * ({@link #random()}), or follow a script of steps at fixed shares of the run's duration
 * ({@link #script(List)}), as {@code redlock demo} does.
 *
 * <p>Immutable, so safe to share between threads.
 */
public sealed interface FaultPlan {

  /**
   * Faults drawn one at a time from {@link TortureOptions#faults()}, at random intervals around
   * {@link TortureOptions#faultInterval()}, all from {@link TortureOptions#seed()}.
   */
  static FaultPlan random() {
    return RandomFaults.INSTANCE;
  }

  /** The given steps, in order, each at its share of the run's duration. */
  static FaultPlan script(List<Step> steps) {
    return new Script(steps);
  }

  /** The plan of {@link #random()}. */
  enum RandomFaults implements FaultPlan {
    INSTANCE
  }

  /**
   * A fixed list of steps.
   *
   * @param steps the steps, in the order they run
   */
  record Script(List<Step> steps) implements FaultPlan {
    public Script {
      steps = List.copyOf(steps);
    }
  }

  /** What one scripted step does to its node. */
  enum Action {
    /** SIGKILL the node and leave it down (recorded as the start of a {@link Fault#KILL}). */
    KILL,
    /** SIGSTOP the node (the start of a {@link Fault#PAUSE}). */
    PAUSE,
    /** SIGCONT the node (the end of a {@link Fault#PAUSE}). */
    RESUME,
    /**
     * Start the node again, empty unless the run persists writes (a {@link Fault#RESTART_EMPTY};
     * if a {@link #KILL} left it down, also the end of that kill).
     */
    RESTART_EMPTY,
    /**
     * Ask client number {@code node} (counting the run's clients from 0, round robin past the
     * last) to pause at its next pause point, for longer than its lease (a
     * {@link Fault#CLIENT_PAUSE}).
     */
    PAUSE_CLIENT
  }

  /**
   * One scripted step.
   *
   * @param at when, as a share of the run's duration, from 0 (its start) to 1 (its end)
   * @param action what happens
   * @param node to which node (for {@link Action#PAUSE_CLIENT}, which client)
   */
  record Step(double at, Action action, int node) {
    /** @throws IllegalArgumentException if {@code at} is not from 0 to 1, or node is negative */
    public Step {
      Objects.requireNonNull(action, "action");
      if (!(at >= 0 && at <= 1) || node < 0) {
        throw new IllegalArgumentException(
            "step "
                + action
                + " at "
                + at
                + " on node "
                + node
                + " is not accepted: at must be from 0 to 1, node 0 or more");
      }
    }
  }
}
