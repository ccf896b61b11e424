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
 * <p>The requests of a round get no Lettuce timeout: {@code SET} (a lock of one key) and every
 * script a round sends ({@link RoundCommand}: locks of several keys, fenced locks and their
 * confirmation, extensions alone or in batches ({@link BatchedExtensions}), releases by
 * {@code EVALSHA} or {@code EVAL}), and {@code PING} (the
 * one sentinel of a node set aside, see {@link NodeBacklog}). The round enforces the node
 * timeout on every vote with one deadline per round. A Lettuce timeout costs a timer entry made
 * and cancelled per command, on a timer queue that every calling thread and event loop shares:
 * at 16 and 64 calling threads that was the largest part of the client CPU a cycle cost beyond
 * the bare fan-out (docs/profiling.md). What the Lettuce timeout of a lock did (a lock request
 * not yet written when its vote timed out was never written) the round does now: it cancels
 * the requests its deadline cut off, and {@link LettuceNodeClient#lock} lets that cancel an
 * unwritten command. Every other request of a round is written however late: a release or an
 * extension that a Lettuce timeout had failed before it was written would never have been
 * written, and its key would have outlived its release.
 *
 * <p>Every other command keeps a Lettuce timeout, the longer delivery timeout: they belong to
 * no round and their callers wait for an answer: the restart guard's probe and register raise,
 * the init marker. A timeout does not free a command that was written: Lettuce keeps it until
 * the node answers or the connection closes, to match replies in order.
 */
final class CommandTimeouts extends TimeoutOptions.TimeoutSource {
  /** The least time a command that belongs to no round is kept: 1 s. */
  static final Duration MIN_DELIVERY_TIMEOUT = Duration.ofSeconds(1);

  private final long deliveryNanos;

  CommandTimeouts(Duration nodeTimeout) {
    this.deliveryNanos = Math.max(MIN_DELIVERY_TIMEOUT.toNanos(), 10 * nodeTimeout.toNanos());
  }

  @Override
  public long getTimeout(RedisCommand<?, ?, ?> command) {
    // The one other sender of SET and Lettuce's own EVALSHA, the ACL check at a node's first
    // probe (LettuceNodeClient.refusedCommands), only logs what it hears: it may wait without
    // a bound. PING is the sentinel sent to a node set aside as silent (NodeBacklog): one at a
    // time, it waits for the node's answer however long that takes; so does the one INFO a
    // new connection sends for the run id of its process (NodeConnection.ProcessQuery).
    ProtocolKeyword type = command.getType();
    return type instanceof RoundCommand
            || type == NodeConnection.ProcessQuery.INFO
            || type == CommandType.SET
            || type == CommandType.EVALSHA
            || type == CommandType.PING
        ? 0
        : deliveryNanos;
  }

  @Override
  public TimeUnit getTimeUnit() {
    return TimeUnit.NANOSECONDS;
  }
}
