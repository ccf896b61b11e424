package io.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A held lock: the right to act alone on its resources until its validity runs out.
 *
 * <p><b>What it guarantees.</b> While {@link #isValid()} is true, a majority of the nodes hold
 * this lease's {@link #token()} under every resource's key, and no other Redlock client can
 * hold a lease on any of these resources, provided the assumptions in docs/safety.md hold (clock
 * drift between this process and the nodes within the configured drift factor, nodes that do
 * not forget keys). Validity is measured with the monotonic clock from the instant the first
 * request left, minus a drift margin: it is never longer than the nodes' own time to live.
 *
 * <p><b>What it does not.</b> A process that pauses (a long GC, a stopped VM) can wake up
 * after its lease ended and not know it until it looks: check {@link #ensureValid()} right
 * before each side effect, and keep the work well inside the validity.
 *
 * <p>A lease only moves forward: an extension moves its deadline, and once released or lost
 * it is never valid again. {@link #close()} releases it, so it fits try-with-resources.
 *
 * <p>Thread-safe: any thread may check, extend or release it. Extensions are applied one at
 * a time, in the order they were asked for.
 *
 * @since 0.1.0
 */
public interface Lease extends AutoCloseable {

  /** Where a lease stands. */
  enum State {
    /** Acquired, and not released or lost; its validity may still have run out unnoticed. */
    HELD,
    /** Released by its holder. */
    RELEASED,
    /** Its validity ran out, or an extension showed that a majority no longer hold it. */
    LOST
  }

  /** The resources this lease covers, in the order they were asked for. */
  List<String> resources();

  /** The random token (40 hex digits, 160 bits) stored under every key of this lease. */
  String token();

  /**
   * The fencing token of a {@linkplain RedlockConfig#fencing() fenced} lease: a positive
   * number larger than the fencing token of every earlier lease on any of its resources,
   * taken by any client of the cluster that fences. It stays the same when the lease is
   * extended.
   *
   * <p>A lease can be lost without its holder noticing in time (a long GC pause, a stopped
   * VM): the holder may then write after another client took the resource. Only the resource
   * can refuse such a write. Pass the token with every write, and have the resource keep the
   * largest token it has accepted and reject a write whose token is not larger than that
   * one: equal as well as lower, since two writes with one token may come from one lease and
   * a later holder's token is always larger (for example
   * {@code UPDATE t SET ..., fence = ? WHERE id = ? AND fence < ?}).
   *
   * @throws IllegalStateException if this lease is not fenced
   * @since 0.1.0
   */
  long fencingToken();

  /** The lease's current state; {@link State#HELD} alone does not mean it is still valid. */
  State state();

  /** Time left until the validity runs out, by the monotonic clock; zero if not valid. */
  Duration remaining();

  /** Whether the lease is held and its validity has not run out. Never true again once false. */
  boolean isValid();

  /**
   * Returns normally only while the lease is valid; call it right before a side effect.
   *
   * @throws LeaseLostException if the validity ran out or the lease was found lost
   * @throws IllegalStateException if the lease was released
   */
  void ensureValid();

  /**
   * Sets every key's time to live to {@code ttl} on all nodes at once, if they still hold this
   * lease's token, and moves the validity to {@code start + ttl − drift}, measured from the
   * start of the extension. Blocks for at most about one node timeout, after any extension
   * asked for earlier has finished (extensions are applied one at a time).
   *
   * @return {@code true} if a majority confirmed in time; {@code false} if too few nodes
   *     answered (the lease then stays valid until the earlier of its old deadline and the
   *     new one, and may be extended again)
   * @throws LeaseLostException if the lease was already invalid, if a majority no longer hold
   *     its token, or if the confirmation came only after the validity ran out; the lease is
   *     then lost and never valid again
   * @throws IllegalStateException if the lease was released
   * @throws RedlockConfigException if {@code ttl} is not accepted under the configuration (see
   *     {@link Redlock#acquire(String, Duration)})
   * @throws InterruptedException if interrupted while waiting; the extension may still apply
   */
  boolean extend(Duration ttl) throws InterruptedException;

  /**
   * Like {@link #extend(Duration)}, without blocking; failures complete the future. The
   * future is the caller's alone: cancelling or completing it does not stop the extension,
   * which is applied as if nobody had, and later extensions still wait for it.
   */
  CompletableFuture<Boolean> extendAsync(Duration ttl);

  /**
   * Keeps this lease extended in the background by its last ttl, whenever less than
   * {@link RedlockConfig#autoExtendThreshold()} of the ttl is left, until it is released or
   * lost. An extension that too few nodes answered is retried while the lease is valid; when
   * the lease is lost, the {@link #onLost lost listeners} are told. Idempotent.
   *
   * @return this lease
   * @throws IllegalStateException if the lease was released
   * @throws LeaseLostException if the lease is already lost
   */
  Lease autoExtend();

  /**
   * Calls {@code listener} once when this lease becomes lost (at once, if it already is). The
   * lease watches its own deadline from now on, so the call comes even if nobody looks. The
   * listener runs on a library callback thread, never on the timer or a transport thread, so
   * it may block (for example to acquire again); it is never called for a lease that was
   * released while valid.
   */
  void onLost(Consumer<? super LeaseLostException> listener);

  /**
   * Deletes every key that still holds this lease's token, on all nodes at once, and waits
   * until a majority answered without an error (then no other client can be kept out by this
   * lease), for at most about one node timeout; the other nodes' answers are awaited in the background.
   * Never deletes another holder's key. A node that does not answer is logged, not thrown:
   * its key expires with its ttl. Idempotent; if interrupted, returns early with the
   * interrupt flag set while the release goes on.
   */
  void release();

  /**
   * Gives the lease up now, but instead of deleting its keys leaves them to expire
   * {@code delay} from now, so that nobody can acquire these resources before then: a
   * minimum hold, as ShedLock's {@code lockAtLeastFor} asks. The keys that still hold this
   * lease's token get the new time to live on every node at once (compare-and-{@code
   * PEXPIRE}, which never touches another holder's key); waits as {@link #release()} does.
   * The lease is released for its holder at once: not valid, not extended any more. A node
   * that has not answered this lease's lock yet (one of the minority) gets the shorter expiry
   * once it answers, since a transport may carry it apart from the lock (the Lettuce transport
   * does). A node that does not answer keeps its key until its old ttl runs out, and so may a
   * node that timed out on the lock and runs it only after the shorter expiry. Does nothing to
   * a lease already released; on a lost lease it asks the nodes all the same.
   *
   * @param delay how long the keys stand from now: 1 ms to {@link RedlockConfig#maxTtl()},
   *     used in whole milliseconds (no key of a cluster outlives its maximum ttl)
   * @throws IllegalArgumentException if {@code delay} is not accepted
   */
  void releaseAfter(Duration delay);

  /**
   * Like {@link #release()}, without blocking; the future completes when every node answered
   * or timed out, and never exceptionally. Each call returns a future of its own: cancelling
   * one stops neither the release nor the futures of other calls.
   */
  CompletableFuture<Void> releaseAsync();

  /** Same as {@link #release()}. */
  @Override
  void close();
}
