package io.redlock.internal;

/**
 * The failed reply, in a fenced acquisition, of a node whose fencing counters are not trusted:
 * the round records it as {@link io.redlock.NodeOutcome.Vote#UNTRUSTED}, by type, whatever the
 * message says. Without a stack trace: it is an outcome, not a fault.
 */
final class Untrusted extends Exception {
  private static final long serialVersionUID = 1L;

  Untrusted(String why) {
    super(why, null, false, false);
  }
}
