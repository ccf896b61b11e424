package io.redlock.internal;

import io.redlock.NodeOutcome.Vote;
import io.redlock.spi.NodeClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch of extensions sent to every node at once ({@link NodeClient#extendBatch}), and the
 * votes that come back: a {@link Round} for many leases at a time. Each lease has its own row
 * of votes and is decided by itself, as soon as its outcome is certain ({@link Quorum}): a node
 * that answers votes {@code GRANTED} or {@code TAKEN} for each lease by that lease's own
 * answer, a node that fails votes the same failure for every lease. One timeout for the whole
 * batch, the wait its sender gives it (see {@code ExtensionBatcher#waitNanos}): every request
 * left at the same instant. Each decided lease gets a {@link
 * Round.Result} of its own, as from a round of its own, and once every node answered or timed
 * out, its settled votes go to the listeners.
 *
 * <p>What a lease's decision costs is what a {@code Round} costs once, not once per node: the
 * batch registers one callback per node, not one per lease and node.
 *
 * <p>Note on concurrency: answers arrive on transport threads and the timeout on the timer
 * thread, in any order. Votes are recorded under this batch's monitor, the first per node
 * wins, and leases are told their decision outside it.
 */
final class BatchRound {
  private static final Logger log = LoggerFactory.getLogger(BatchRound.class);

  /** A lease of the batch, told its decision once. */
  interface Member {
    /** This member's votes decided it; called once, outside any monitor of the batch. */
    void decided(Round.Result result);

    /** Every node answered or timed out: the member's final votes. */
    void settled(Round.Result result);
  }

  private final List<NodeClient> nodes;
  private final int quorum;
  private final TimeSource time;
  private final Member[] members;
  private final boolean wantsSettled;

  /** {@code votes[m * nodes + i]}: member m's vote from node i. */
  private final Vote[] votes;

  private final String[] details;
  private final boolean[] answered;
  private final int[] granted;
  private final int[] failed;
  private final boolean[] decided;
  private final CompletionStage<?>[] requests;
  private final long timeoutNanos;
  private boolean settledDone;
  private TimeSource.Cancellable timeout;

  private BatchRound(
      List<NodeClient> nodes,
      int quorum,
      TimeSource time,
      long timeoutNanos,
      Member[] members,
      boolean settled) {
    this.nodes = nodes;
    this.quorum = quorum;
    this.time = time;
    this.timeoutNanos = timeoutNanos;
    this.members = members;
    this.wantsSettled = settled;
    this.votes = new Vote[members.length * nodes.size()];
    Arrays.fill(votes, Vote.PENDING);
    this.details = new String[nodes.size()];
    Arrays.fill(details, "");
    this.answered = new boolean[nodes.size()];
    this.granted = new int[members.length];
    this.failed = new int[members.length];
    this.decided = new boolean[members.length];
    this.requests = new CompletionStage<?>[nodes.size()];
  }

  /**
   * Sends the batch: {@code send} is called once per node (its answers, one per member, in
   * order) before any answer is heard; the node timeout then starts for all of them.
   *
   * @param settled whether members want their settled votes (only when someone listens)
   */
  static BatchRound start(
      List<NodeClient> nodes,
      int quorum,
      TimeSource time,
      long timeoutNanos,
      Member[] members,
      boolean settled,
      java.util.function.IntFunction<CompletionStage<List<Boolean>>> send) {
    BatchRound batch = new BatchRound(nodes, quorum, time, timeoutNanos, members, settled);
    List<CompletionStage<List<Boolean>>> replies = new ArrayList<>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      CompletionStage<List<Boolean>> reply;
      try {
        reply = send.apply(i);
        if (reply == null) {
          throw new IllegalStateException(
              nodes.get(i).name() + ": the transport answered no future for a batch");
        }
      } catch (RuntimeException e) {
        reply = CompletableFuture.failedFuture(e);
      }
      batch.requests[i] = reply;
      replies.add(reply);
    }
    // Every request is out: answers may be heard (and leases decided) from now on. This is the
    // last step that may throw (a timer that takes no more tasks): once it is scheduled, every
    // failure is a node's vote, so that nobody else decides the batch's members.
    TimeSource.Cancellable timeout = time.schedule(batch::expire, timeoutNanos);
    synchronized (batch) {
      batch.timeout = timeout;
    }
    for (int i = 0; i < nodes.size(); i++) {
      int index = i;
      try {
        replies
            .get(i)
            .whenComplete(
                (answers, error) -> Round.asAnswer(() -> batch.answer(index, answers, error)));
      } catch (RuntimeException e) {
        Round.asAnswer(() -> batch.answer(index, null, e));
      }
    }
    return batch;
  }

  private void answer(int index, List<Boolean> answers, Throwable error) {
    Throwable cause = error == null ? null : Futures.unwrap(error);
    if (cause == null && (answers == null || answers.size() != members.length)) {
      cause =
          new IllegalStateException(
              nodes.get(index).name()
                  + ": the transport answered "
                  + (answers == null ? "nothing" : answers.size() + " answers")
                  + " for "
                  + members.length
                  + " extensions");
    }
    Vote failure = cause == null ? null : Round.failureVote(cause);
    String detail = cause == null ? "" : Round.describe(cause);
    if (log.isTraceEnabled()) {
      log.trace(
          "node={} batch of {} {}",
          nodes.get(index).name(),
          members.length,
          failure == null ? "answered" : failure + " " + detail);
    }
    List<Round.Result> results = new ArrayList<>();
    List<Member> now = new ArrayList<>();
    Round.Result[] settled;
    synchronized (this) {
      if (answered[index]) {
        return; // the timeout counted this node already
      }
      answered[index] = true;
      details[index] = detail;
      int n = nodes.size();
      for (int m = 0; m < members.length; m++) {
        Vote vote =
            failure != null
                ? failure
                : Boolean.TRUE.equals(answers.get(m)) ? Vote.GRANTED : Vote.TAKEN;
        votes[m * n + index] = vote;
        if (vote == Vote.GRANTED) {
          granted[m]++;
        } else {
          failed[m]++;
        }
        decideLocked(m, now, results);
      }
      settled = settleLocked();
    }
    tell(now, results, settled);
  }

  /** The node timeout passed: every node that has not answered timed out, for every member. */
  private void expire() {
    List<Round.Result> results = new ArrayList<>();
    List<Member> now = new ArrayList<>();
    Round.Result[] settled;
    String detail = "no answer within " + Durations.formatNanos(timeoutNanos);
    List<CompletionStage<?>> cutOff = new ArrayList<>();
    synchronized (this) {
      int n = nodes.size();
      for (int i = 0; i < n; i++) {
        if (answered[i]) {
          continue;
        }
        answered[i] = true;
        details[i] = detail;
        cutOff.add(requests[i]);
        for (int m = 0; m < members.length; m++) {
          votes[m * n + i] = Vote.TIMEOUT;
          failed[m]++;
        }
      }
      for (int m = 0; m < members.length; m++) {
        decideLocked(m, now, results);
      }
      settled = settleLocked();
    }
    for (CompletionStage<?> request : cutOff) {
      if (request instanceof CompletableFuture<?> future) {
        future.cancel(false); // the transport may learn its caller stopped waiting
      }
    }
    tell(now, results, settled);
  }

  private void decideLocked(int m, List<Member> now, List<Round.Result> results) {
    if (decided[m]) {
      return;
    }
    Quorum.Decision decision = Quorum.decide(nodes.size(), quorum, granted[m], failed[m]);
    if (decision == Quorum.Decision.PENDING) {
      return;
    }
    decided[m] = true;
    now.add(members[m]);
    results.add(snapshotLocked(m, decision == Quorum.Decision.REACHED));
  }

  private Round.Result[] settleLocked() {
    if (settledDone || !allAnswered()) {
      return null;
    }
    settledDone = true;
    if (timeout != null) {
      timeout.cancel();
      timeout = null;
    }
    if (!wantsSettled) {
      return new Round.Result[0];
    }
    Round.Result[] settled = new Round.Result[members.length];
    for (int m = 0; m < members.length; m++) {
      settled[m] = snapshotLocked(m, granted[m] >= quorum);
    }
    return settled;
  }

  private boolean allAnswered() {
    for (boolean each : answered) {
      if (!each) {
        return false;
      }
    }
    return true;
  }

  private Round.Result snapshotLocked(int m, boolean reached) {
    int n = nodes.size();
    return new Round.Result(
        reached,
        time.nanoTime(),
        nodes,
        Arrays.copyOfRange(votes, m * n, m * n + n),
        details.clone());
  }

  private void tell(List<Member> now, List<Round.Result> results, Round.Result[] settled) {
    for (int k = 0; k < now.size(); k++) {
      now.get(k).decided(results.get(k));
    }
    if (settled != null && settled.length > 0) {
      for (int m = 0; m < members.length; m++) {
        members[m].settled(settled[m]);
      }
    }
  }
}
