package io.redlock.internal;

import java.time.Duration;

/** Short human-readable durations for messages: {@code 50 ms}, {@code 1.5 s}, {@code 3 min}. */
public final class Durations {
  private Durations() {}

  public static String format(Duration d) {
    if (d.isNegative()) {
      return "-" + format(d.negated());
    }
    if (d.getSeconds() > 1_000_000_000L) {
      return d.toString();
    }
    long nanos = d.toNanos();
    if (nanos < 1_000_000L && nanos != 0) {
      return nanos / 1_000 + " µs";
    }
    long millis = d.toMillis();
    if (millis < 10_000) {
      return millis + " ms";
    }
    if (millis < 600_000) {
      return (millis % 1000 == 0) ? millis / 1000 + " s" : millis / 1000.0 + " s";
    }
    return (millis % 60_000 == 0) ? millis / 60_000 + " min" : millis / 1000 + " s";
  }

  public static String formatNanos(long nanos) {
    return format(Duration.ofNanos(nanos));
  }
}
