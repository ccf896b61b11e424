package io.redlock.torture;

/**
 * What the nemesis needs of a client, whether it runs in this JVM or in another process.
 * Implementations are thread-safe.
 */
interface ClientHandle {
  /** The client's name, also the name of its fault proxies. */
  String name();

  /** Asks the client to stop, at its next pause point, for longer than its lease is valid. */
  void requestPause();

  /** The resource the client holds a lease on now, as far as known, or {@code null}. */
  String holding();
}
