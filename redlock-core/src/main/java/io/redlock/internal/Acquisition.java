package io.redlock.internal;

import io.redlock.Lease;
import io.redlock.LockUnavailableException;
import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import io.redlock.RedlockEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition: attempts (DESIGN §2, steps 1 to 6) until one succeeds or the retry budget
 * is spent.
 *
 * <p>Each attempt draws a fresh token, reads the monotonic clock, sends the lock request to
 * every node at once and is decided as early as its outcome is known. A failed attempt is
 * undone on every node that may hold its token, including those that timed out (their
 * {@code SET} may still land: the release travels behind it on the same connection), before
 * the next attempt is scheduled after a random delay. Nodes that answered "taken" set nothing
 * and are spared the release: under contention that halves what a waiting caller sends.
 *
 * <p>The caller learns of a failure as soon as the undo has been handed to every node's
 * connection, not when it is answered: on each node it runs behind the attempt's own request
 * and ahead of any later request of this instance, so the caller never meets its own leftover,
 * and a failed {@code tryAcquire} costs one node timeout, not two.
 *
 * <p>Note on concurrency: attempts never overlap. An attempt's decision schedules the next one
 * on the timer; cancellation of {@link #start() the result} (or {@link #abort()} at close) is
 * checked when a decision arrives and when the timer fires, and a lease granted after that is
 * released at once. {@link #finished()} outlives the result: it completes only once no attempt
 * is in flight and every undo or release this acquisition started has settled, so that
 * {@code close()} can keep the connections open until then. {@code busy} counts that work
 * under this object's monitor, where the result's state is read too: whichever of "result
 * done" and "last work settled" comes second completes {@code finished}.
 */
final class Acquisition {
  private static final Logger log = LoggerFactory.getLogger(LockEngine.ACQUISITION_LOGGER);

  private final LockEngine engine;
  private final List<String> resources;
  private final List<String> keys;
  private final List<String> counterKeys; // null unless fenced
  private final long ttlMillis;
  private final boolean retry;
  private final CompletableFuture<Lease> result = new CompletableFuture<>();
  private final CompletableFuture<Void> finished = new CompletableFuture<>();
  private int busy; // attempts undecided plus undos and releases unsettled; guarded by this
  private long startNanos;
  private int attempts;
  private volatile TimeSource.Cancellable nextAttempt;

  Acquisition(
      LockEngine engine,
      List<String> resources,
      List<String> keys,
      List<String> counterKeys,
      long ttlMillis,
      boolean retry) {
    this.engine = engine;
    this.resources = resources;
    this.keys = keys;
    this.counterKeys = counterKeys;
    this.ttlMillis = ttlMillis;
    this.retry = retry;
  }

  CompletableFuture<Lease> start() {
    if (engine.events().on()) { // nothing allocated for listeners when there are none
      long id = engine.events().acquireStarted(resources, ttlMillis);
      result.whenComplete(
          (lease, error) ->
              engine
                  .events()
                  .acquireFinished(
                      id,
                      resources,
                      attempts,
                      engine.time().nanoTime() - startNanos,
                      lease,
                      error));
    }
    result.whenComplete(
        (lease, error) -> {
          TimeSource.Cancellable pending = nextAttempt;
          if (pending != null && error != null) {
            pending.cancel(); // cancelled or aborted between attempts
          }
          boolean idle;
          synchronized (this) {
            idle = busy == 0;
          }
          if (idle) {
            finished.complete(null);
          }
        });
    startNanos = engine.time().nanoTime();
    attempt();
    return result;
  }

  /**
   * Completes once the result is complete, no attempt is in flight and every undo or release
   * this acquisition started has settled; never exceptionally.
   */
  CompletableFuture<Void> finished() {
    return finished;
  }

  /** Counts one more piece of work that {@link #finished()} waits for. */
  private synchronized void begin() {
    busy++;
  }

  /** Ends what {@link #begin()} counted. */
  private void end() {
    boolean idle;
    synchronized (this) {
      idle = --busy == 0 && result.isDone();
    }
    if (idle) {
      finished.complete(null);
    }
  }

  /** Counts {@code work} until it completes, however it completes. */
  private void awaitInBackground(CompletableFuture<?> work) {
    begin();
    work.whenComplete((ignored, error) -> end());
  }

  /** Stops this acquisition because the engine closed; an attempt in flight cleans up. */
  void abort() {
    result.completeExceptionally(new IllegalStateException("this Redlock is closed"));
    TimeSource.Cancellable pending = nextAttempt;
    if (pending != null) {
      pending.cancel();
    }
  }

  private void attempt() {
    synchronized (this) {
      // Checked with the counter under one monitor: see the note on concurrency.
      if (result.isDone()) {
        return;
      }
      busy++;
    }
    if (engine.isClosed()) {
      abort();
      end();
      return;
    }
    attempts++;
    String token = engine.newToken();
    long t0 = engine.time().nanoTime();
    if (counterKeys != null) {
      fencedAttempt(token, t0);
      return;
    }
    Round round = engine.countedRound(node -> node.lock(keys, token, ttlMillis));
    engine.events().votes(RedlockEvent.Operation.ACQUIRE, round);
    round
        .decision()
        .thenAccept(
            decision -> {
              try {
                decided(token, t0, round, decision, 0, null);
              } finally {
                end();
              }
            });
  }

  /**
   * A fenced attempt: the lock round also reads the counters; once it is won, the token is
   * chosen from the trusted grants and written to a majority of trusted nodes (a second round,
   * sent as the engine sends every request made in reaction to an answer). The attempt is
   * decided by the second round: the lease is ours only if it confirmed the token while
   * validity was left. See {@link Fencing}.
   */
  private void fencedAttempt(String token, long t0) {
    long[] counters = new long[engine.nodes().size()];
    Round round =
        engine.countedRound(
            (index, node) ->
                node.lockFenced(keys, counterKeys, token, ttlMillis, engine.guard().recordKey())
                    .thenApply(
                        counter -> {
                          synchronized (counters) {
                            counters[index] = counter;
                          }
                          // -2: granted, but the node's data changed since its last probe
                          return counter >= 0 || counter == LOST_SINCE_PROBE;
                        }));
    engine.events().votes(RedlockEvent.Operation.ACQUIRE, round);
    round
        .decision()
        .thenCompose(
            decision ->
                decision.reached()
                    ? fence(token, round, counters, decision)
                    : CompletableFuture.completedFuture(new Fenced(decision, 0, null)))
        .whenComplete(
            (fenced, error) -> {
              try {
                if (error != null) { // not expected: a bug must not leave the attempt undone
                  log.error("fenced attempt failed resource={}", shown(), error);
                  // the lock round is decided here: the undo covers every node that may hold it
                  decided(
                      token, t0, round, round.decision().join(), 0, "an internal error: " + error);
                } else {
                  decided(token, t0, round, fenced.result, fenced.token, fenced.failure);
                }
              } finally {
                end();
              }
            });
  }

  /** The second step of a won lock round: choose the token, then confirm it. */
  private CompletableFuture<Fenced> fence(
      String token, Round round, long[] counters, Round.Result decision) {
    return fencingToken(round, counters, decision)
        .thenCompose(
            fencingToken ->
                fencingToken > 0
                    ? confirm(token, fencingToken, counters)
                    : CompletableFuture.completedFuture(notTrusted(round, counters, decision)));
  }

  /**
   * The failure of a lock round won without a majority of trusted grants: the votes as they
   * stand, each grant of a node whose counters are not trusted shown as {@link Vote#UNTRUSTED}.
   */
  private Fenced notTrusted(Round round, long[] counters, Round.Result decision) {
    RestartGuard guard = engine.guard();
    List<NodeOutcome> outcomes = round.settled().getNow(decision).outcomes();
    Vote[] votes = new Vote[outcomes.size()];
    String[] details = new String[outcomes.size()];
    for (int i = 0; i < votes.length; i++) {
      NodeOutcome outcome = outcomes.get(i);
      boolean lost = counterOf(counters, i) == LOST_SINCE_PROBE;
      boolean untrusted = outcome.vote() == Vote.GRANTED && (lost || !guard.trustsCounters(i));
      votes[i] = untrusted ? Vote.UNTRUSTED : outcome.vote();
      details[i] =
          !untrusted
              ? outcome.detail()
              : guard.trustsCounters(i)
                  ? "fencing: its record no longer admits its process, or it evicted keys, since"
                      + " the restart guard's last probe"
                  : guard.whyCountersUntrusted(i);
    }
    return new Fenced(
        new Round.Result(false, decision.atNanos(), engine.nodes(), votes, details),
        0,
        "fewer than a majority of the nodes that granted have trusted fencing counters"
            + untrusted());
  }

  /** The answer of a fenced lock whose node lost data since its last probe (see NodeClient). */
  private static final long LOST_SINCE_PROBE = -2;

  private static long counterOf(long[] counters, int index) {
    synchronized (counters) {
      return counters[index];
    }
  }

  /** What a fenced attempt came to: the deciding round, the token, or why it failed. */
  private record Fenced(Round.Result result, long token, String failure) {}

  /**
   * The token of a won lock round: from the trusted grants known now, or, if they are not a
   * majority yet, once every node answered or timed out; -1 if they are not a majority then.
   */
  private CompletableFuture<Long> fencingToken(
      Round round, long[] counters, Round.Result decision) {
    long now = tokenFrom(round, counters);
    if (now > 0) {
      return CompletableFuture.completedFuture(now);
    }
    return round.settled().thenApply(settled -> tokenFrom(round, counters));
  }

  private long tokenFrom(Round round, long[] counters) {
    RestartGuard guard = engine.guard();
    int n = counters.length;
    boolean[] trustedGrant = new boolean[n];
    long[] seen;
    synchronized (counters) {
      seen = counters.clone();
    }
    for (int i = 0; i < n; i++) {
      trustedGrant[i] = round.vote(i) == Vote.GRANTED && guard.trustsCounters(i) && seen[i] >= 0;
    }
    return Fencing.token(engine.quorum(), seen, trustedGrant);
  }

  /**
   * The confirmation round, sent at once from whatever thread decided the lock round, usually
   * a node's event loop: unlike the other requests made in reaction to an answer, it does not
   * go through {@link LockEngine#dispatch} (a hop to the timer thread, a thread wake-up on every
   * fenced acquisition). Why the hop is not needed here: a request written from an event loop
   * can overtake only requests that other threads handed to that loop and that it has not
   * written yet. The confirmation goes to every node that did not refuse the lock, answered or
   * not, and acts only while the lock keys hold this attempt's token: where it overtakes this
   * attempt's own lock, it finds the keys without the token, changes nothing and counts as not
   * confirmed there; what else it may overtake belongs to other tokens. Whatever this attempt
   * sends after it (the undo of a failed attempt, the release) is made after the confirmation
   * was handed over, and goes through the hop or the caller's thread as before, so it still
   * reaches each node behind it.
   */
  private CompletableFuture<Fenced> confirm(String token, long fencingToken, long[] counters) {
    RestartGuard guard = engine.guard();
    Round round =
        engine.countedRound(
            (index, node) ->
                guard.trustsCounters(index) && counterOf(counters, index) >= 0
                    ? node.fence(keys, counterKeys, token, fencingToken)
                    : CompletableFuture.failedFuture(
                        new Untrusted(guard.whyCountersUntrusted(index))));
    engine.events().votes(RedlockEvent.Operation.FENCE, round);
    return round
        .decision()
        .thenApply(
            result ->
                new Fenced(
                    result,
                    fencingToken,
                    result.reached()
                        ? null
                        : "the fencing token was not confirmed by a majority of nodes with trusted"
                            + " counters; outcomes of the confirmation="
                            + result.outcomes()));
  }

  private String untrusted() {
    RestartGuard guard = engine.guard();
    StringBuilder why = new StringBuilder();
    for (int i = 0; i < engine.nodes().size(); i++) {
      if (!guard.trustsCounters(i)) {
        why.append(why.length() == 0 ? "; " : ", ")
            .append(engine.nodes().get(i).name())
            .append(": ")
            .append(guard.whyCountersUntrusted(i));
      }
    }
    return why.toString();
  }

  private void decided(
      String token,
      long t0,
      Round round,
      Round.Result decision,
      long fencingToken,
      String fenceFailure) {
    long validUntil = Validity.validUntil(t0, ttlMillis, engine.config().driftFactor());
    AttemptVerdict.Outcome outcome =
        fenceFailure != null
            ? AttemptVerdict.Outcome.NO_MAJORITY
            : AttemptVerdict.outcome(decision.reached(), validUntil, decision.atNanos());
    if (outcome == AttemptVerdict.Outcome.ACQUIRED) {
      HeldLease lease =
          new HeldLease(engine, resources, keys, token, ttlMillis, validUntil, fencingToken, round);
      engine.track(lease);
      lease.watchIfHeard();
      if (engine.isClosed()) {
        // Granted while the Redlock closed. close() sets its flag before it releases the
        // tracked leases, and this checks the flag after tracking: one of the two sees the
        // other, so the lease is released either there or here (releasing is idempotent).
        awaitInBackground(lease.releaseInternal());
        result.completeExceptionally(new IllegalStateException("this Redlock is closed"));
        return;
      }
      if (log.isDebugEnabled()) {
        log.debug(
            "acquired resource={} attempt={} validFor={} outcomes={}",
            shown(),
            attempts,
            Durations.formatNanos(validUntil - decision.atNanos()),
            decision.outcomes());
      }
      if (!result.complete(lease)) {
        // Cancelled, timed out by the caller or aborted while the attempt was in flight.
        awaitInBackground(lease.releaseInternal());
      }
      return;
    }
    CompletableFuture<Void> sent = new CompletableFuture<>();
    awaitInBackground(engine.undo(resources, keys, token, round, sent));
    String reason =
        fenceFailure != null
            ? fenceFailure
            : outcome == AttemptVerdict.Outcome.TOO_LATE
                ? "a majority granted, but only after the validity (ttl minus drift) had run out"
                : "a majority ("
                    + engine.quorum()
                    + " of "
                    + engine.nodes().size()
                    + ") was not reached";
    if (log.isDebugEnabled()) {
      log.debug(
          "attempt failed resource={} attempt={} reason={} outcomes={}",
          shown(),
          attempts,
          reason,
          decision.outcomes());
    }
    if (result.isDone()) {
      return;
    }
    long now = engine.time().nanoTime();
    long delay = engine.retryDelayNanos();
    if (AttemptVerdict.mayRetry(
            retry,
            attempts,
            engine.config().retryCount(),
            (now + delay) - startNanos,
            engine.config().maxWait().toNanos())
        && !engine.isClosed()) {
      nextAttempt = engine.time().schedule(this::attempt, delay);
      if (result.isDone()) {
        nextAttempt.cancel(); // cancelled between the check above and the scheduling
      }
      return;
    }
    int heldBack = decision.count(Vote.HELD_BACK);
    if (outcome == AttemptVerdict.Outcome.NO_MAJORITY && fenceFailure == null) {
      switch (AttemptVerdict.obstacle(
          engine.quorum(),
          decision.count(Vote.GRANTED),
          decision.count(Vote.TIMEOUT) + decision.count(Vote.ERROR),
          // Not asked, either: a stalled node is logged once by its transport.
          heldBack + decision.count(Vote.STALLED))) {
        // Without the failing nodes, the lock might have been ours: worth a WARN.
        case NODE_FAILURES ->
            log.warn(
                "could not acquire resource={}: node errors or timeouts"
                    + " denied the majority; outcomes={}",
                shown(),
                decision.outcomes());
        // The restart guard logged its hold-back once, the transport a stalled node once;
        // each failure they cause is routine.
        case RESTART_GUARD ->
            log.debug(
                "could not acquire resource={}: nodes held back by the"
                    + " restart guard or stalled; outcomes={}",
                shown(),
                decision.outcomes());
        case CONTENTION -> {}
      }
    }
    if (heldBack > 0 && outcome == AttemptVerdict.Outcome.NO_MAJORITY && fenceFailure == null) {
      reason += heldBackReason(decision.outcomes());
    }
    LockUnavailableException unavailable =
        new LockUnavailableException(
            resources, attempts, Duration.ofNanos(now - startNanos), reason, decision.outcomes());
    // Report the failure once the undo is on its way to every node (see the class comment).
    sent.whenComplete((ignored, error) -> result.completeExceptionally(unavailable));
  }

  /**
   * What the restart guard adds to a failure: how many nodes it held back, how long until
   * enough of them count for a majority, and how to declare a brand-new cluster fresh.
   */
  private String heldBackReason(List<NodeOutcome> outcomes) {
    RestartGuard guard = engine.guard();
    int usable = 0;
    List<Long> waits = new java.util.ArrayList<>();
    for (NodeOutcome outcome : outcomes) {
      if (outcome.vote() != Vote.HELD_BACK) {
        if (outcome.vote() == Vote.GRANTED
            || outcome.vote() == Vote.TAKEN
            || outcome.vote() == Vote.PENDING) {
          usable++;
        }
        continue;
      }
      waits.add(guard.nanosUntilCounts(outcome.index()));
    }
    waits.sort((a, b) -> a < 0 ? (b < 0 ? 0 : 1) : b < 0 ? -1 : Long.compare(a, b));
    int missing = engine.quorum() - usable;
    String when;
    if (missing <= 0) {
      when = "they did not decide it: the nodes that count could have made a majority";
    } else if (missing <= waits.size() && waits.get(missing - 1) >= 0) {
      when =
          "enough of them count for a majority in " + Durations.formatNanos(waits.get(missing - 1));
    } else {
      when = "when they count is not known yet (not probed, or the probe was refused)";
    }
    return "; "
        + waits.size()
        + " node(s) held back by the restart guard, as they may have"
        + " forgotten locks; "
        + when
        + "; they count again by themselves: never declare restarted nodes fresh ('redlock"
        + " init' is only for a new cluster no client has used, see docs/production.md)";
  }

  /** The resource names for logs, control characters escaped. */
  private String shown() {
    return Printable.of(String.valueOf(resources));
  }
}
