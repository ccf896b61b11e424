package io.redlock.torture;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Running totals of a torture run, shared by its clients. Thread-safe. */
final class TortureCounters {
  private final LongAdder attempts = new LongAdder();
  private final LongAdder acquired = new LongAdder();
  private final LongAdder lost = new LongAdder();
  private final LongAdder committed = new LongAdder();
  private final Map<String, LongAdder> failures = new ConcurrentHashMap<>();

  void attempt() {
    attempts.increment();
  }

  void granted() {
    acquired.increment();
  }

  void lost() {
    lost.increment();
  }

  /** A fenced write the store took. */
  void committed() {
    committed.increment();
  }

  long committedWrites() {
    return committed.sum();
  }

  void failure(String cause) {
    failures.computeIfAbsent(cause, c -> new LongAdder()).increment();
  }

  /** Adds another process's totals. */
  void add(long attempts, long acquired, long lost, Map<String, Long> failures) {
    this.attempts.add(attempts);
    this.acquired.add(acquired);
    this.lost.add(lost);
    failures.forEach(
        (cause, count) -> this.failures.computeIfAbsent(cause, c -> new LongAdder()).add(count));
  }

  long attempts() {
    return attempts.sum();
  }

  long acquired() {
    return acquired.sum();
  }

  long lostBeforeWrite() {
    return lost.sum();
  }

  Map<String, Long> failures() {
    Map<String, Long> snapshot = new TreeMap<>();
    failures.forEach((cause, count) -> snapshot.put(cause, count.sum()));
    return snapshot;
  }
}
