package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-node bounds and the silence rule, without a network or a clock. */
class NodeBacklogTest {
  private static final long SILENT_FOR = 1_000_000_000L;

  private final AtomicInteger sentinels = new AtomicInteger();

  /** The clock: each reading is 0.5 s after the previous one. */
  private final AtomicLong now = new AtomicLong();

  private NodeBacklog backlog(int maxRequests, long maxBytes, int silentAfter) {
    NodeBacklog backlog =
        new NodeBacklog(
            "node",
            maxRequests,
            maxBytes,
            4 * maxBytes,
            silentAfter,
            SILENT_FOR,
            () -> now.getAndAdd(500_000_000L));
    backlog.onSilent(sentinels::incrementAndGet);
    return backlog;
  }

  /** Admits and hands over one request: its place. */
  private static long send(NodeBacklog backlog, long size) {
    assertThat(backlog.admit(size, false)).isTrue();
    return backlog.advance();
  }

  /**
   * Requests refused at the bound from several threads never make the count read above it,
   * even for a moment (it read one above while a refused request took its count back: a
   * stalled node's backlog was once seen at 2,049 of 2,048).
   */
  @Test
  void refusedRequestsNeverMakeTheCountReadAboveTheBound() throws Exception {
    NodeBacklog backlog = backlog(1, 1_000_000, Integer.MAX_VALUE);
    assertThat(backlog.admit(1, false)).isTrue();
    Thread[] refused = new Thread[2];
    for (int t = 0; t < refused.length; t++) {
      refused[t] =
          new Thread(
              () -> {
                for (int i = 0; i < 200_000; i++) {
                  backlog.admit(1, false);
                }
              });
      refused[t].start();
    }
    int most = 0;
    while (refused[0].isAlive() || refused[1].isAlive()) {
      most = Math.max(most, backlog.requests());
    }
    for (Thread thread : refused) {
      thread.join();
    }
    assertThat(most).as("the count read while requests were refused").isEqualTo(1);
    assertThat(backlog.requests()).isEqualTo(1);
  }

  @Test
  void refusesTheRequestPastTheCountBoundAndAdmitsAgainOnceOneIsAnswered() {
    NodeBacklog backlog = backlog(2, 1_000, 100);
    long before = backlog.position();
    send(backlog, 10);
    send(backlog, 10);
    assertThat(backlog.admit(10, false)).isFalse();
    assertThat(backlog.refusal()).contains("backlog full").contains("at most 2");
    backlog.answered(before, 10);
    assertThat(backlog.admit(10, false)).isTrue();
    assertThat(backlog.peakRequests()).isEqualTo(2);
  }

  /**
   * Batches of extensions have a byte budget of their own: a burst of them neither takes the
   * room of locks and releases nor is refused for theirs; each counts as one request.
   */
  @Test
  void batchesOfExtensionsCountTheirBytesInABudgetOfTheirOwn() {
    NodeBacklog backlog = backlog(100, 100, 100); // 400 bytes of batches
    assertThat(backlog.admit(90, false)).isTrue();
    assertThat(backlog.admitBatch(250)).isTrue(); // past the votes' 100 bytes: its own budget
    assertThat(backlog.admitBatch(150)).isTrue();
    assertThat(backlog.admitBatch(1)).isFalse();
    assertThat(backlog.batchRefusal())
        .contains("backlog full")
        .contains("400 bytes of batches")
        .contains("at most 100 requests");
    assertThat(backlog.admit(10, false)).isTrue(); // the votes' room is untouched
    assertThat(backlog.admit(1, false)).isFalse();
    assertThat(backlog.admit(100, true)).isTrue(); // and the releases'
    assertThat(backlog.requests()).isEqualTo(5);
    assertThat(backlog.bytes()).isEqualTo(200);
    assertThat(backlog.batchBytes()).isEqualTo(400);

    backlog.batchLeft(150); // Lettuce let go of the second batch's command
    assertThat(backlog.admitBatch(150)).isTrue();
    assertThat(backlog.batchBytes()).isEqualTo(400);
  }

