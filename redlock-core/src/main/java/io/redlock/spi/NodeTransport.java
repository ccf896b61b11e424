package io.redlock.spi;

import io.redlock.RedlockConfig;
import java.net.URI;

/**
 * Opens {@link NodeClient}s for node URIs of the schemes it supports.
 *
 * <p>{@link io.redlock.Redlock#create(RedlockConfig)} finds transports with
 * {@link java.util.ServiceLoader}; {@code redlock-lettuce} provides the one for
 * {@code redis://} and {@code rediss://}. Implementations are thread-safe.
 *
 * @since 0.1.0
 */
public interface NodeTransport extends AutoCloseable {

  /** Whether this transport can open a client for {@code uri} (usually: by its scheme). */
  boolean supports(URI uri);

  /**
   * Returns a client for one node at once, connecting in the background; see
   * {@link NodeClient#connected()}. The client goes by {@link NodeSettings#name()}.
   *
   * @throws io.redlock.RedlockConfigException if the transport cannot use the node's URI
   */
  NodeClient open(NodeSettings node);

  /** Frees what the transport shares between its clients (threads, buffers). Idempotent. */
  @Override
  void close();
}
