package io.redlock.internal;

import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeStalledException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request sent to every node at once, and the votes that come back.
 *
 * <p>All requests leave before any answer is awaited. {@link #decision()} completes as soon as
 * the outcome is certain (see {@link Quorum}) and every request was handed to its node's
 * connection; requests still in flight keep going and are
 * recorded by {@link #settled()}, which completes once every node answered or the node timeout
 * passed. One deadline per round enforces the node timeout for every node: they all started at
 * the same instant. {@link RoundTimeouts} keeps the deadlines of all rounds of one engine.
 *
 * <p>Note on concurrency: answers arrive on transport threads and the timeout on the timer
 * thread, in any order. Every vote is recorded under this round's monitor, the first vote per
 * node wins, and futures are completed outside the monitor so that no callback runs under it.
 */
final class Round {
  private static final Logger log = LoggerFactory.getLogger(Round.class);

  /**
   * The votes at one moment: whether a quorum granted, when, and each node's vote. The
   * per-node {@link NodeOutcome}s are built only when asked for (for an exception or a log
   * line), not on every round.
   */
  public static final class Result {
    private final boolean reached;
    private final long atNanos;
    private final List<NodeClient> nodes;
    private final Vote[] votes;
    private final String[] details;

    Result(boolean reached, long atNanos, List<NodeClient> nodes, Vote[] votes, String[] details) {
      this.reached = reached;
      this.atNanos = atNanos;
      this.nodes = nodes;
      this.votes = votes;
      this.details = details;
    }

    /** Whether a quorum granted. */
    public boolean reached() {
      return reached;
    }

    /** Monotonic instant of the snapshot (for a decision: when it was made). */
    public long atNanos() {
      return atNanos;
    }

    /** One outcome per node, in node order. */
    public List<NodeOutcome> outcomes() {
      List<NodeOutcome> outcomes = new ArrayList<>(votes.length);
      for (int i = 0; i < votes.length; i++) {
        outcomes.add(new NodeOutcome(i, nodes.get(i).name(), votes[i], details[i]));
      }
      return List.copyOf(outcomes);
    }

    /** How many nodes voted {@code vote}. */
    public int count(Vote vote) {
      int count = 0;
      for (Vote each : votes) {
        if (each == vote) {
          count++;
        }
      }
      return count;
    }
  }

  private final List<NodeClient> nodes;
  private final int quorum;
  private final long timeoutNanos;
  private final TimeSource time;

  /** Set once by {@link RoundTimeouts#add}, under its monitor, and read only there. */
  long deadlineNanos;

  private final Vote[] votes;
  private final String[] details;

  /**
   * Each node's request, for {@link #cancelCutOff()}: written by the sending thread before
   * {@link #sent()}, read only after it (the monitor orders the two).
   */
  private final CompletionStage<?>[] requests;

  private final CompletableFuture<Result> decision = new CompletableFuture<>();
  private final CompletableFuture<Result> settled = new CompletableFuture<>();
  private int granted;
  private int failed;
  private boolean decided;
  private boolean sending = true;
  private boolean expired;
  private volatile boolean finished;

  private Round(List<NodeClient> nodes, int quorum, long timeoutNanos, TimeSource time) {
    this.nodes = nodes;
    this.quorum = quorum;
    this.timeoutNanos = timeoutNanos;
    this.time = time;
    this.votes = new Vote[nodes.size()];
    this.details = new String[nodes.size()];
    this.requests = new CompletionStage<?>[nodes.size()];
    java.util.Arrays.fill(votes, Vote.PENDING);
    java.util.Arrays.fill(details, "");
  }

  /**
   * Sends {@code request} to every node and returns the round that collects the votes.
   *
   * @param quorum grants needed for {@link Result#reached()}
   * @param timeouts the node timeout, and the deadlines of the rounds in flight
   */
  public static Round start(
      List<NodeClient> nodes, int quorum, RoundTimeouts timeouts, Request request) {
    Round round = new Round(nodes, quorum, timeouts.timeoutNanos(), timeouts.time());
    timeouts.add(round);
    for (int i = 0; i < nodes.size(); i++) {
      int index = i;
      CompletionStage<Boolean> reply;
      try {
        reply = request.send(i, nodes.get(i));
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      round.requests[i] = reply;
      // handle, not whenComplete: whenComplete's own future would fail too, with a new
      // CompletionException and its stack trace, for every failed vote; a node set aside
      // fails one on every round (those stack traces were most of what a stalled node added
      // to the allocation of each cycle, docs/performance.md).
      reply.handle(
          (answer, error) -> {
            round.answer(index, answer, error);
            return null;
          });
    }
    round.sent();
    return round;
  }

  /**
   * Every request has been handed to its node's connection; from now on the round may be
   * decided. Until then a decision is held back, even if it is already known: whatever the
   * decision triggers (a release after a failed attempt, for example) must reach each node
   * behind this round's request on the same connection, not overtake a request this thread
   * has not handed over yet.
   */
  private void sent() {
    Result decided;
    Result done;
    boolean cutOff;
    synchronized (this) {
      sending = false;
      cutOff = expired;
      decided = decideLocked();
      done = settleLocked();
    }
    if (cutOff) {
      cancelCutOff(); // the node timeout passed while this thread was still sending
    }
    complete(decided, done);
  }

  /** What a round sends to each node. */
  @FunctionalInterface
  public interface Request {
    CompletionStage<Boolean> send(int index, NodeClient node);
  }

  /** Completes when the outcome is certain, possibly before every node answered. */
  public CompletableFuture<Result> decision() {
    return decision;
  }

  /**
   * Node {@code index}'s request while the node has not answered it, whether or not its vote
   * timed out; {@code null} once it answered. For a request that must reach a node after this
   * round's, on another connection (see {@link LockEngine#expireEverywhere}). Read after the
   * decision: every request was stored before it.
   */
  CompletableFuture<?> unanswered(int index) {
    CompletableFuture<?> request = requests[index].toCompletableFuture();
    return request.isDone() ? null : request;
  }

  /** Node {@code index}'s vote so far: {@link Vote#PENDING} until it answers or times out. */
  public synchronized Vote vote(int index) {
    return votes[index];
  }

  /** Completes when every node answered or timed out. */
  public CompletableFuture<Result> settled() {
    return settled;
  }

  /**
   * Whether this thread is delivering a node's answer right now (and so may be a transport's
   * event loop): see {@link LockEngine#dispatch(Runnable)}.
   */
  static boolean isAnswering() {
    return ANSWERING.get()[0] > 0;
  }

  /**
   * How many answers this thread is delivering, nested: a counter made once per thread and
   * kept, so that an answer costs no thread-local map entry (setting and removing a value
   * made and dropped one per answer, ten per lock-and-release cycle on five nodes).
   */
  private static final ThreadLocal<int[]> ANSWERING = ThreadLocal.withInitial(() -> new int[1]);

  private void answer(int index, Boolean answer, Throwable error) {
    asAnswer(() -> tally(index, answer, error));
  }

  /**
   * Runs {@code delivery}, which delivers a node's answer, marked as such for {@link
   * #isAnswering()}: what it sends in reaction goes through {@link LockEngine#dispatch}.
   */
  static void asAnswer(Runnable delivery) {
    int[] depth = ANSWERING.get();
    depth[0]++;
    try {
      delivery.run();
    } finally {
      depth[0]--;
    }
  }

  /** The vote of a request that failed with {@code cause} (unwrapped). */
  static Vote failureVote(Throwable cause) {
    return cause instanceof HeldBack
        ? Vote.HELD_BACK
        : cause instanceof Untrusted
            ? Vote.UNTRUSTED
            : cause instanceof NodeStalledException
                ? Vote.STALLED
                : isTimeout(cause) ? Vote.TIMEOUT : Vote.ERROR;
  }

  private void tally(int index, Boolean answer, Throwable error) {
    Vote vote;
    String detail;
    if (error == null) {
      vote = Boolean.TRUE.equals(answer) ? Vote.GRANTED : Vote.TAKEN;
      detail = "";
    } else {
      Throwable cause = Futures.unwrap(error);
      vote = failureVote(cause);
      detail = describe(cause);
    }
    if (log.isTraceEnabled()) {
      log.trace("node={} vote={} {}", nodes.get(index).name(), vote, detail);
    }
    record(index, vote, detail);
  }

  /** Whether every node answered or timed out. */
  boolean isSettled() {
    return finished;
  }

  /**
   * The node timeout passed: every node that has not answered timed out, and its request's
   * future is cancelled (see {@link #cancelCutOff()}).
   */
  void expire() {
    Result decided;
    Result done;
    boolean cutOff;
    synchronized (this) {
      expired = true;
      cutOff = !sending;
      String detail = "no answer within " + Durations.formatNanos(timeoutNanos);
      for (int i = 0; i < votes.length; i++) {
        if (votes[i] == Vote.PENDING) {
          votes[i] = Vote.TIMEOUT;
          details[i] = detail;
          failed++;
        }
      }
      decided = decideLocked();
      done = settleLocked();
    }
    if (cutOff) {
      cancelCutOff(); // before an outcome this expiry decides is heard, and acted on
    }
    complete(decided, done);
  }

  /**
   * Cancels the futures of the requests that were not answered in time, so that a transport
   * may leave unsent a lock request that can no longer count ({@link NodeClient#lock}). An
   * answered request's future is done, and cancelling it does nothing.
   */
  private void cancelCutOff() {
    for (CompletionStage<?> request : requests) {
      if (request instanceof CompletableFuture<?> future) {
        future.cancel(false);
      }
    }
  }

  private void record(int index, Vote vote, String detail) {
    Result decided;
    Result done;
    synchronized (this) {
      if (votes[index] != Vote.PENDING) {
        return; // the timeout already counted this node; a late answer changes nothing
      }
      votes[index] = vote;
      details[index] = detail;
      if (vote == Vote.GRANTED) {
        granted++;
      } else {
        failed++;
      }
      decided = decideLocked();
      done = settleLocked();
    }
    complete(decided, done);
  }

  private Result decideLocked() {
    if (decided || sending) {
      return null;
    }
    Quorum.Decision decision = Quorum.decide(votes.length, quorum, granted, failed);
    if (decision == Quorum.Decision.PENDING) {
      return null;
    }
    decided = true;
    return snapshotLocked(decision == Quorum.Decision.REACHED);
  }

  private Result settleLocked() {
    if (sending || finished || granted + failed < votes.length) {
      return null;
    }
    finished = true;
    return snapshotLocked(granted >= quorum);
  }

  private Result snapshotLocked(boolean reached) {
    return new Result(reached, time.nanoTime(), nodes, votes.clone(), details.clone());
  }

  private void complete(Result decided, Result done) {
    if (decided != null) {
      decision.complete(decided);
    }
    if (done != null) {
      settled.complete(done);
    }
  }

  private static boolean isTimeout(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return true;
      }
    }
    return false;
  }

  /** A failure as a vote's detail: its message, or its type when it has none. */
  static String describe(Throwable error) {
    if (error instanceof CancellationException) {
      return "cancelled";
    }
    String message = error.getMessage();
    return message == null || message.isBlank() ? error.getClass().getSimpleName() : message;
  }
}
