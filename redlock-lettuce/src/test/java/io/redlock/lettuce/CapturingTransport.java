package io.redlock.lettuce;

import io.redlock.RedlockConfig;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeSettings;
import io.redlock.spi.NodeTransport;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link LettuceTransport} that keeps the node clients it opens, so that a test can look at
 * one node's backlogs. Closing it leaves the transport open: its owner closes that.
 */
final class CapturingTransport implements NodeTransport {
  private final LettuceTransport transport;
  private final List<LettuceNodeClient> clients = new CopyOnWriteArrayList<>();

  CapturingTransport(LettuceTransport transport) {
    this.transport = transport;
  }

  @Override
  public boolean supports(URI uri) {
    return transport.supports(uri);
  }

  @Override
  public NodeClient open(NodeSettings node) {
    NodeClient client = transport.open(node);
    clients.add((LettuceNodeClient) client);
    return client;
  }

  /** The client opened for the node at {@code uri} under {@code config}. */
  LettuceNodeClient clientOf(String uri, RedlockConfig config) {
    String name = NodeSettings.of(uri, config).name();
    return clients.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  @Override
  public void close() {}
}
