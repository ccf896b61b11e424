package io.redlock;

import io.redlock.internal.Events;
import io.redlock.internal.SystemTimeSource;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeTransport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;

/**
 * What one {@link Redlock} opened and closes: the node clients, the transports it found
 * itself, the clock with its timer thread, the callback threads and the listeners' queues.
 * {@link #close()} is the one cleanup sequence, whether start-up failed half-way or the
 * instance is closed; an instance over caller-owned parts owns {@link #none() none}.
 */
final class OwnedResources {
  final List<NodeClient> clients = new ArrayList<>();
  final SystemTimeSource time;
  final ExecutorService callbacks;
  private final List<NodeTransport> transports;
  private Events events;

  /** Opens the clock and the callback threads, and takes over {@code transports}. */
  OwnedResources(List<NodeTransport> transports) {
    this.transports = List.copyOf(transports);
    this.time = new SystemTimeSource();
    this.callbacks = Connector.callbackExecutor();
  }

  private OwnedResources() {
    this.transports = List.of();
    this.time = null;
    this.callbacks = null;
  }

  /** Owns nothing: for an instance over node clients, clock and executor of the caller. */
  static OwnedResources none() {
    return new OwnedResources();
  }

  /** Opens the listeners' queues (one thread each), closed with the rest. */
  Events events(List<RedlockListener> listeners) {
    events = Events.queued(listeners);
    return events;
  }

  /**
   * Closes the connections, then the transports, the timer and the callback threads, and
   * last the listeners' queues, whose events already queued (the releases of close) are still
   * delivered. Call it once the engine has drained.
   */
  void close() {
    clients.forEach(NodeClient::close);
    transports.forEach(NodeTransport::close);
    if (time != null) {
      time.close();
    }
    if (callbacks != null) {
      callbacks.shutdown();
    }
    if (events != null) {
      events.close();
    }
  }
}
