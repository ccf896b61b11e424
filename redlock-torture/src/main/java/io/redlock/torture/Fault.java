package io.redlock.torture;

/** The faults the nemesis of a torture run can inject. */
public enum Fault {
  /** SIGKILL one node, leave it down for a while, then start it again (empty, unless AOF). */
  KILL("kill one node, restart it after a while"),
  /** Kill one node and start it again at once, without its keys unless persistence is on. */
  RESTART_EMPTY("restart one node at once, empty"),
  /** SIGSTOP one node for a while (up to one ttl), then SIGCONT. */
  PAUSE("pause one node (SIGSTOP) for up to a ttl"),
  /** Keep one node busy with {@code DEBUG SLEEP} (a slow command) for up to half a ttl. */
  SLOW_COMMAND("keep one node busy with DEBUG SLEEP for up to half a ttl"),
  /** Cut one client off from some nodes (a partition), while the others still reach them. */
  PARTITION("cut one client off from some nodes for a while"),
  /** Add latency and jitter to one node's traffic, around the node timeout, for a while. */
  LATENCY("slow one node's network down, around the node timeout"),
  /** Swallow one node's traffic without closing connections, for a while. */
  BLACKHOLE("black-hole one node's traffic for a while"),
  /**
   * Stop one client for longer than its lease is valid, as a long GC pause would: before it
   * checks its lease (the safe case), or, in the unsafe variant, between check and write.
   */
  CLIENT_PAUSE("pause one client past its lease's validity"),
  /**
   * While a lease is held, restart a majority of the nodes empty at once: the case the
   * restart guard exists for.
   */
  MAJORITY_RESTART("restart a majority of the nodes empty while a lease is held");

  private final String description;

  Fault(String description) {
    this.description = description;
  }

  /** What the fault does, in a few words. */
  public String description() {
    return description;
  }
}
