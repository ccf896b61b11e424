package io.redlock.testkit;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ordered record of every fault set or healed on the {@link FaultProxy proxies} that share
 * it, so a test can show when each fault began and ended next to what its clients saw.
 *
 * <p>Each event is also logged at INFO with the proxy name. Events are kept in the order they
 * were recorded, and an event's timestamps are taken while it is being appended, so its
 * {@link FaultEvent#nanoTime() nanoTime} never decreases along the list (the wall-clock
 * {@link FaultEvent#at() at} does too, unless the system clock is stepped back).
 *
 * <p>Thread-safe: recording and reading synchronize on the log; {@link #events()} returns a
 * snapshot.
 *
 * @since 0.1.0
 */
public final class FaultLog {

  private static final Logger LOG = LoggerFactory.getLogger(FaultLog.class);

  // Guarded by this.
  private final List<FaultEvent> events = new ArrayList<>();

  /** Creates an empty log. */
  public FaultLog() {}

  /**
   * Returns every event recorded so far, oldest first.
   *
   * @return an immutable snapshot
   */
  public synchronized List<FaultEvent> events() {
    return List.copyOf(events);
  }

  /**
   * Returns the events of one proxy, oldest first.
   *
   * @param proxy a proxy name, as given by {@link FaultProxy#name()}
   * @return an immutable snapshot, empty if that proxy recorded nothing
   */
  public synchronized List<FaultEvent> eventsOf(String proxy) {
    return events.stream().filter(e -> e.proxy().equals(proxy)).toList();
  }

  /** Appends an event stamped now and logs it at INFO. */
  synchronized FaultEvent record(String proxy, FaultEvent.Kind kind, String detail) {
    FaultEvent event = new FaultEvent(Instant.now(), System.nanoTime(), proxy, kind, detail);
    events.add(event);
    LOG.info("Fault proxy {}: {} {}", proxy, kind, detail);
    return event;
  }
}
