package io.redlock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Every figure of a run: per scenario, per implementation, one {@link Figure} per round (null
 * where a round has none), with medians over rounds and ratios computed round by round.
 */
final class Results {
  static final String OURS = "redlock";

  private final int rounds;
  private final Map<String, Map<String, Figure[]>> figures = new LinkedHashMap<>();

  Results(int rounds) {
    this.rounds = rounds;
  }

  int rounds() {
    return rounds;
  }

  void put(String scenario, String impl, int round, Figure figure) {
    figures.computeIfAbsent(scenario, s -> new LinkedHashMap<>())
            .computeIfAbsent(impl, i -> new Figure[rounds])[round] =
        figure;
  }

  List<String> scenarios() {
    return List.copyOf(figures.keySet());
  }

  List<String> impls(String scenario) {
    return List.copyOf(figures.getOrDefault(scenario, Map.of()).keySet());
  }

  Figure[] rounds(String scenario, String impl) {
    return figures.getOrDefault(scenario, Map.of()).get(impl);
  }

  boolean has(String scenario, String impl) {
    Figure[] all = rounds(scenario, impl);
    return all != null && Arrays.stream(all).anyMatch(f -> f != null);
  }

  /** The median over rounds of {@code metric}; NaN if no round has it. */
  double median(String scenario, String impl, ToDoubleFunction<Figure> metric) {
    Figure[] all = rounds(scenario, impl);
    if (all == null) {
      return Double.NaN;
    }
    List<Double> values = new ArrayList<>();
    for (Figure f : all) {
      if (f != null && !Double.isNaN(metric.applyAsDouble(f))) {
        values.add(metric.applyAsDouble(f));
      }
    }
    return median(values);
  }

  /** Sum over rounds, for counters such as failures and violations. */
  long sum(String scenario, String impl, ToDoubleFunction<Figure> metric) {
    Figure[] all = rounds(scenario, impl);
    long sum = 0;
    if (all != null) {
      for (Figure f : all) {
        if (f != null) {
          sum += (long) metric.applyAsDouble(f);
        }
      }
    }
    return sum;
  }

  /**
   * {@code metric(a in scenarioA) / metric(b in scenarioB)} in each round where both exist;
   * an entry is NaN for a round where one is missing.
   */
  double[] ratios(
      String scenarioA,
      String implA,
      String scenarioB,
      String implB,
      ToDoubleFunction<Figure> metric) {
    Figure[] a = rounds(scenarioA, implA);
    Figure[] b = rounds(scenarioB, implB);
    double[] out = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      Figure fa = a == null ? null : a[r];
      Figure fb = b == null ? null : b[r];
      out[r] =
          fa == null || fb == null
              ? Double.NaN
              : metric.applyAsDouble(fa) / metric.applyAsDouble(fb);
    }
    return out;
  }

  static double median(double[] values) {
    List<Double> list = new ArrayList<>();
    for (double v : values) {
      if (!Double.isNaN(v) && !Double.isInfinite(v)) {
        list.add(v);
      }
    }
    return median(list);
  }

  static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
