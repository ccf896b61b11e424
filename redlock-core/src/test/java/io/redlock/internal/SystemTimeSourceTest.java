package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What the timer does with tasks once its owner closed it. */
class SystemTimeSourceTest {

  @Test
  void aClosedTimerRunsAHandOffDueNowAndDropsLaterTasks() {
    SystemTimeSource time = new SystemTimeSource();
    time.close();
    AtomicInteger ran = new AtomicInteger();

    time.schedule(ran::incrementAndGet, 0); // a hand-off whose caller waits: runs here
    time.schedule(ran::incrementAndGet, 1_000_000L); // a retry or watchdog: dropped

    assertThat(ran.get()).isEqualTo(1);
  }
}
