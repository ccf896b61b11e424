package io.redlock.randomized;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.Redlock;
import io.redlock.fake.FakeTime;
import io.redlock.randomized.History.LeaseRecord;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;

/**
 * One client's workload: a few operations, each acquire (with retries), work for a while,
 * commit if the lease is still valid, release, think. All of it runs on the client's own
 * {@link DriftingClock} and through its {@link ClientProcess}, so pauses delay it.
 */
final class SimClient {
  private static final Duration TTL = Duration.ofMillis(Schedule.TTL_MILLIS);

  private final int id;
  private final Redlock redlock;
  private final DriftingClock clock;
  private final FakeTime truth;
  private final Random random;
  private final Schedule.ClientSpec spec;
  private final List<List<String>> resourceChoices;
  private final History history;
  private int operationsLeft;
  private boolean done;

  SimClient(
      int id,
      Redlock redlock,
      DriftingClock clock,
      FakeTime truth,
      Random random,
      Schedule.ClientSpec spec,
      List<List<String>> resourceChoices,
      History history) {
    this.id = id;
    this.redlock = redlock;
    this.clock = clock;
    this.truth = truth;
    this.random = random;
    this.spec = spec;
    this.resourceChoices = resourceChoices;
    this.history = history;
    this.operationsLeft = spec.operations();
  }

  void start() {
    clock.schedule(this::nextOperation, spec.startDelayNanos());
  }

  boolean done() {
    return done;
  }

  private void nextOperation() {
    if (operationsLeft == 0) {
      done = true;
      history.trace(truth.nanoTime(), () -> "client" + id + " done");
      return;
    }
    operationsLeft--;
    List<String> resources = resourceChoices.get(random.nextInt(resourceChoices.size()));
    history.trace(truth.nanoTime(), () -> "client" + id + " acquires " + resources);
    redlock
        .acquireAsync(resources, TTL)
        .whenComplete(
            (lease, error) -> {
              if (error == null) {
                granted(resources, lease);
                return;
              }
              Throwable cause =
                  error instanceof CompletionException && error.getCause() != null
                      ? error.getCause()
                      : error;
              if (cause instanceof LockUnavailableException) {
                history.failedAcquisitions++;
                history.trace(
                    truth.nanoTime(), () -> "client" + id + " gave up: " + cause.getMessage());
              } else {
                history.errors.add(cause);
              }
              think();
            });
  }

  private void granted(List<String> resources, Lease lease) {
    long now = truth.nanoTime();
    long localDeadline = clock.nanoTime() + lease.remaining().toNanos();
    LeaseRecord record = history.granted(id, resources, now, clock.toTrue(localDeadline));
    if (redlock.config().fencing()) {
      record.fencingToken = lease.fencingToken();
    }
    history.trace(now, () -> "client" + id + " granted " + record);
    long work =
        spec.workMinNanos()
            + (long) (random.nextDouble() * (spec.workMaxNanos() - spec.workMinNanos()));
    clock.schedule(() -> finishWork(lease, record), work);
  }

  private void finishWork(Lease lease, LeaseRecord record) {
    long now = truth.nanoTime();
    if (lease.isValid()) {
      record.commits.add(history.since(now));
      history.trace(now, () -> "client" + id + " commits under lease#" + record.number);
    } else {
      history.trace(
          now, () -> "client" + id + " lease#" + record.number + " no longer valid: no commit");
    }
    record.released = history.since(now);
    lease.releaseAsync();
    think();
  }

  private void think() {
    clock.schedule(this::nextOperation, (long) (random.nextDouble() * spec.thinkMaxNanos()));
  }
}
