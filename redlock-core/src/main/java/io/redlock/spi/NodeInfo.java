package io.redlock.spi;

import java.util.Objects;

/**
 * What a node says about itself: which process it is, what role it plays, how long it has
 * been up and what its clock reads. Read from {@code INFO server}, {@code INFO replication}
 * and {@code TIME}.
 *
 * @param runId the random id Redis draws at each start: a new one means a new process, which
 *     remembers only what it persisted
 * @param role {@code master}, or {@code slave} for a replica
 * @param uptimeSeconds seconds since the process started ({@code uptime_in_seconds})
 * @param serverTimeMicros the node's wall clock ({@code TIME}), in microseconds since the
 *     epoch; Redis expires keys by it
 */
public record NodeInfo(String runId, String role, long uptimeSeconds, long serverTimeMicros) {

  public NodeInfo {
    Objects.requireNonNull(runId, "runId");
    Objects.requireNonNull(role, "role");
  }

  /** Whether the node is a replica, which Redlock must not use as one of its masters. */
  public boolean isReplica() {
    return role.equals("slave") || role.equals("replica");
  }
}
