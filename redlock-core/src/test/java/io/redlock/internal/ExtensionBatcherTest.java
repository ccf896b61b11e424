package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The rules of the batched auto-extension: slots ({@link ExtensionBatcher#slotFor}) and how long a
 * batch waits for its nodes ({@link ExtensionBatcher#waitNanos}).
 */
class ExtensionBatcherTest {

  @Test
  void aSlotIsNeverAfterTheDueTimeNorMoreThanAQuarterOfTheThresholdBefore() {
    Random random = new Random(7);
    for (int i = 0; i < 100_000; i++) {
      long threshold = 1_000_000L + (long) (random.nextDouble() * 60_000_000_000L);
      long now = random.nextLong() / 4;
      long due = now + 50_000_000L + (long) (random.nextDouble() * 120_000_000_000L);
      long earliest = now + 50_000_000L;
      long slot = ExtensionBatcher.slotFor(due, threshold, earliest);
      assertThat(due - slot).as("case %d", i).isBetween(0L, Math.max(threshold / 4, 1L << 20));
      assertThat(slot - earliest).as("case %d: not before the earliest", i).isNotNegative();
    }
  }

  @Test
  void dueTimesWithinOneStepShareASlotOnTheSameGrid() {
    long threshold = 5_000_000_000L; // a 10 s ttl: step 2^30 ns, about 1.07 s
    long step = 1L << 30;
    long base = 7 * step;
    long slot = ExtensionBatcher.slotFor(base + 1, threshold, 0);
    assertThat(ExtensionBatcher.slotFor(base + step - 1, threshold, 0)).isEqualTo(slot);
    assertThat(ExtensionBatcher.slotFor(base + step, threshold, 0)).isEqualTo(slot + step);
    // A shorter ttl has a finer grid, whose slots are also slots of this one's.
    assertThat(ExtensionBatcher.slotFor(base + 1, threshold / 8, 0)).isEqualTo(base);
  }

  @Test
  void aSlotSoonerThanTheEarliestGivesWayToTheDueTimeItself() {
    long threshold = 5_000_000_000L;
    long step = 1L << 30;
    long due = 3 * step + step / 2;
    assertThat(ExtensionBatcher.slotFor(due, threshold, 3 * step + 1)).isEqualTo(due);
    assertThat(ExtensionBatcher.slotFor(due, threshold, 3 * step)).isEqualTo(3 * step);
  }

  @Test
  void aBatchWaitsHalfWhatItsEarliestLeaseHasLeftAtLeastOneNodeTimeoutAtMostTen() {
    long timeout = 50_000_000L;
    assertThat(ExtensionBatcher.waitNanos(timeout, 1_000_000_000L)).isEqualTo(500_000_000L);
    assertThat(ExtensionBatcher.waitNanos(timeout, 300_000_000L)).isEqualTo(150_000_000L);
    assertThat(ExtensionBatcher.waitNanos(timeout, 60_000_000L)).isEqualTo(timeout);
    assertThat(ExtensionBatcher.waitNanos(timeout, -5L)).isEqualTo(timeout);
    assertThat(ExtensionBatcher.waitNanos(timeout, 30_000_000_000L)).isEqualTo(10 * timeout);
  }
}
