package io.redlock.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A hand-written SVG with two panels: p50 latency against the number of nodes (one line per
 * implementation), and throughput per implementation (grouped bars per scenario).
 */
final class Chart {
  private Chart() {}

  /** One colour per implementation, the same in both panels; unknown names share grey. */
  private static final Map<String, String> COLOURS =
      Map.of(
          Results.OURS, "#1f77b4",
          LoadHarness.REDISSON_REDLOCK, "#d62728",
          LoadHarness.REDISSON_RLOCK, "#2ca02c",
          LoadHarness.LETTUCE_RAW, "#ff7f0e",
          LoadHarness.LETTUCE_FANOUT, "#9467bd",
          LoadHarness.NODE_REDLOCK_4, "#8c564b",
          LoadHarness.NODE_REDLOCK_5, "#e377c2");

  private static String colour(String impl) {
    return COLOURS.getOrDefault(impl, "#7f7f7f");
  }

  private static final int PANEL_W = 460;
  private static final int H = 360;
  private static final int LEFT = 70;
  private static final int TOP = 40;
  private static final int PLOT_W = 360;
  private static final int PLOT_H = 230;

  /**
   * @param nodes the x values of the sweep
   * @param sweepImpls the implementations swept
   * @param p50 {@code p50[impl][i]}: median p50 latency (µs) at {@code nodes[i]}, NaN if none
   * @param groups scenario labels of the bar groups
   * @param barImpls implementations, one bar each per group
   * @param ops {@code ops[group][impl]}: median operations per second, NaN if none
   */
  static String svg(
      List<Integer> nodes,
      List<String> sweepImpls,
      double[][] p50,
      List<String> groups,
      List<String> barImpls,
      double[][] ops,
      String subtitle) {
    StringBuilder s = new StringBuilder();
    s.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\""
                + " height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n",
            2 * PANEL_W,
            H + 20));
    s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"10\" y=\"%d\" fill=\"#555\">%s</text>%n",
            H + 12,
            escape(subtitle)));
    linePanel(s, nodes, sweepImpls, p50);
    barPanel(s, PANEL_W, groups, barImpls, ops);
    s.append("</svg>\n");
    return s.toString();
  }

  private static void linePanel(
      StringBuilder s, List<Integer> nodes, List<String> impls, double[][] p50) {
    title(s, 0, "p50 acquire+release latency (µs) against nodes N, 1 thread");
    double max = niceMax(maxOf(p50));
    axes(s, 0, max, "nodes N");
    int maxN = nodes.isEmpty() ? 1 : nodes.get(nodes.size() - 1);
    int minN = nodes.isEmpty() ? 1 : nodes.get(0);
    for (int i = 0; i < nodes.size(); i++) {
      double x = xOfN(nodes.get(i), minN, maxN);
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
              x,
              TOP + PLOT_H + 14,
              nodes.get(i)));
    }
    // Backwards, so that the first (redlock) is drawn last, on top of a floor it may touch.
    for (int k = impls.size() - 1; k >= 0; k--) {
      String colour = colour(impls.get(k));
      StringBuilder points = new StringBuilder();
      for (int i = 0; i < nodes.size(); i++) {
        double v = p50[k][i];
        if (Double.isNaN(v)) {
          continue;
        }
        double x = xOfN(nodes.get(i), minN, maxN);
        double y = TOP + PLOT_H - v / max * PLOT_H;
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        s.append(
            String.format(
                Locale.ROOT,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s N=%d: %s µs</title>"
                    + "</circle>%n",
                x,
                y,
                colour,
                escape(impls.get(k)),
                nodes.get(i),
                fmt(v)));
      }
      s.append(
          String.format(
              Locale.ROOT,
              "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>%n",
              points.toString().trim(),
              colour,
              impls.get(k).equals(LoadHarness.LETTUCE_FANOUT) ? " stroke-dasharray=\"6 3\"" : ""));
      legend(s, 0, k, impls.get(k), colour);
    }
  }

  private static void barPanel(
      StringBuilder s, int offset, List<String> groups, List<String> impls, double[][] ops) {
    title(s, offset, "throughput (acquire+release per second), 5 nodes or 1");
    double max = niceMax(maxOf(ops));
    axes(s, offset, max, "");
    double groupW = (double) PLOT_W / Math.max(1, groups.size());
    double barW = Math.max(2, (groupW - 10) / Math.max(1, impls.size()));
    for (int g = 0; g < groups.size(); g++) {
      double gx = offset + LEFT + g * groupW + 5;
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
              gx + (groupW - 10) / 2,
              TOP + PLOT_H + 14,
              escape(groups.get(g))));
      for (int k = 0; k < impls.size(); k++) {
        double v = ops[g][k];
        if (Double.isNaN(v)) {
          continue;
        }
        double h = v / max * PLOT_H;
        s.append(
            String.format(
                Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                    + "<title>%s %s: %s/s</title></rect>%n",
                gx + k * barW,
                TOP + PLOT_H - h,
                barW - 1,
                h,
                colour(impls.get(k)),
                escape(impls.get(k)),
                escape(groups.get(g)),
                fmt(v)));
      }
    }
    for (int k = 0; k < impls.size(); k++) {
      legend(s, offset, k, impls.get(k), colour(impls.get(k)));
    }
  }

  private static double xOfN(int n, int minN, int maxN) {
    return LEFT + (maxN == minN ? PLOT_W / 2.0 : (double) (n - minN) / (maxN - minN) * PLOT_W);
  }

  private static void title(StringBuilder s, int offset, String text) {
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"20\" font-size=\"13\" font-weight=\"bold\">%s</text>%n",
            offset + 10,
            escape(text)));
  }

  private static void axes(StringBuilder s, int offset, double max, String xLabel) {
    int x0 = offset + LEFT;
    int y0 = TOP + PLOT_H;
    s.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"" + " stroke=\"black\"/>%n",
            x0,
            TOP,
            x0,
            y0));
    s.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"" + " stroke=\"black\"/>%n",
            x0,
            y0,
            x0 + PLOT_W,
            y0));
    for (int i = 0; i <= 4; i++) {
      double v = max * i / 4;
      double y = y0 - (double) PLOT_H * i / 4;
      s.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"" + " stroke=\"#ddd\"/>%n",
              x0,
              y,
              x0 + PLOT_W,
              y));
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s" + "</text>%n",
              x0 - 4,
              y + 4,
              fmt(v)));
    }
    if (!xLabel.isEmpty()) {
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s" + "</text>%n",
              x0 + PLOT_W / 2,
              y0 + 30,
              escape(xLabel)));
    }
  }

  private static void legend(StringBuilder s, int offset, int k, String name, String colour) {
    int x = offset + LEFT + (k % 3) * 125;
    int y = TOP + PLOT_H + 45 + (k / 3) * 16;
    s.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\""
                + " fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>%n",
            x,
            y - 9,
            colour,
            x + 14,
            y,
            escape(name)));
  }

  private static double maxOf(double[][] values) {
    double max = 0;
    for (double[] row : values) {
      for (double v : row) {
        if (!Double.isNaN(v) && v > max) {
          max = v;
        }
      }
    }
    return max;
  }

  private static double niceMax(double max) {
    if (max <= 0) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(max)));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * magnitude >= max) {
        return step * magnitude;
      }
    }
    return 10 * magnitude;
  }

  static String fmt(double v) {
    if (Double.isNaN(v)) {
      return "–";
    }
    if (v >= 100) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (v >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
