package io.redlock.internal;

import io.redlock.RedlockConfigException;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeClient;
import io.redlock.spi.NodeInfo;
import io.redlock.spi.Refusals;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node's votes out of the quorum while it may have forgotten locks (DESIGN §3): the
 * article's first addendum, done by the client, and the start-up checks of the configuration.
 *
 * <p>A Redis process that restarted without persistence has lost every key; one whose wall
 * clock jumped forward or runs fast has expired keys early. Either may grant a lock another
 * client still holds. So a node counts only once its current process has been up for the
 * window: {@code maxTtl} plus its drift margin, fixed for the instance. By then every lease
 * it may have forgotten has ended. Two ways to count at once ({@link GuardRules#countsAtOnce}):
 * a fresh marker bound to the current {@code run_id}, or persistence of every write.
 *
 * <p>The guard reads each node ({@link NodeClient#info(String)}) when it is first reached,
 * after every lost connection (before which the node does not count), and once a second.
 * With the guard off, it still probes every node once a second, to know which answer
 * ({@link #nodeStates()}); after the first look at a process it then judges nothing.
 * <ul>
 *   <li>A new {@code run_id} is a new process. Redis computes its uptime from its wall
 *       clock, which may have stepped, so its start is taken as no earlier than the last
 *       answer of the old process.
 *   <li>The node's {@code TIME} is compared with the monotonic clock (the clock rules of
 *       docs/safety.md). Rate: over long baselines (since the first probe of the process, and
 *       a sliding window of one to two minutes), a clock that ran ahead by more than {@code
 *       driftFactor} is flagged. Step: between consecutive probes, a clock that gained more
 *       than {@link NodeClock#STEP_TOLERANCE_NANOS} beyond what its own rate over the sliding window
 *       predicts is flagged, and in the first interval after that window restarted (a new
 *       process, a flag) beyond the rate it measured before; in the first interval after the
 *       guard first saw the node only the rate rule applies. Each reading is only known to
 *       lie within its probe's round trip, and the rules flag only what lies beyond that
 *       uncertainty. A flagged node is held back as if it had restarted then, and neither
 *       marker nor persistence lets it count at once while this process runs.
 *   <li>A node that refuses the probe (an ACL without {@code INFO} or {@code TIME}, a proxy)
 *       never counts; it is named once at WARN, and in the detail of its votes.
 *   <li>Each probe also raises this client's entry in the cluster's max-ttl register
 *       ({@link NodeClient#raiseMaxTtl}) for {@link MaxTtlRegisters#holdMillis}: the window is the longest
 *       live value read from any node, and a node counts for this client only while its own
 *       entry there is known to outlast a lease granted now. So a departed client's longer
 *       value lapses only after its leases ended, and then no longer widens the window.
 * </ul>
 *
 * <p>The checks: two nodes with the same {@code run_id} are one server reached twice, and a
 * node with {@code role:slave} is a replica; both are refused at start, and a node found so
 * later is excluded for good.
 *
 * <p>Note on concurrency: {@link #counts(int)} is on the hot path and reads atomic arrays
 * without locking. Probe results arrive on transport threads and change the per-node state
 * under this object's monitor; a lost connection marks the node unknown at once, from the
 * transport's event, so no request on a new connection can be counted before a probe. Nothing
 * is logged under the monitor: what to log is decided there ({@link LogLines}) and written
 * once it is released, so that a slow appender never stalls another transport thread.
 */
final class RestartGuard {
  private static final Logger log = LoggerFactory.getLogger(RestartGuard.class);

  /** How often every node is probed. */
  public static final long PROBE_INTERVAL_NANOS = 1_000_000_000L;

  private static final int UNKNOWN = 0;
  private static final int KNOWN = 1;
  private static final int EXCLUDED = 2;

  private final List<NodeClient> nodes;
  private final TimeSource time;
  private final boolean holdBackRestarts;
  private final MaxTtlRegisters registers;
  private final boolean[] rightsChecked;
  private final double driftFactor;
  private final String markerKey;
  private final AtomicIntegerArray standing;
  private final AtomicLongArray startedAt;
  private final AtomicIntegerArray atOnce;
  private final AtomicIntegerArray keepsCounters;
  private final String[] runIds;
  private final long[] lastAnswer;
  private final long[] disconnectedAt;
  private final long[] ownFloor;
  private final NodeRecord[] records;
  private final NodeClock[] clocks;
  private final ClusterIdentity[] identities;
  private final String[] excludedWhy;
  private final List<String> names;
  private final NodeInfo[] infos;
  private final long[] lastSeq;

  /**
   * What this client last saw of the process each node ran before its current one ({@code
   * null}: it watched none go): kept while the node runs the current process, so that a proof
   * that this process loaded older data is written again until it lands.
   */
  private final TrustRules.Watch[] before;

  private final boolean[] lastTrusted;
  private final boolean[] lastDurable;
  private final boolean[] recordUnsupported;
  private final boolean[] recordRefusalLogged;
  private final String[] refusal;
  private final boolean[] refusalLogged;
  private final boolean[] evictionLogged;
  private final boolean[] probing;
  private final AtomicIntegerArray epochs;
  private final boolean[] heldBackLogged;
  private final boolean[] probedOnce;

  /** Whether node i answered its last probe on its current connection. */
  private final boolean[] answered;

  /** Why node i is not reachable now, for people; null while it is. */
  private final String[] unreachable;

  private final CompletableFuture<Void> firstProbes = new CompletableFuture<>();
  private int firstProbesLeft;
  private boolean startDecided; // guarded by this
  private volatile boolean closed;
  private TimeSource.Cancellable ticker;
  private volatile Events events = Events.NONE;

  /**
   * @param holdBackRestarts whether restarted nodes are held back (the guard proper); the
   *     start-up checks run either way
   * @param maxTtlMillis this client's {@code maxTtl}: a restarted node is held back for the
   *     longest of it and the cluster's register, plus drift
   * @param driftFactor the rate by which a node's clock may run ahead of ours
   * @param markerKey the fresh marker's key ({@link io.redlock.FreshMarker#key})
   * @param maxTtlKey the max-ttl register's key ({@link io.redlock.FreshMarker#maxTtlKey})
   */
  public RestartGuard(
      List<NodeClient> nodes,
      TimeSource time,
      boolean holdBackRestarts,
      long maxTtlMillis,
      double driftFactor,
      String markerKey,
      String maxTtlKey) {
    this.nodes = nodes;
    this.time = time;
    this.holdBackRestarts = holdBackRestarts;
    this.driftFactor = driftFactor;
    this.markerKey = markerKey;
    int n = nodes.size();
    this.epochs = new AtomicIntegerArray(n);
    this.standing = new AtomicIntegerArray(n);
    this.startedAt = new AtomicLongArray(n);
    this.atOnce = new AtomicIntegerArray(n);
    this.keepsCounters = new AtomicIntegerArray(n);
    this.runIds = new String[n];
    this.lastAnswer = new long[n];
    this.disconnectedAt = new long[n];
    this.ownFloor = new long[n];
    this.records = new NodeRecord[n];
    this.clocks = new NodeClock[n];
    for (int i = 0; i < n; i++) {
      clocks[i] = new NodeClock(driftFactor);
    }
    this.identities = new ClusterIdentity[n];
    this.excludedWhy = new String[n];
    List<String> nodeNames = new ArrayList<>();
    for (NodeClient node : nodes) {
      nodeNames.add(node.name());
    }
    this.names = List.copyOf(nodeNames);
    this.registers = new MaxTtlRegisters(names, epochs, maxTtlKey, maxTtlMillis, driftFactor);
    this.infos = new NodeInfo[n];
    this.lastSeq = new long[n];
    this.before = new TrustRules.Watch[n];
    this.lastTrusted = new boolean[n];
    this.lastDurable = new boolean[n];
    this.recordUnsupported = new boolean[n];
    this.recordRefusalLogged = new boolean[n];
    this.refusal = new String[n];
    this.refusalLogged = new boolean[n];
    this.evictionLogged = new boolean[n];
    this.probing = new boolean[n];
    this.heldBackLogged = new boolean[n];
    this.probedOnce = new boolean[n];
    this.answered = new boolean[n];
    this.unreachable = new String[n];
    java.util.Arrays.fill(unreachable, "not probed yet");
    this.rightsChecked = new boolean[n];
    this.firstProbesLeft = n;
  }

  /**
   * Starts watching: listens for lost connections and probes every node now and then once a
   * second. The returned future completes when every node was probed once (or could not be);
   * it completes exceptionally with a {@link RedlockConfigException} if a start-up check
   * failed.
   */
  public CompletableFuture<Void> start() {
    for (int i = 0; i < nodes.size(); i++) {
      int index = i;
      nodes.get(i).onDisconnect(() -> disconnected(index));
    }
    for (int i = 0; i < nodes.size(); i++) {
      probe(i);
    }
    scheduleTick();
    return firstProbes;
  }

  /**
   * How long a restarted node is held back, in nanoseconds: the longest live {@code maxTtl}
   * (this client's, or a larger one in the cluster's register) plus its drift margin. It
   * shrinks back once the larger value lapsed from the register (its client stopped raising
   * it and its leases are over).
   */
  public long windowNanos() {
    return registers.windowNanos();
  }

  /** The key of the nodes' records of their history (the marker key). */
  public String recordKey() {
    return markerKey;
  }

  /** The longest {@code maxTtl} of this client and the cluster's register, in milliseconds. */
  public long clusterMaxTtlMillis() {
    return registers.clusterMaxTtlMillis();
  }

  /** Whether node {@code index}'s votes count now. */
  public boolean counts(int index) {
    int state = standing.get(index);
    if (state == EXCLUDED) {
      return false;
    }
    if (!holdBackRestarts) {
      return true;
    }
    if (state != KNOWN) {
      return false;
    }
    long now = time.nanoTime();
    return registers.covers(index, now)
        && (atOnce.get(index) == 1 || now - startedAt.get(index) >= registers.windowNanos());
  }

  /**
   * Nanoseconds until node {@code index} counts if nothing changes; 0 if it counts now,
   * -1 if that is not known (not probed, refused, or excluded).
   */
  public long nanosUntilCounts(int index) {
    if (counts(index)) {
      return 0;
    }
    if (standing.get(index) != KNOWN || !registers.covers(index, time.nanoTime())) {
      return -1;
    }
    return Math.max(0, registers.windowNanos() - (time.nanoTime() - startedAt.get(index)));
  }

  /**
   * Whether node {@code index}'s fencing counters can be trusted now ({@link
   * TrustRules#trustsCounters}): its data is known complete in its current process, by the
   * node's record of its history, and it evicts no key without a ttl. Nothing else may remove
   * a counter: they have no ttl.
   */
  public boolean trustsCounters(int index) {
    return standing.get(index) == KNOWN && keepsCounters.get(index) == 1;
  }

  /** Why node {@code index}'s counters are not trusted, for a vote's detail. */
  public synchronized String whyCountersUntrusted(int index) {
    if (standing.get(index) != KNOWN || records[index] == null) {
      return "fencing: its current process is not probed yet";
    }
    String why = TrustRules.whyCountersUntrusted(infos[index], records[index]);
    return why != null ? why : "fencing: its counters are trusted since the vote";
  }

  /** Whether node {@code index} counts at once, without waiting out the window. */
  public boolean countsAtOnce(int index) {
    return atOnce.get(index) == 1;
  }

  /**
   * Probes node {@code index} now if nothing is known of its current process, rather than at
   * the next periodic probe: a node back after a short disconnection counts again sooner.
   */
  public void probeIfUnknown(int index) {
    if (standing.get(index) == UNKNOWN && !refusedProbe(index)) {
      probe(index);
    }
  }

  /** Whether node {@code index} refused its last probe: probed on the timer only, then. */
  private synchronized boolean refusedProbe(int index) {
    return refusal[index] != null;
  }

  /** Why node {@code index} does not count, for its vote's detail (for people, not code). */
  public synchronized String whyHeldBack(int index) {
    int state = standing.get(index);
    if (state == EXCLUDED) {
      String why = excludedWhy[index];
      return "excluded: " + (why != null ? why : "not an independent master (see the log)");
    }
    if (state == UNKNOWN) {
      String refused = refusal[index];
      return refused != null
          ? "restart guard: the node refused its probe (" + refused + "); grant INFO and TIME"
          : "restart guard: not probed since it was (re)connected";
    }
    if (!registers.covers(index, time.nanoTime())) {
      String failed = registers.failure(index);
      return "restart guard: this client's entry in the node's max-ttl register is not"
          + " confirmed for its maxTtl"
          + (failed != null ? " (the raise failed: " + failed + ")" : "")
          + "; it counts again at the next successful probe";
    }
    long up = time.nanoTime() - startedAt.get(index);
    long window = registers.windowNanos();
    String flag = clocks[index].flag();
    NodeRecord record = records[index];
    return "restart guard: seen for "
        + Durations.formatNanos(up)
        + " of "
        + Durations.formatNanos(window)
        + ", counts in "
        + Durations.formatNanos(Math.max(0, window - up))
        + (flag != null
            ? " (its clock " + flag + ")"
            : record != null ? " (" + TrustRules.reason(record) + ")" : "");
  }

  /**
   * Each node as this guard knows it now (see {@link io.redlock.NodeState}): whether it
   * answered its last probe on its current connection, whether its votes count, and the first
   * thing that keeps it from voting. Sends nothing.
   */
  public synchronized List<io.redlock.NodeState> nodeStates() {
    List<io.redlock.NodeState> states = new ArrayList<>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      boolean reachable = answered[i];
      boolean counted = counts(i);
      io.redlock.NodeState.Status status;
      String reason;
      if (!reachable) {
        status = io.redlock.NodeState.Status.UNREACHABLE;
        reason = unreachable[i] != null ? unreachable[i] : "no answer to the last probe";
      } else if (counted) {
        status = io.redlock.NodeState.Status.COUNTED;
        reason = "";
      } else {
        int state = standing.get(i);
        status =
            state == EXCLUDED
                ? io.redlock.NodeState.Status.EXCLUDED
                : refusal[i] != null
                    ? io.redlock.NodeState.Status.PROBE_REFUSED
                    : state == KNOWN && !registers.covers(i, time.nanoTime())
                        ? io.redlock.NodeState.Status.UNCONFIRMED
                        : io.redlock.NodeState.Status.HELD_BACK;
        reason = whyHeldBack(i);
      }
      states.add(
          new io.redlock.NodeState(i, nodes.get(i).name(), reachable, counted, status, reason));
    }
    return states;
  }

  /**
   * Reports nodes held back and counted again to {@code events}, from the timer thread (never
   * under this object's monitor).
   */
  public void listen(Events events) {
    this.events = events;
  }

  public void close() {
    closed = true;
    TimeSource.Cancellable task;
    synchronized (this) {
      task = ticker;
    }
    if (task != null) {
      task.cancel();
    }
  }

  private void scheduleTick() {
    if (closed) {
      return;
    }
    TimeSource.Cancellable task = time.schedule(this::tick, PROBE_INTERVAL_NANOS);
    synchronized (this) {
      ticker = task;
    }
  }

  private void tick() {
    LogLines logs = new LogLines();
    synchronized (this) {
      // a value from a node no longer answering may lapse
      registers.recomputeWindow(time.nanoTime(), logs);
    }
    logs.write();
    for (int i = 0; i < nodes.size(); i++) {
      // Without the guard too: the start-up checks of a node never reached, and whether each
      // node answers (nodeStates).
      probe(i);
    }
    scheduleTick();
  }

  private void disconnected(int index) {
    synchronized (this) {
      // A new process behind the address is held back from no earlier than now.
      disconnectedAt[index] = time.nanoTime();
      answered[index] = false;
      unreachable[index] = "connection lost";
    }
    // The next process behind this address may be a new one: count nothing from it until a
    // probe says which process it is. A probe already in flight may be answered by the old
    // process: the epoch makes its answer void.
    epochs.incrementAndGet(index);
    // The entry this client raised may be gone with the process: confirm it again first.
    registers.disconnected(index);
    if (standing.compareAndSet(index, KNOWN, UNKNOWN)) {
      log.debug("node={} disconnected: held back until probed", nodes.get(index).name());
    }
  }

  private void probe(int index) {
    boolean reachOnly;
    synchronized (this) {
      if (probing[index] || closed) {
        return;
      }
      probing[index] = true;
      // Without the guard, a node whose process was read once is only asked whether it
      // answers: nothing is judged from it (see learn).
      reachOnly = !holdBackRestarts && runIds[index] != null;
    }
    int epoch = epochs.get(index);
    long sent = time.nanoTime();
    NodeClient node = nodes.get(index);
    CompletableFuture<NodeInfo> reply =
        reachOnly ? call(node::info) : call(() -> node.info(markerKey));
    // The register is raised with the same probe, so that the window is known to be the
    // cluster's before the answer can make the node count.
    CompletableFuture<Void> raised =
        holdBackRestarts
            ? call(() ->
                    node.raiseMaxTtl(
                        registers.key(), registers.ownMaxTtlMillis(), registers.holdMillis()))
                .handle(
                    (held, error) -> {
                      raisedRegister(index, epoch, sent, held, error);
                      return null;
                    })
            : CompletableFuture.completedFuture(null);
    reply
        .thenCombine(raised, (info, ignored) -> info)
        .whenComplete((info, error) -> probed(index, epoch, sent, reachOnly, info, error));
  }

  private static <T> CompletableFuture<T> call(
      java.util.function.Supplier<java.util.concurrent.CompletionStage<T>> request) {
    try {
      return request.get().toCompletableFuture();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Takes in the answer to a raise of node {@code index}'s max-ttl register. */
  private void raisedRegister(
      int index, int epoch, long sent, MaxTtlRegister held, Throwable error) {
    long received = time.nanoTime();
    LogLines logs = new LogLines();
    synchronized (this) {
      boolean counted = standing.get(index) == KNOWN;
      registers.raised(index, epoch, sent, received, counted, held, error, logs);
    }
    logs.write();
  }

  static String oneLine(Throwable cause) {
    return String.valueOf(cause.getMessage()).replaceAll("\\s+", " ");
  }

  /** The failure in one line: its message, or its type when it has none. */
  private static String describe(Throwable cause) {
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : oneLine(cause);
  }

  private void probed(
      int index, int epoch, long sent, boolean reachOnly, NodeInfo info, Throwable error) {
    long received = time.nanoTime();
    RedlockConfigException refused = null;
    boolean startFailed = false;
    boolean startDone = false;
    boolean checkRights = false;
    LogLines logs = new LogLines();
    synchronized (this) {
      probing[index] = false;
      if (error == null && epoch != epochs.get(index)) {
        String name = nodes.get(index).name();
        logs.add(() -> log.debug("node={} probe answered across a lost connection: ignored", name));
      } else if (error == null) {
        answered[index] = true;
        unreachable[index] = null;
        refusal[index] = null;
        if (!reachOnly) {
          refused = learn(index, sent, received, info, logs);
        }
      } else {
        failedProbe(index, epoch, error, logs);
      }
      if (!probedOnce[index]) {
        probedOnce[index] = true;
        firstProbesLeft--;
      }
      if (!rightsChecked[index] && (error == null || refusal[index] != null)) {
        rightsChecked[index] = checkRights = true; // once per node, once it answers
      }
      // The start-up checks' outcome is decided here, under the monitor, once: probes answer
      // on several transport threads, and a refusal decided outside it could lose to another
      // node's last first probe completing the start normally a moment before.
      if (!startDecided) {
        if (refused != null) {
          startDecided = startFailed = true;
        } else if (firstProbesLeft == 0) {
          startDecided = startDone = true;
        }
      }
    }
    logs.write();
    if (checkRights) {
      checkRights(index);
    }
    if (startFailed) {
      firstProbes.completeExceptionally(refused);
    } else if (startDone) {
      firstProbes.complete(null);
    } else if (refused != null) {
      log.error("{}", refused.getMessage()); // found after start: excluded, not thrown
    }
  }

  /**
   * A probe failed. Unreachable or slow nodes, and passing errors, are routine; a node that
   * refuses the probe ({@link Refusals#isRefusal}: an ACL without INFO or TIME, a renamed
   * command, a proxy that blocks them) would never count, silently: it is named once at WARN,
   * and its votes' detail says so.
   */
  private void failedProbe(int index, int epoch, Throwable error, LogLines logs) {
    Throwable cause = Futures.unwrap(error);
    String name = nodes.get(index).name();
    boolean current = epoch == epochs.get(index);
    if (!Refusals.isRefusal(cause)) {
      String failure = cause.toString();
      if (current) {
        answered[index] = false;
        unreachable[index] = "no answer to the restart guard's probe: " + describe(cause);
      }
      logs.add(() -> log.debug("node={} not probed: {}", name, failure));
      return;
    }
    if (current) {
      answered[index] = true; // a refusal is an answer
      unreachable[index] = null;
    }
    String message = oneLine(cause);
    refusal[index] = message;
    if (holdBackRestarts && !refusalLogged[index]) {
      refusalLogged[index] = true;
      logs.add(
          () ->
              log.warn(
                  "node={} refused the restart guard's probe ({}): it does not count while the"
                      + " guard is on; allow INFO and TIME for this user (see"
                      + " docs/production.md)",
                  name,
                  message));
    }
  }

  /**
   * Asks node {@code index} which commands the library needs it refuses
   * ({@link NodeClient#refusedCommands}), once, and names them at WARN: a refused command
   * otherwise only shows as failed votes. INFO and TIME are left out when the refused probe
   * was already named. A refused CONFIG GET, which is optional, is said at INFO.
   */
  private void checkRights(int index) {
    NodeClient node = nodes.get(index);
    String checkKey =
        registers
                .key()
                .substring(
                    0,
                    registers.key().length() - io.redlock.FreshMarker.MAX_TTL_KEY_SUFFIX.length())
            + io.redlock.FreshMarker.OWN_KEYS
            + "acl-check";
    call(() -> node.refusedCommands(checkKey))
        .whenComplete(
            (refusedCommands, error) -> {
              if (error != null) {
                log.debug("node={} rights not checked: {}", node.name(), error.toString());
                return;
              }
              boolean probeNamed;
              synchronized (this) {
                probeNamed = refusalLogged[index];
              }
              List<String> needed = new java.util.ArrayList<>();
              boolean configGet = false;
              for (String command : refusedCommands) {
                if (command.equals("config|get")) {
                  configGet = true;
                } else if (!(probeNamed && (command.equals("info") || command.equals("time")))) {
                  needed.add(command);
                }
              }
              if (!needed.isEmpty()) {
                log.warn(
                    "node={} refuses commands the library needs: {}; locks on it fail or it"
                        + " does not count (grant them as in the ACL of docs/production.md)",
                    node.name(),
                    String.join(", ", needed));
              }
              if (configGet) {
                // Optional (docs/production.md leaves it out of the least-privilege ACL): not
                // a WARN at every start for following the documentation.
                log.info(
                    "node={} refuses config|get (optional): a node that persists every write"
                        + " is held back after a restart as if it did not, and eviction is not"
                        + " checked; run 'redlock doctor' with an administrative user",
                    node.name());
              }
            });
  }

  /** Reports a node held back ({@code reason}) or, with none, counted again: outside the monitor. */
  private void reportLater(Events to, int index, String name, String reason) {
    if (to.on()) {
      time.schedule(
          reason != null
              ? () -> to.nodeHeldBack(index, name, reason)
              : () -> to.nodeCounted(index, name),
          0);
    }
  }

  /** Takes in a probe's answer; returns the refusal if the node is not an independent master. */
  private RedlockConfigException learn(
      int index, long sent, long received, NodeInfo info, LogLines logs) {
    String name = nodes.get(index).name();
    // An excluded node is still probed: once it is an independent master again it comes
    // back, with a fresh window (its data may be another server's).
    boolean excluded = standing.get(index) == EXCLUDED;
    if (info.isReplica()) {
      standing.set(index, EXCLUDED);
      excludedWhy[index] = "a replica (role:" + info.role() + "), not an independent master";
      if (excluded) {
        return null; // said when it was excluded
      }
      return new RedlockConfigException(
          "node "
              + name
              + " is a replica (role:"
              + info.role()
              + "); every node must be an independent master, so it is not used");
    }
    for (int other = 0; other < runIds.length; other++) {
      if (other != index && info.runId().equals(runIds[other])) {
        standing.set(index, EXCLUDED);
        excludedWhy[index] = "the same server as " + nodes.get(other).name();
        if (excluded) {
          return null;
        }
        return new RedlockConfigException(
            "nodes "
                + nodes.get(other).name()
                + " and "
                + name
                + " are the same server (run_id "
                + info.runId()
                + "); every node must be a"
                + " different, independent master, so the second is not used");
      }
    }
    NodeRecord onNode = recordUnsupported[index] ? records[index] : NodeRecord.parse(info.marker());
    identities[index] = onNode == null ? null : onNode.identity();
    // Without the guard (init's and readmit's own clients among them) nothing is judged.
    String mismatch =
        holdBackRestarts ? ClusterIdentity.conflict(index, Arrays.asList(identities), names) : null;
    if (mismatch != null) {
      standing.set(index, EXCLUDED);
      if (excluded && mismatch.equals(excludedWhy[index])) {
        return null; // said when it was excluded
      }
      excludedWhy[index] = mismatch;
      return new RedlockConfigException("node " + name + " is not used: " + mismatch);
    }
    if (info.memory() != null && info.memory().mayEvict() && !evictionLogged[index]) {
      // Not refused: the operator may know the limit is never reached. But it is a safety
      // problem when it is, so it is said once, loudly (redlock doctor fails on it).
      evictionLogged[index] = true;
      NodeInfo.Memory memory = info.memory();
      logs.add(
          () ->
              log.warn(
                  "node={} has maxmemory {} with maxmemory-policy {}: it may evict lock keys and"
                      + " free locks early; use noeviction (or no maxmemory)",
                  name,
                  memory.maxmemory(),
                  memory.policy()));
    }
    if (excluded) {
      runIds[index] = null; // judged afresh, as a node never seen
      logs.add(
          () ->
              log.warn(
                  "node={} is an independent master again: it counts after a fresh window", name));
    }
    long rtt = received - sent;
    NodeClock.Reading now =
        new NodeClock.Reading(info.serverTimeMicros() * 1_000L, sent + rtt / 2, rtt);
    boolean watched = runIds[index] != null;
    String flagged = null;
    if (!info.runId().equals(runIds[index])) {
      // A new process (or the first look at this one): its clock is measured afresh.
      clocks[index].restart(now);
      // Watched going: held back from no earlier than the moment this client lost the old
      // process (its connection's end, or its last answer if the end was not seen).
      ownFloor[index] =
          watched ? Math.max(disconnectedAt[index], lastAnswer[index]) : Long.MIN_VALUE;
    } else {
      flagged = clocks[index].observe(now);
      if (flagged != null) {
        ownFloor[index] = received;
        if (!heldBackLogged[index]) {
          heldBackLogged[index] = true;
          String why = flagged;
          String window = Durations.formatNanos(registers.windowNanos());
          logs.add(
              () ->
                  log.warn(
                      "node={} clock {}; held back for {} as if restarted", name, why, window));
        }
      }
    }
    if (excluded) {
      ownFloor[index] = received; // a fresh window, whatever its record says
    }
    NodeRecord read = onNode;
    TrustRules.Watch watch =
        watched
            ? new TrustRules.Watch(
                runIds[index],
                lastSeq[index],
                lastTrusted[index],
                lastDurable[index],
                // for a process this client lost: how long before it last heard from it
                info.runId().equals(runIds[index])
                    || ownFloor[index] - lastAnswer[index] <= TrustRules.MAX_WATCH_GAP_NANOS)
            : null;
    // Back from exclusion, it restarts its window for every client, as a clock flag does.
    TrustRules.Judgement judged =
        TrustRules.judge(info, read, watch, before[index], flagged != null || excluded);
    NodeRecord record = judged.record();
    records[index] = record;
    infos[index] = info;
    // The window runs from when a client of this cluster first saw this process with its data
    // (the record's since, by the node's clock), never from the uptime the node reports.
    long seenFor =
        Math.max(0, info.serverTimeMicros() / 1_000L - record.sinceMillis()) * 1_000_000L;
    startedAt.set(index, Math.max(received - seenFor, ownFloor[index]));
    if (judged.sawRestart()) {
      heldBackLogged[index] = false;
      String window = Durations.formatNanos(registers.windowNanos());
      boolean continued = judged.event() == NodeRecord.Why.CONTINUED;
      // This client saw newer data of the process before it than was loaded; maybe another
      // client, which saw less, admitted it first.
      String older =
          judged.event() == NodeRecord.Why.LOADED_OLDER
              ? "it loaded data of the process before it older than this client saw (seq "
                  + record.loaded()
                  + " < "
                  + watch.seq()
                  + (read.admits(info.runId())
                      ? "), though another client admitted it: trust taken back; "
                      : "); ")
              : "";
      logs.add(
          () ->
              log.warn(
                  "node={} restarted (run_id changed); {}{}",
                  name,
                  older,
                  continued
                      ? "it loaded the complete data of the process before it, and counts at once"
                      : "it counts again once seen for "
                          + window
                          + ", and its fencing counters once re-admitted"));
    } else if (judged.event() == NodeRecord.Why.LOADED_OLDER && read.admits(info.runId())) {
      heldBackLogged[index] = false;
      long saw = before[index].seq();
      String window = Durations.formatNanos(registers.windowNanos());
      logs.add(
          () ->
              log.warn(
                  "node={} loaded data of the process before it older than this client saw (seq"
                      + " {} < {}), though another client admitted it: trust taken back; out of"
                      + " fencing until re-admitted ('redlock init --readmit', see"
                      + " docs/fencing.md), and counted for locks once seen for {}",
                  name,
                  record.loaded(),
                  saw,
                  window));
    } else if (judged.event() == NodeRecord.Why.LOST_IN_PLACE
        || judged.event() == NodeRecord.Why.EVICTED) {
      heldBackLogged[index] = false;
      String why = TrustRules.reason(record);
      String window = Durations.formatNanos(registers.windowNanos());
      logs.add(
          () ->
              log.warn(
                  "node={} {}: held back for {} as if restarted, and out of fencing until"
                      + " re-admitted ('redlock init --readmit', see docs/fencing.md)",
                  name,
                  why,
                  window));
    }
    if (judged.sawRestart()) {
      before[index] = watch;
    }
    runIds[index] = info.runId();
    lastAnswer[index] = received;
    lastTrusted[index] = record.admits(info.runId());
    lastDurable[index] = TrustRules.durable(info);
    lastSeq[index] = read != null && read.run().equals(info.runId()) ? read.seq() : 0;
    atOnce.set(index, TrustRules.countsAtOnce(info, record) ? 1 : 0);
    keepsCounters.set(index, TrustRules.trustsCounters(info, record) ? 1 : 0);
    if (holdBackRestarts && !recordUnsupported[index]) {
      // Without the guard (and so for init's own probes) nothing is judged: nothing is written.
      writeRecord(index, epochs.get(index), info, record, logs);
    }
    standing.set(index, KNOWN);
    if (holdBackRestarts && !counts(index) && !heldBackLogged[index]) {
      heldBackLogged[index] = true;
      String why = whyHeldBack(index);
      logs.add(() -> log.info("node={} held back: {}", name, why));
      reportLater(events, index, name, why);
    } else if (counts(index)) {
      if (heldBackLogged[index]) {
        reportLater(events, index, name, null);
      }
      heldBackLogged[index] = false;
    }
    return null;
  }

  /**
   * Writes {@code record} over the one the probe read, compare-and-set, bound to the process
   * that answered ({@link NodeClient#updateRecord}): sent once the monitor is released (with the
   * log lines). A lost race with another client loses nothing: every fact the record keeps is
   * derived again from the record and the node by the next probe of any client (a proof that
   * the process loaded older data, from what this client saw of the one before: {@link
   * #before}), and this client acts on its own judgement meanwhile.
   */
  private void writeRecord(int index, int epoch, NodeInfo info, NodeRecord record, LogLines after) {
    String expected = info.marker() == null ? "" : info.marker();
    NodeClient node = nodes.get(index);
    String text = record.format();
    after.add(
        () ->
            call(() -> node.updateRecord(markerKey, expected, text, info.runId()))
                .whenComplete(
                    (held, error) ->
                        recordWritten(index, epoch, info.runId(), record, held, error)));
  }

  private void recordWritten(
      int index, int epoch, String runId, NodeRecord record, String held, Throwable error) {
    String name = nodes.get(index).name();
    LogLines logs = new LogLines();
    synchronized (this) {
      if (error != null) {
        Throwable cause = Futures.unwrap(error);
        if (cause instanceof UnsupportedOperationException) {
          // A transport without records: this client keeps the history in memory only.
          recordUnsupported[index] = true;
        } else if (Refusals.isRefusal(cause) && !recordRefusalLogged[index]) {
          recordRefusalLogged[index] = true;
          String failure = oneLine(cause);
          logs.add(
              () ->
                  log.warn(
                      "node={} refused the write of its record ({}): other clients do not see"
                          + " what this one learnt of it; allow EVAL, and INFO, GET and SET"
                          + " inside scripts, on key {} (see docs/production.md)",
                      name,
                      failure,
                      markerKey));
        } else {
          String failure = oneLine(cause);
          logs.add(() -> log.debug("node={} record not written: {}", name, failure));
        }
      } else if (epoch == epochs.get(index) && runId.equals(runIds[index])) {
        // What this client knows the data holds: its own write, or what another client wrote
        // first (a continuity judgement needs the newest this client can know).
        NodeRecord now = held == null ? record : NodeRecord.parse(held);
        if (now != null && now.run().equals(runId)) {
          lastSeq[index] = Math.max(lastSeq[index], now.seq());
        }
      }
    }
    logs.write();
  }
}
