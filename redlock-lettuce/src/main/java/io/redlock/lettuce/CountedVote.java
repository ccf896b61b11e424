package io.redlock.lettuce;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.redlock.spi.NodeStalledException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The future of one vote request, counted in its node's {@link NodeBacklog} from the moment it
 * is handed to Lettuce until Lettuce lets go of it: answered by the node, or drained with a
 * lost connection. When the round stops waiting first (it cancels this future at its node
 * timeout), the request stays counted until its answer comes; when that cancel also cancels
 * the Lettuce command (a lock request), or Lettuce's own timeout fails the command, no answer
 * will be heard although Lettuce may still hold the command: it moves to the backlog's
 * cut-off part instead of being freed.
 *
 * <p>For a lock request, cancelling also cancels the Lettuce command, which Lettuce then never
 * writes if its event loop has not written it yet: a lock request that comes too late to count
 * does not land.
 *
 * <p>One object per request, also the callback of the Lettuce command, so that counting costs
 * no extra allocation. Thread-safe: whichever of the answer and the cancel comes first settles
 * the count ({@code counted}, changed once).
 *
 * @param <T> the Lettuce command's result
 * @param <V> the vote's value
 */
final class CountedVote<T, V> extends CompletableFuture<V> implements BiConsumer<T, Throwable> {
  private static final AtomicIntegerFieldUpdater<CountedVote> COUNTED =
      AtomicIntegerFieldUpdater.newUpdater(CountedVote.class, "counted");

  private final NodeBacklog backlog;
  private final long before;
  private final long size;
  private final Function<T, V> value;
  private final boolean cancelsCommand;
  private RedisFuture<T> command;
  private long place;
  private java.util.function.Supplier<RedisFuture<T>> onNoScript;

  /** 1 while the request is counted as its own, 0 once freed or moved to the cut-off part. */
  private volatile int counted = 1;

  /**
   * A vote admitted by {@code backlog}: made just before its command is handed to Lettuce (it
   * reads the backlog's position), followed right after ({@link #follow}).
   */
  CountedVote(NodeBacklog backlog, long size, Function<T, V> value, boolean cancelsCommand) {
    this.backlog = backlog;
    this.before = backlog.position();
    this.size = size;
    this.value = value;
    this.cancelsCommand = cancelsCommand;
  }

  /** Follows {@code command}; called once, right after it was handed to Lettuce. */
  CountedVote<T, V> follow(RedisFuture<T> command) {
    this.place = backlog.advance();
    this.command = command;
    command.whenComplete(this);
    return this;
  }

  /**
   * Asks {@code resend} for the one re-send a release may get after {@code NOSCRIPT} (see
   * {@link LettuceNodeClient}); it answers {@code null} when it cannot send (then the vote
   * fails with the {@code NOSCRIPT} error). The re-send is not counted in the backlog: it
   * happens only after an operator emptied the node's script cache, once per release then in
   * flight, which the bound already limits.
   */
  CountedVote<T, V> onNoScript(java.util.function.Supplier<RedisFuture<T>> resend) {
    this.onNoScript = resend;
    return this;
  }

  private boolean uncount() {
    return counted == 1 && COUNTED.compareAndSet(this, 1, 0);
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!isDone()) {
      if (!cancelsCommand) {
        backlog.late(); // its answer, when it comes, still frees it
      } else {
        if (uncount()) {
          backlog.cutOff(place, size);
        }
        if (command != null) {
          command.cancel(false); // first: the vote's dependents run when it is cancelled
        }
      }
    }
    return super.cancel(mayInterruptIfRunning);
  }

  /** The Lettuce command completed: an answer, Lettuce's timeout, or it left Lettuce. */
  @Override
  public void accept(T result, Throwable error) {
    Throwable cause = unwrap(error);
    if (cause == null || cause instanceof RedisCommandExecutionException) {
      // The node answered (an error reply is an answer too).
      if (uncount()) {
        backlog.answered(before, size);
      } else {
        backlog.progress(before);
      }
      if (cause instanceof io.lettuce.core.RedisNoScriptException && onNoScript != null) {
        RedisFuture<T> resent = onNoScript.get();
        if (resent != null) {
          resent.whenComplete(this::settleResent);
          return;
        }
      }
      if (cause == null) {
        V vote;
        try {
          vote = value.apply(result);
        } catch (RuntimeException e) {
          completeExceptionally(e);
          return;
        }
        complete(vote);
      } else {
        completeExceptionally(cause);
      }
      return;
    }
    if (cause instanceof RedisCommandTimeoutException) {
      if (uncount()) {
        backlog.cutOff(place, size); // written, maybe: Lettuce keeps it until the answer
      }
      TimeoutException timeout = new TimeoutException(cause.getMessage());
      timeout.initCause(cause);
      completeExceptionally(timeout);
      return;
    }
    if (cause instanceof CancellationException) {
      return; // cancelled through cancel(), which did the counting
    }
    if (uncount()) {
      backlog.left(size);
    }
    completeExceptionally(isLettuceBound(cause) ? backlogFull(cause) : cause);
  }

  private void settleResent(T result, Throwable error) {
    Throwable cause = unwrap(error);
    if (cause == null) {
      try {
        complete(value.apply(result));
      } catch (RuntimeException e) {
        completeExceptionally(e);
      }
    } else if (cause instanceof RedisCommandTimeoutException) {
      TimeoutException timeout = new TimeoutException(cause.getMessage());
      timeout.initCause(cause);
      completeExceptionally(timeout);
    } else {
      completeExceptionally(cause);
    }
  }

  /**
   * Whether Lettuce refused the command for its own request queue bound (the backstop under
   * {@link NodeBacklog}'s, which also holds the restart guard's probes). Lettuce says so only
   * in the message of a plain {@link RedisException}: this is the one place that reads it.
   */
  static boolean isLettuceBound(Throwable cause) {
    return cause instanceof RedisException
        && cause.getMessage() != null
        && cause.getMessage().contains("size exceeded");
  }

  private NodeStalledException backlogFull(Throwable cause) {
    backlog.refusedByLettuce();
    return new NodeStalledException("backlog full: " + cause.getMessage());
  }

  private static Throwable unwrap(Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
