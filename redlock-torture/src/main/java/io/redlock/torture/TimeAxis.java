package io.redlock.torture;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The ticks of a report's time axis: a round step chosen from the span so that no two labels
 * overlap, whatever the run's length (a 10-second demo and a 60-minute torture run alike).
 *
 * <p>A pure function of the span and the plot's width; thread-safe.
 */
final class TimeAxis {

  /**
   * The widest a label's character is drawn, in pixels, at the reports' 12 px sans-serif:
   * digits are 0.64 em (7.6 px) in DejaVu Sans and narrower in Arial and Helvetica.
   */
  static final double CHAR_WIDTH = 8;

  /** Free space kept between two labels, in pixels. */
  static final double GAP = 12;

  /** The steps the axis chooses from, in milliseconds: 1, 2 or 5, and clock-like multiples. */
  private static final long[] STEPS_MILLIS = {
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000
  };

  /** One tick: where (nanoseconds from time zero) and what it reads. */
  record Tick(long nanos, String label) {}

  private TimeAxis() {}

  /**
   * The ticks for a run of {@code spanNanos} drawn over {@code widthPixels}: from 0 to the
   * span, at the smallest step whose labels, each {@link #CHAR_WIDTH} per character, stand at
   * least {@link #GAP} apart.
   */
  static List<Tick> ticks(long spanNanos, double widthPixels) {
    long span = Math.max(1, spanNanos);
    for (long step : STEPS_MILLIS) {
      if (span / (step * 1_000_000) > widthPixels / GAP) {
        continue; // more ticks than could stand apart: not worth drawing up
      }
      List<Tick> ticks = at(span, step * 1_000_000);
      if (fits(ticks, span, widthPixels)) {
        return ticks;
      }
    }
    // longer than ~ 100 days per 1,300 px: whole days, every n-th
    long day = STEPS_MILLIS[STEPS_MILLIS.length - 1] * 1_000_000;
    for (long n = 2; ; n *= 2) {
      if (span / (day * n) > widthPixels / GAP) {
        continue;
      }
      List<Tick> ticks = at(span, day * n);
      if (fits(ticks, span, widthPixels)) {
        return ticks;
      }
    }
  }

  private static List<Tick> at(long span, long stepNanos) {
    List<Tick> ticks = new ArrayList<>();
    for (long t = 0; t <= span; t += stepNanos) {
      ticks.add(new Tick(t, label(t, stepNanos)));
    }
    return ticks;
  }

  private static boolean fits(List<Tick> ticks, long span, double width) {
    for (int i = 1; i < ticks.size(); i++) {
      double apart = (ticks.get(i).nanos() - ticks.get(i - 1).nanos()) * width / span;
      double needed = (width(ticks.get(i - 1).label()) + width(ticks.get(i).label())) / 2 + GAP;
      if (apart < needed) {
        return false;
      }
    }
    return true;
  }

  /** How wide {@code label} is drawn at most, in pixels. */
  static double width(String label) {
    return label.length() * CHAR_WIDTH;
  }

  /**
   * What a tick at {@code nanos} reads, in the unit its step calls for: {@code "1.5 s"} below
   * a second, {@code "45 s"} below a minute, {@code "12 min"} below two hours,
   * {@code "3 h"} (or {@code "2 h 30 min"}) beyond, in days for a step of days.
   */
  static String label(long nanos, long stepNanos) {
    long millis = nanos / 1_000_000;
    long stepMillis = stepNanos / 1_000_000;
    if (stepMillis < 1_000) {
      return String.format(Locale.ROOT, "%.1f s", millis / 1_000.0);
    }
    if (stepMillis < 60_000) {
      return millis / 1_000 + " s";
    }
    if (stepMillis < 3_600_000 && millis < 7_200_000) {
      return millis / 60_000 + " min";
    }
    if (stepMillis >= 86_400_000) {
      return millis / 86_400_000 + " d";
    }
    long hours = millis / 3_600_000;
    long minutes = millis % 3_600_000 / 60_000;
    return minutes == 0 ? hours + " h" : hours + " h " + minutes + " min";
  }
}
