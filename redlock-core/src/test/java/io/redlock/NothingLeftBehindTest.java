package io.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.NodeOutcome.Vote;
import io.redlock.fake.SimulatedNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The edges where work can outlive its owner: a {@code close()} with attempts in flight, a
 * caller's future completed by somebody else, a cancelled release or extension.
 */
class NothingLeftBehindTest {
  private static final Duration TTL = Duration.ofSeconds(60);
  private static final Duration MS = Duration.ofMillis(1);

  @Test
  void closeWaitsForAttemptsInFlightAndUndoesThemBeforeTheConnectionsClose() {
    Duration nodeTimeout = Duration.ofMillis(500);
    SimCluster c = new SimCluster(5, b -> b.nodeTimeout(nodeTimeout));
    for (int i = 2; i < 5; i++) {
      c.node(i).pause(); // holds the SETs, as SIGSTOP does
    }
    List<CompletableFuture<Lease>> leases = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      leases.add(c.redlock.acquireAsync("r" + i, TTL));
    }
    c.time.advance(Duration.ofMillis(10));
    CompletableFuture<Void> closing = c.redlock.closeAsync();
    assertThat(closing).isNotDone(); // the attempts are not decided yet

    c.time.advance(nodeTimeout); // decided: failed, undone
    c.time.advance(nodeTimeout); // the undo round timed out on the paused nodes
    assertThat(closing).isCompleted();
    c.nodes.forEach(SimulatedNode::close); // the owner closes the connections after close()
    for (int i = 2; i < 5; i++) {
      c.node(i).resume(); // each runs its held SETs, then the undos written behind them
    }

