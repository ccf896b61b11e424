package io.redlock.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * What every client of a run did, for {@link SafetyChecker}: its leases and its work.
 *
 * <p>Thread-safe: any number of client threads record at once; the lists returned are
 * snapshots.
 *
 * @since 0.1.0
 */
public final class History {

  private final List<LeaseRecord> leases = new ArrayList<>();
  private final List<WorkRecord> work = new ArrayList<>();

  public synchronized void lease(LeaseRecord lease) {
    leases.add(lease);
  }

  public synchronized void work(WorkRecord record) {
    work.add(record);
  }

  /** Adds everything another history recorded (for example one read from another process). */
  public synchronized void addAll(History other) {
    leases.addAll(other.leases());
    work.addAll(other.work());
  }

  public synchronized List<LeaseRecord> leases() {
    return List.copyOf(leases);
  }

  public synchronized List<WorkRecord> work() {
    return List.copyOf(work);
  }
}