  @Test
  void aBatchPastTheRequestBoundIsRefusedAndABatchIsNotSentToANodeSetAside() {
    NodeBacklog backlog = backlog(2, 100, 3);
    assertThat(backlog.admitBatch(10)).isTrue();
    assertThat(backlog.admit(10, false)).isTrue();
    assertThat(backlog.admitBatch(10)).isFalse();
    assertThat(backlog.batchRefusal()).contains("at most 2 requests");
    assertThat(backlog.batchBytes()).isEqualTo(10);
    // Refused batches count as unanswered, as refused votes do: the node is set aside.
    assertThat(backlog.admitBatch(10)).isFalse();
    assertThat(backlog.admitBatch(10)).isFalse();
    assertThat(backlog.isSilent()).isTrue();
    assertThat(backlog.admitBatch(1)).isFalse();
    assertThat(backlog.batchRefusal()).contains("set aside");
  }

  @Test
  void refusesTheRequestPastTheByteBound() {
    NodeBacklog backlog = backlog(100, 100, 100);
    assertThat(backlog.admit(60, false)).isTrue();
    assertThat(backlog.admit(60, false)).isFalse();
    assertThat(backlog.bytes()).isEqualTo(60);
    assertThat(backlog.admit(40, false)).isTrue();
    assertThat(backlog.peakBytes()).isEqualTo(100);
  }

  @Test
  void aCutOffRequestStaysCountedUntilARequestHandedOverAfterItIsAnswered() {
    NodeBacklog backlog = backlog(10, 1_000, 100);
    long beforeEarly = backlog.position();
    send(backlog, 10);
    long beforeCut = backlog.position();
    long cut = send(backlog, 10);
    backlog.cutOff(cut, 10); // its round cancelled it: Lettuce may still hold it
    assertThat(backlog.requests()).isEqualTo(2);
    // An answer to a request handed over before it proves nothing about it.
    backlog.answered(beforeEarly, 10);
    assertThat(backlog.requests()).isEqualTo(1);
    assertThat(beforeCut).isLessThan(cut);
    long beforeLater = backlog.position();
    send(backlog, 10);
    backlog.answered(beforeLater, 10);
    assertThat(backlog.requests()).isZero();
    assertThat(backlog.bytes()).isZero();
  }

  @Test
  void aSteadyStreamOfCutOffsDoesNotKeepTheAnsweredOnesCounted() {
    // A node about as slow as the node timeout: every other request is cut off, each answer
    // frees what was handed over before its own request.
    NodeBacklog backlog = backlog(100, 100_000, 1_000_000);
    for (int i = 0; i < 1_000; i++) {
      long before = backlog.position();
      send(backlog, 10);
      long cut = send(backlog, 10);
      backlog.cutOff(cut, 10);
      backlog.answered(before, 10);
    }
    assertThat(backlog.requests()).isLessThanOrEqualTo(2);
  }

