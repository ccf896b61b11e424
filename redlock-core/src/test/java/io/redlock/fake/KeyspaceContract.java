package io.redlock.fake;

import io.redlock.spi.contract.NodeClientContract;
import java.time.Duration;

/**
 * The node contract for a fake node whose keys are a {@link Keyspace}: the suite looks at and
 * sets keys in it directly, as it does with {@code GET}, {@code PTTL} and {@code SET} on a
 * real server.
 */
public abstract class KeyspaceContract extends NodeClientContract {

  /** The keys of the node under test. */
  protected abstract Keyspace keyspace();

  @Override
  protected final String valueOf(String key) {
    return keyspace().valueOf(key);
  }

  @Override
  protected final long pttl(String key) {
    return keyspace().pttl(key);
  }

  @Override
  protected final void put(String key, String value, Duration ttl) {
    keyspace().put(key, value, ttl);
  }
}
