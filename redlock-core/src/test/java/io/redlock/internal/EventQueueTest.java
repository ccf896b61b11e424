package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The listener thread's queue: in order, bounded, never blocking whoever reports. */
class EventQueueTest {

  @Test
  void aBlockedListenerCostsDroppedEventsNotABlockedReporter() throws Exception {
    List<Integer> delivered = new CopyOnWriteArrayList<>();
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch unblock = new CountDownLatch(1);
    CountDownLatch allDelivered = new CountDownLatch(3);
    try (EventQueue queue = new EventQueue(2)) {
      queue.execute(
          () -> { // the listener blocks on its first event
            running.countDown();
            await(unblock);
            delivered.add(0);
            allDelivered.countDown();
          });
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      for (int i = 1; i <= 5; i++) { // two fit in the queue; three are dropped, at once
        int n = i;
        queue.execute(
            () -> {
              delivered.add(n);
              allDelivered.countDown();
            });
      }
      assertThat(queue.dropped()).isEqualTo(3);

      unblock.countDown();
      assertThat(allDelivered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(delivered).containsExactly(0, 1, 2); // in the order they were reported
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