  @Test
  void setsTheNodeAsideAfterRequestsInARowWithoutAnAnswerAndRefusesEveryVoteThen() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    for (int i = 0; i < 3; i++) {
      assertThat(backlog.isSilent()).isFalse();
      backlog.cutOff(send(backlog, 10), 10);
    }
    assertThat(backlog.isSilent()).isTrue();
    assertThat(sentinels).hasValue(1);
    assertThat(backlog.admit(10, false)).isFalse();
    assertThat(backlog.refusal()).contains("set aside");
    assertThat(backlog.refused()).isEqualTo(1);
  }

  @Test
  void releasesHaveTwiceTheRoomOfVotesAndStillGoToASilentNode() {
    NodeBacklog backlog = backlog(2, 1_000, 3);
    send(backlog, 10);
    send(backlog, 10);
    assertThat(backlog.admit(10, false)).isFalse();
    assertThat(backlog.admit(10, true)).isTrue();
    assertThat(backlog.admit(10, true)).isTrue();
    assertThat(backlog.admit(10, true)).as("past twice the bound").isFalse();
    backlog.admit(10, false);
    assertThat(backlog.isSilent()).as("three refusals in a row over a second").isTrue();
    assertThat(backlog.admit(10, false)).isFalse();
    assertThat(backlog.requests()).isEqualTo(4);
    backlog.answered(0, 10); // one of the first two is answered: room for one release
    assertThat(backlog.isSilent()).as("until a sentinel is answered").isTrue();
    assertThat(backlog.admit(10, true)).isTrue();
    assertThat(backlog.peakRequests()).isEqualTo(4);
  }

  @Test
  void aReleaseIsSentToASilentNodeWhileItsBoundAllows() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    for (int i = 0; i < 3; i++) {
      backlog.cutOff(send(backlog, 10), 10);
    }
    assertThat(backlog.isSilent()).isTrue();
    assertThat(backlog.admit(10, false)).isFalse();
    assertThat(backlog.admit(10, true)).isTrue();
  }

  @Test
  void manyRequestsWithoutAnAnswerInAShortTimeAreNotAStall() {
    NodeBacklog backlog =
        new NodeBacklog("node", 100, 1_000, 4_000, 3, SILENT_FOR, () -> 5L); // time stands still
    for (int i = 0; i < 50; i++) {
      backlog.cutOff(send(backlog, 10), 10);
    }
    assertThat(backlog.isSilent()).isFalse();
  }

  @Test
  void anAnswerBetweenTimeoutsResetsTheCount() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    for (int round = 0; round < 5; round++) {
      backlog.late();
      backlog.late();
      backlog.progress(backlog.position());
    }
    assertThat(backlog.isSilent()).isFalse();
  }

  @Test
  void refusalsForAFullBacklogCountAsUnanswered() {
    NodeBacklog backlog = backlog(1, 1_000, 3);
    send(backlog, 10);
    backlog.admit(10, false);
    backlog.admit(10, false);
    assertThat(backlog.isSilent()).isFalse();
    backlog.admit(10, false);
    assertThat(backlog.isSilent()).isTrue();
  }

  @Test
  void theNodeIsBackOnceASentinelHandedOverAfterEveryCutOffIsAnswered() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    long[] places = new long[4];
    for (int i = 0; i < 4; i++) {
      places[i] = send(backlog, 10);
    }
    for (int i = 0; i < 3; i++) {
      backlog.cutOff(places[i], 10);
    }
    assertThat(backlog.isSilent()).isTrue();
    long sentinel = backlog.position();
    assertThat(backlog.sentinelAnswered(sentinel)).isTrue();
    assertThat(backlog.isSilent()).isFalse();
    assertThat(backlog.requests()).as("the fourth, still counted by itself").isEqualTo(1);
  }

  @Test
  void aSentinelHandedOverBeforeTheSilenceDoesNotEndIt() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    long early = backlog.position();
    for (int i = 0; i < 3; i++) {
      backlog.cutOff(send(backlog, 10), 10);
    }
    assertThat(backlog.sentinelAnswered(early)).isFalse();
    assertThat(backlog.isSilent()).isTrue();
  }

  @Test
  void aLostConnectionFreesTheCutOffPartAndEndsTheSilence() {
    NodeBacklog backlog = backlog(100, 1_000, 3);
    for (int i = 0; i < 3; i++) {
      backlog.cutOff(send(backlog, 10), 10);
    }
    assertThat(backlog.isSilent()).isTrue();
    backlog.connectionLost();
    assertThat(backlog.isSilent()).isFalse();
    assertThat(backlog.requests()).isZero();
    assertThat(backlog.bytes()).isZero();
    assertThat(backlog.admit(10, false)).isTrue();
  }
}
