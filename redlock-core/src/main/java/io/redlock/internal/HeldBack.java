package io.redlock.internal;

/**
 * The failed reply of a node the restart guard does not count: the round records it as
 * {@link io.redlock.NodeOutcome.Vote#HELD_BACK}, by type, whatever the message says. Without
 * a stack trace: it is an outcome, not a fault, and there may be many.
 */
final class HeldBack extends Exception {
  private static final long serialVersionUID = 1L;

  HeldBack(String why) {
    super(why, null, false, false);
  }
}
