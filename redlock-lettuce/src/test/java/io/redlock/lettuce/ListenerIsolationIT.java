package io.redlock.lettuce;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.Lease;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockEvent;
import io.redlock.RedlockListener;
import io.redlock.testkit.RedisServers;
import io.redlock.testkit.Timing;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A listener that blocks or throws never holds up the lock, or another listener, on real nodes. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListenerIsolationIT {

  @Test
  void locksGoOnWhileAListenerIsBlockedAndAnotherThrows() throws Exception {
    CountDownLatch unblock = new CountDownLatch(1);
    AtomicInteger votesSeen = new AtomicInteger();
    RedlockListener blocking =
        new RedlockListener() {
          @Override
          public void nodeVoted(RedlockEvent.NodeVote event) {
            votesSeen.incrementAndGet();
            try {
              unblock.await(); // as a listener stuck on a dead metrics backend would
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    RedlockListener throwing =
        new RedlockListener() {
          @Override
          public void acquireStarted(RedlockEvent.AcquireStarted event) {
            throw new IllegalStateException("a broken listener");
          }
        };
    AtomicInteger releasesHeard = new AtomicInteger();
    RedlockListener counting =
        new RedlockListener() {
          @Override
          public void released(RedlockEvent.Release event) {
            releasesHeard.incrementAndGet();
          }
        };
    try (RedisServers servers = RedisServers.startFresh(5);
        Redlock redlock =
            Redlock.create(
                RedlockConfig.builder()
                    .nodes(servers.uris())
                    .listener(blocking)
                    .listener(throwing)
                    .listener(counting)
                    .build())) {
      for (int i = 0; i < 50; i++) {
        try (Lease lease = redlock.acquire("isolated:" + i, Duration.ofSeconds(10))) {
          assertThat(lease.isValid()).isTrue();
        }
      }
      // the blocking listener's thread takes its first vote when it gets to it, and is stuck
      // there: it never hears a second
      Timing.await("the blocking listener to hear its first vote", () -> votesSeen.get() >= 1);
      assertThat(votesSeen.get()).isEqualTo(1);
      // and the other listeners, each on its own thread, hear every event meanwhile
      Timing.await("the counting listener to hear every release", () -> releasesHeard.get() == 50);
      unblock.countDown();
    }
  }
}
