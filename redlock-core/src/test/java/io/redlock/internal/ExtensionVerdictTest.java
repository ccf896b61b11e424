package io.redlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.LossCause;
import io.redlock.internal.ExtensionVerdict.Kind;
import org.junit.jupiter.api.Test;

class ExtensionVerdictTest {
  /** Clock origins, one of them where {@code nanoTime} values wrap around. */
  private static final long[] ORIGINS = {0L, 1_000_000_000L, Long.MAX_VALUE - 5, -3};

  /** Instants relative to the origin: before, at and after each deadline. */
  private static final long[] OFFSETS = {-2, -1, 0, 1, 2, 3};

  @Test
  void everyCombinationFollowsTheRule() {
    int checked = 0;
    for (int n = 1; n <= 9; n++) {
      int q = Quorum.of(n);
      for (int granted = 0; granted <= n; granted++) {
        for (int notHeld = 0; granted + notHeld <= n; notHeld++) {
          for (long origin : ORIGINS) {
            for (long d : OFFSETS) {
              for (long nd : OFFSETS) {
                for (long now : OFFSETS) {
                  check(
                      n,
                      q,
                      granted >= q,
                      notHeld,
                      origin + d,
                      origin + nd,
                      origin + now,
                      d,
                      nd,
                      now);
                  checked++;
                }
              }
            }
          }
        }
      }
    }
    assertThat(checked).isGreaterThan(100_000);
  }

  private static void check(
      int n,
      int q,
      boolean reached,
      int notHeld,
      long deadline,
      long newDeadline,
      long now,
      long d,
      long nd,
      long t) {
    ExtensionVerdict v =
        ExtensionVerdict.decide(n, q, reached, notHeld, deadline, newDeadline, now);
    String as =
        String.format(
            "n=%d reached=%b notHeld=%d deadline=%d new=%d now=%d", n, reached, notHeld, d, nd, t);
    Kind expected;
    long expectedDeadline = deadline;
    if (t >= d) {
      expected = Kind.LOST_EXPIRED;
    } else if (reached) {
      expected = t < nd ? Kind.EXTENDED : Kind.LOST_CONFIRMED_TOO_LATE;
      if (expected == Kind.EXTENDED) {
        expectedDeadline = newDeadline;
      }
    } else if (n - notHeld < q) {
      expected = Kind.LOST_NOT_HELD;
    } else {
      expectedDeadline = nd < d ? newDeadline : deadline;
      expected = t < Math.min(d, nd) ? Kind.KEPT_UNCONFIRMED : Kind.LOST_UNCONFIRMED;
    }
    assertThat(v.kind()).as(as).isEqualTo(expected);
    boolean kept = v.kind().cause() == null;
    if (kept) {
      assertThat(v.deadlineNanos()).as(as).isEqualTo(expectedDeadline);
      // a kept lease is valid now, and only a majority can move its deadline later
      assertThat(Validity.isValidAt(v.deadlineNanos(), now)).as(as).isTrue();
      if (!reached) {
        assertThat(v.deadlineNanos() - deadline).as(as).isLessThanOrEqualTo(0);
      }
    }
  }

  @Test
  void eachLossNamesItsCause() {
    assertThat(Kind.EXTENDED.cause()).isNull();
    assertThat(Kind.KEPT_UNCONFIRMED.cause()).isNull();
    assertThat(Kind.LOST_EXPIRED.cause()).isEqualTo(LossCause.EXPIRED);
    assertThat(Kind.LOST_CONFIRMED_TOO_LATE.cause()).isEqualTo(LossCause.CONFIRMED_TOO_LATE);
    assertThat(Kind.LOST_NOT_HELD.cause()).isEqualTo(LossCause.NOT_HELD);
    assertThat(Kind.LOST_UNCONFIRMED.cause()).isEqualTo(LossCause.UNCONFIRMED);
  }
}