    for (int i = 0; i < 50; i++) {
      assertThat(SimCluster.failure(leases.get(i))).isInstanceOf(IllegalStateException.class);
      assertThat(c.holding("r" + i)).as("nodes holding r%d", i).isZero();
    }
  }

  @Test
  void closeWaitsForALeaseGrantedWhileClosingToBeReleased() {
    SimCluster c = new SimCluster(3);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    CompletableFuture<Void> closing = c.redlock.closeAsync();
    c.time.advance(Duration.ofMillis(10)); // granted now, while closing: released at once
    assertThat(closing).isNotDone();
    c.time.advance(Duration.ofMillis(10));
    assertThat(closing).isCompleted();
    assertThat(SimCluster.failure(lease)).isInstanceOf(IllegalStateException.class);
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void anAsyncAcquisitionCompletedByTheCallerStopsRetrying() {
    SimCluster c =
        new SimCluster(
            3,
            b ->
                b.retryDelay(Duration.ofMillis(100))
                    .retryJitter(Duration.ZERO)
                    .maxWait(Duration.ofSeconds(10)));
    for (SimulatedNode node : c.nodes) {
      node.put("r", "other", Duration.ofHours(1));
    }
    int idle = c.time.pendingTasks(); // the restart guard's probe tick
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(250)); // three attempts so far
    int before = c.node(0).lockRequests();
    // as orTimeout(...) does when its time is up
    assertThat(lease.completeExceptionally(new TimeoutException("caller gave up"))).isTrue();

    c.time.advance(Duration.ofSeconds(5));
    assertThat(c.node(0).lockRequests()).isEqualTo(before);
    assertThat(c.time.pendingTasks()).isEqualTo(idle); // no retry left on the timer
  }

  @Test
  void aLeaseGrantedAfterTheCallerCompletedTheFutureIsReleased() {
    SimCluster c = new SimCluster(3);
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    lease.complete(null); // whoever completes it, the caller's future is the caller's
    c.time.advance(Duration.ofMillis(10)); // granted by every node
    assertThat(c.node(0).unlockRequests()).isEqualTo(1);
    c.time.advance(Duration.ofMillis(10));
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void cancellingOneReleaseFutureLeavesTheReleaseAndLaterCallersAlone() {
    SimCluster c = new SimCluster(3);
    Lease lease = c.redlock.acquireAsync("r", TTL).join();
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Void> first = lease.releaseAsync();
    assertThat(first.cancel(false)).isTrue();
    CompletableFuture<Void> second = lease.releaseAsync();

    c.time.advance(Duration.ofMillis(10));
    assertThat(second).isCompleted(); // normally: "never exceptionally"
    assertThat(lease.releaseAsync()).isCompleted();
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void cancellingAnExtensionFutureKeepsExtensionsOneAtATime() {
    SimCluster c = new SimCluster(3);
    Lease lease = c.redlock.acquireAsync("r", Duration.ofSeconds(10)).join();
    for (SimulatedNode node : c.nodes) {
      node.latency(Duration.ofMillis(10));
    }
    CompletableFuture<Boolean> first = lease.extendAsync(Duration.ofSeconds(20));
    assertThat(first.cancel(false)).isTrue();
    CompletableFuture<Boolean> second = lease.extendAsync(Duration.ofSeconds(30));
    assertThat(c.node(0).extendRequests()).isEqualTo(1); // the second waits for the first

    c.time.advance(Duration.ofMillis(10)); // the first is decided; the second goes out
    assertThat(c.node(0).extendRequests()).isEqualTo(2);
    assertThat(c.node(0).pttl("r")).isEqualTo(20_000); // the first applied, not cancelled
    c.time.advance(Duration.ofMillis(10));
    assertThat(second.join()).isTrue();
    assertThat(c.node(0).pttl("r")).isEqualTo(30_000);
  }

  @Test
  void aFailedSingleAttemptIsReportedAfterOneNodeTimeoutWithItsUndoSent() {
    SimCluster c = new SimCluster(3, b -> b.retryCount(0).nodeTimeout(Duration.ofMillis(50)));
    c.node(1).pause();
    c.node(2).pause();
    CompletableFuture<Lease> lease = c.redlock.acquireAsync("r", TTL);
    c.time.advance(Duration.ofMillis(50)); // one node timeout: decided, not yet settled
    LockUnavailableException e = (LockUnavailableException) SimCluster.failure(lease);
    assertThat(e.lastOutcomes())
        .extracting(NodeOutcome::vote)
        .containsExactly(Vote.GRANTED, Vote.TIMEOUT, Vote.TIMEOUT);
    assertThat(c.node(0).valueOf("r")).isNull(); // undone on the node that answered
    for (int i = 1; i < 3; i++) {
      assertThat(c.node(i).unlockRequests()).isEqualTo(1); // and sent behind the held SETs
      c.node(i).resume();
    }
    assertThat(c.holding("r")).isZero();
  }

  @Test
  void lockUnavailableKeepsItsOutcomesWhenSerialized() throws Exception {
    LockUnavailableException thrown =
        new LockUnavailableException(
            List.of("r"),
            2,
            Duration.ofMillis(120),
            "a majority (2 of 3) was not reached",
            List.of(
                new NodeOutcome(0, "redis://a:1", Vote.GRANTED, ""),
                new NodeOutcome(1, "redis://b:1", Vote.TAKEN, ""),
                new NodeOutcome(2, "redis://c:1", Vote.TIMEOUT, "no answer within 50 ms")));

    LockUnavailableException copy = roundTrip(thrown);

    assertThat(copy.lastOutcomes()).isEqualTo(thrown.lastOutcomes());
    assertThat(copy.resources()).isEqualTo(List.of("r"));
    assertThat(copy.attempts()).isEqualTo(2);
    assertThat(copy.elapsed()).isEqualTo(Duration.ofMillis(120));
    assertThat(copy.getMessage()).isEqualTo(thrown.getMessage());
  }

  @SuppressWarnings("unchecked")
  private static <T> T roundTrip(T value) throws IOException, ClassNotFoundException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(value);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (T) in.readObject();
    }
  }
}
