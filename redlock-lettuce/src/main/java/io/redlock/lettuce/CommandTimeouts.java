package io.redlock.lettuce;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long Lettuce keeps each command before failing it.
 *
 * <p>The algorithm enforces the node timeout on every vote with its own timer, whatever
 * Lettuce does. Lettuce's timeout decides something else: a command that times out before
 * its event loop wrote it is never sent. For {@code SET NX} that is welcome (a late lock
 * request that never lands leaves nothing behind), so it gets the node timeout. A release or
 * an extension must reach the node even when the event loop is late, or a key would outlive
 * its holder's release; scripts therefore get a longer delivery timeout, which only bounds
 * how long a command to a stalled node is kept in memory. (The lock script for several keys
 * is a script too and gets the longer timeout; that only means a late one may still land, to
 * be deleted by the cleanup that follows it.)
 */
final class CommandTimeouts extends TimeoutOptions.TimeoutSource {
  /** The least time a script command is kept: 1 s. */
  static final Duration MIN_DELIVERY_TIMEOUT = Duration.ofSeconds(1);

  private final long lockNanos;
  private final long deliveryNanos;

  CommandTimeouts(Duration nodeTimeout) {
    this.lockNanos = nodeTimeout.toNanos();
    this.deliveryNanos = Math.max(MIN_DELIVERY_TIMEOUT.toNanos(), 10 * lockNanos);
  }

  @Override
  public long getTimeout(RedisCommand<?, ?, ?> command) {
    return command.getType() == CommandType.SET ? lockNanos : deliveryNanos;
  }

  @Override
  public TimeUnit getTimeUnit() {
    return TimeUnit.NANOSECONDS;
  }
}
