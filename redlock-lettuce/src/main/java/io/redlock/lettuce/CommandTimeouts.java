package io.redlock.lettuce;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.RedisCommand;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Which commands Lettuce times out, and after how long.
 *
 * <p>{@code SET}, {@code EVALSHA} and {@code PING} (the one sentinel of a node set aside, see
 * {@link NodeBacklog}) get no Lettuce timeout. {@code SET} carries a one-key
 * lock, {@code EVALSHA} a release of any number of keys or a batch of auto-extensions
 * ({@link BatchedExtensions}): each is a request of a round (a batch: of one round per lease),
 * whose node timeout the algorithm enforces on every vote with one deadline per round. A
 * Lettuce timeout costs a timer entry made and cancelled per command, on a timer queue that
 * every calling thread and event loop shares: at 16 and 64 calling threads that was the
 * largest part of the client CPU a cycle cost beyond the bare fan-out (docs/profiling.md).
 * What the Lettuce timeout of {@code SET} did (a lock request not yet written when its vote
 * timed out was never written) the round does now: it cancels the requests its deadline cut
 * off, and {@link LettuceNodeClient#lock} lets that cancel an unwritten command.
 *
 * <p>Every other command keeps a Lettuce timeout, the longer delivery timeout, because some
 * of them belong to no round and their callers wait for an answer: the restart guard's probe
 * and register raise ({@code EVAL}), the init marker ({@code EVAL}). Lettuce's timeout is set
 * per command type, so the rounds' requests by {@code EVAL} keep it too and still pay the
 * timer: locks of several keys, fenced locks and their confirmation, extensions, and releases
 * where the node refuses {@code SCRIPT LOAD}. It is long because a release or extension by
 * {@code EVAL} must still be written when the event loop is late, or a key would outlive its
 * release. A timeout does not free a command that was written: Lettuce keeps it until the
 * node answers or the connection closes, to match replies in order.
 */
final class CommandTimeouts extends TimeoutOptions.TimeoutSource {
  /** The least time a command other than {@code SET} and {@code EVALSHA} is kept: 1 s. */
  static final Duration MIN_DELIVERY_TIMEOUT = Duration.ofSeconds(1);

  private final long deliveryNanos;

  CommandTimeouts(Duration nodeTimeout) {
    this.deliveryNanos = Math.max(MIN_DELIVERY_TIMEOUT.toNanos(), 10 * nodeTimeout.toNanos());
  }

  @Override
  public long getTimeout(RedisCommand<?, ?, ?> command) {
    // The one other sender of these two commands, the ACL check at a node's first probe
    // (LettuceNodeClient.refusedCommands), only logs what it hears: it may wait without a bound.
    // PING is the sentinel sent to a node set aside as silent (NodeBacklog): one at a time,
    // it waits for the node's answer however long that takes.
    ProtocolKeyword type = command.getType();
    return type == CommandType.SET || type == CommandType.EVALSHA || type == CommandType.PING
        ? 0
        : deliveryNanos;
  }

  @Override
  public TimeUnit getTimeUnit() {
    return TimeUnit.NANOSECONDS;
  }
}
