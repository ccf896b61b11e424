package io.redlock.torture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.redlock.NodeOutcome;
import io.redlock.NodeOutcome.Vote;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a listener hears by default, and the progress-only listener of the simple run. */
class TortureListenerTest {
  private static final List<NodeOutcome> OUTCOMES =
      List.of(new NodeOutcome(0, "node0", Vote.TAKEN, ""));

  private static void tellEverything(TortureListener listener, TortureRun.Progress progress) {
    listener.started(null, 0);
    listener.progress(progress);
    listener.fault(null);
    listener.acquired("c0", Duration.ofMillis(3));
    listener.failed("c0", OUTCOMES, 0);
    listener.holding("c0", "r0");
    listener.holding("c0", null);
  }

  @Test
  void theDefaultsAndNoneIgnoreEverything() {
    TortureRun.Progress progress = new TortureRun.Progress(Duration.ofSeconds(1), 10, 4, 0);
    assertThatCode(() -> tellEverything(TortureListener.NONE, progress)).doesNotThrowAnyException();
    assertThatCode(() -> tellEverything(new TortureListener() {}, progress))
        .doesNotThrowAnyException();
  }

  @Test
  void theProgressOnlyListenerPassesOnEachProgressReportInOrderAndNothingElse() {
    List<TortureRun.Progress> heard = new ArrayList<>();
    TortureListener listener = TortureRun.progressOnly(heard::add);
    TortureRun.Progress first = new TortureRun.Progress(Duration.ofSeconds(1), 10, 4, 0);
    TortureRun.Progress second = new TortureRun.Progress(Duration.ofSeconds(2), 25, 9, 1);

    tellEverything(listener, first);
    listener.progress(second);

    assertThat(heard).containsExactly(first, second);
  }
}
