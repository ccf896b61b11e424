package io.redlock.torture;

import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * A one-file HTML report of a run: the verdict and totals at the top, then a timeline that a
 * person reads at a glance: one lane per resource with each lease as a bar coloured by its
 * client (a lost lease outlined in red), one lane per node with its faults as spans or marks,
 * and one lane per client with its partitions and pauses. Violations are listed under it and
 * marked on the resource lanes in red.
 *
 * <p>The page stays small enough to open whatever the run's length. A run of at most 3,000
 * leases has each lease drawn; a longer one has each resource lane cut into at
 * most 600 slices of one second or more ({@code LeaseBuckets}), each
 * drawn as one bar that says how many leases began in it, by whom, how many were lost and how
 * much of it was held: at most about 330 bytes a slice, so about 200 KB
 * per resource. Faults, refused stale writes and violations are always drawn and listed one by
 * one (at most about 600 bytes per fault record): they are what a reader
 * looks for. A made-up 60-minute run as the default options make it (2 resources, 110,000
 * leases, a fault every 2 s: 2,700 fault records, 25 violations) writes 0.55 MB, where drawing
 * each lease wrote 14.9 MB ({@code TimelineReportTest}).
 *
 * <p>Thread-safe: it keeps no state.
 */
public final class TimelineReport {
  /** The most leases a report draws one by one; beyond, each lane is drawn by slices. */
  static final int EXACT_LEASES = 3_000;

  /** The most bytes one slice of a resource lane takes, title included (checked by a test). */
  static final int BYTES_PER_SLICE = 330;

  /** The most bytes one fault record takes, drawn and listed (checked by a test). */
  static final int BYTES_PER_FAULT = 600;

  private static final int WIDTH = 1400;
  private static final int LEFT = 150;
  private static final int LANE = 26;
  private static final int PLOT = WIDTH - LEFT - 10;
  private static final String[] COLOURS = {
    "#4e79a7", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac"
  };

  private TimelineReport() {}

  /** Writes the report of a torture run, titled as one and described by its options. */
  public static void write(TortureResult result, Path file) throws IOException {
    write(result, file, "Redlock torture run", result.options().toString());
  }

  /**
   * Writes the report under {@code title} (the page's title and heading, before the verdict),
   * with {@code description} (plain text) as the line that says what ran.
   */
  public static void write(TortureResult result, Path file, String title, String description)
      throws IOException {
    Files.writeString(file, html(result, title, description), StandardCharsets.UTF_8);
  }

  static String html(TortureResult result, String title, String description) {
    long origin = Timeline.origin(result);
    long span = Math.max(1, Timeline.last(result) - origin);
    List<String> resources =
        new ArrayList<>(
            new TreeSet<>(result.history().leases().stream().map(LeaseRecord::resource).toList()));
    List<String> clients =
        new ArrayList<>(
            new TreeSet<>(result.history().leases().stream().map(LeaseRecord::client).toList()));
    for (FaultRecord fault : result.faults()) {
      if (!fault.client().isEmpty() && !clients.contains(fault.client())) {
        clients.add(fault.client());
      }
    }
    int nodes = result.options().nodes();
    int lanes = resources.size() + nodes + clients.size();
    int height = 40 + lanes * LANE + 30;
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'"
                + " font-size='12'>%n",
            WIDTH,
            height));
    int y = 30;
    axis(svg, span, height);
    Map<String, Integer> clientColour = new HashMap<>();
    for (int i = 0; i < clients.size(); i++) {
      clientColour.put(clients.get(i), i % COLOURS.length);
    }
    Map<String, Integer> resourceLane = new HashMap<>();
    for (String resource : resources) {
      resourceLane.put(resource, y);
      label(
          svg,
          y,
          resource.length() > 20 ? "…" + resource.substring(resource.length() - 19) : resource);
      y += LANE;
    }
    List<LeaseRecord> leases = result.history().leases();
    String leaseLegend;
    if (leases.size() <= EXACT_LEASES) {
      leases(svg, leases, origin, span, resourceLane, clientColour);
      leaseLegend =
          "Resources: each lease is a bar from the moment its client knew it held it to the end"
              + " of its validity or its release, coloured by client; red outline: lost.";
    } else {
      slices(svg, LeaseBuckets.of(leases, origin, span), span, resourceLane, clientColour);
      leaseLegend =
          "Resources: "
              + leases.size()
              + " leases, too many to draw one by one: each bar is a slice of "
              + seconds(LeaseBuckets.width(span))
              + ", coloured by the client that held it longest, the more opaque the more of it"
              + " some lease was valid; red outline: a lease that began in it was lost. Point"
              + " at a bar for its counts.";
    }
    violations(svg, result.violations(), resourceLane);
    Map<Integer, Integer> nodeLane = new HashMap<>();
    for (int node = 0; node < nodes; node++) {
      nodeLane.put(node, y);
      label(svg, y, "node " + node);
      y += LANE;
    }
    Map<String, Integer> clientLane = new HashMap<>();
    for (String client : clients) {
      clientLane.put(client, y);
      label(svg, y, client);
      y += LANE;
    }
    faults(svg, result.faults(), origin, span, nodeLane, clientLane);
    if (result.fenced() != null) {
      refusals(svg, result.fenced().refusals(), origin, span, clientLane);
    }
    svg.append("</svg>\n");

    StringBuilder page = new StringBuilder();
    page.append("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>")
        .append("<title>")
        .append(escape(title))
        .append("</title><style>body{font-family:sans-serif;margin:2em}")
        .append("table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left}")
        .append(".ok{color:#2a7d2a}.bad{color:#d62728}</style></head><body>\n");
    page.append("<h1>")
        .append(escape(title))
        .append(": ")
        .append(
            result.violations().isEmpty()
                ? "<span class='ok'>0 violations</span>"
                : "<span class='bad'>" + result.violations().size() + " violations</span>")
        .append("</h1>\n<p>")
        .append(escape(description))
        .append("</p>\n");
    page.append("<table><tr><th>attempts</th><td>")
        .append(result.attempts())
        .append("</td></tr><tr><th>acquisitions</th><td>")
        .append(result.acquisitions())
        .append("</td></tr><tr><th>leases lost before their write</th><td>")
        .append(result.lostBeforeWrite())
        .append("</td></tr>");
    if (result.fenced() != null) {
      page.append("<tr><th>fenced writes</th><td>")
          .append(result.fenced().committed())
          .append("</td></tr><tr><th>stale writes refused</th><td>")
          .append(result.fenced().refused())
          .append("</td></tr><tr><th>overlaps: reads and writes after a successor read</th><td>")
          .append(result.fenced().overtaken())
          .append("</td></tr><tr><th>lost updates</th><td>")
          .append(result.fenced().lostUpdates())
          .append("</td></tr>");
    }
    result
        .failures()
        .forEach(
            (cause, count) ->
                page.append("<tr><th>failed: ")
                    .append(escape(cause))
                    .append("</th><td>")
                    .append(count)
                    .append("</td></tr>"));
    result
        .faultCounts()
        .forEach(
            (fault, count) ->
                page.append("<tr><th>fault: ")
                    .append(fault)
                    .append("</th><td>")
                    .append(count)
                    .append("</td></tr>"));
    page.append(
        "</table>\n<h2>Timeline</h2>\n<p>"
            + leaseLegend
            + " Nodes: red = killed, orange = paused,"
            + " yellow = latency, grey = black hole, brown = DEBUG SLEEP, blue mark = restarted empty, purple mark ="
            + " majority restarted. Clients: violet = partitioned, black mark = paused past its"
            + " lease, red mark = a stale read or write the fenced store refused.</p>\n");
    page.append(svg);
    page.append("<h2>Violations</h2>\n");
    if (result.violations().isEmpty()) {
      page.append(
          "<p class='ok'>None: no two leases on one resource were valid at once, no"
              + " two writes overlapped, and no write came after its lease ended.</p>\n");
    } else {
      page.append("<ul>\n");
      for (Violation violation : result.violations()) {
        page.append("<li class='bad'>").append(escape(violation.toString())).append("</li>\n");
      }
      page.append("</ul>\n");
    }
    page.append("<h2>Faults</h2>\n<ul>\n");
    for (FaultRecord fault : result.faults()) {
      page.append("<li>").append(escape(fault.toString())).append("</li>\n");
    }
    page.append("</ul>\n</body></html>\n");
    return page.toString();
  }

  /** Each lease as a bar on its resource's lane, coloured by client, a lost one outlined. */
  private static void leases(
      StringBuilder svg,
      List<LeaseRecord> leases,
      long origin,
      long span,
      Map<String, Integer> resourceLane,
      Map<String, Integer> clientColour) {
    for (LeaseRecord lease : leases) {
      int laneY = resourceLane.get(lease.resource());
      double x1 = x(lease.grantedNanos() - origin, span);
      double x2 = Math.max(x1 + 1, x(lease.validEndNanos() - origin, span));
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' fill-opacity='0.75'%s>"
                  + "<title>%s %s: %.1f ms%s</title></rect>%n",
              x1,
              laneY + 3,
              x2 - x1,
              LANE - 8,
              COLOURS[clientColour.get(lease.client())],
              lease.lost() ? " stroke='#d62728' stroke-width='2'" : "",
              escape(lease.client()),
              lease.token().substring(0, Math.min(8, lease.token().length())),
              (lease.validEndNanos() - lease.grantedNanos()) / 1e6,
              lease.lost() ? ", lost" : ""));
    }
  }

  /**
   * Each slice of each resource lane as one bar: coloured by the client that held it longest,
   * as opaque as the slice was held, outlined in red when a lease that began in it was lost.
   */
  private static void slices(
      StringBuilder svg,
      Map<String, LeaseBuckets> lanes,
      long span,
      Map<String, Integer> resourceLane,
      Map<String, Integer> clientColour) {
    for (Map.Entry<String, LeaseBuckets> lane : lanes.entrySet()) {
      int laneY = resourceLane.get(lane.getKey());
      long width = lane.getValue().width();
      for (Map.Entry<Integer, LeaseBuckets.Bucket> used : lane.getValue().used()) {
        LeaseBuckets.Bucket bucket = used.getValue();
        long from = used.getKey() * width;
        long to = Math.min(span, from + width);
        double x1 = x(from, span);
        double x2 = Math.max(x1 + 1, x(to, span));
        String holder = bucket.mainHolder();
        double coverage = bucket.coverage(width);
        svg.append(
            String.format(
                Locale.ROOT,
                "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' fill-opacity='%.2f'%s>"
                    + "<title>%s to %s: %d lease(s) began, %d lost; held %.0f%%, %d client(s),"
                    + " most by %s</title></rect>%n",
                x1,
                laneY + 3,
                x2 - x1,
                LANE - 8,
                holder == null ? "#999999" : COLOURS[clientColour.get(holder)],
                0.2 + 0.6 * coverage,
                bucket.lost > 0 ? " stroke='#d62728' stroke-width='1.5'" : "",
                seconds(from),
                seconds(to),
                bucket.leases,
                bucket.lost,
                100 * coverage,
                bucket.heldNanos.size(),
                holder == null ? "none" : escape(holder)));
      }
    }
  }

  /** One red outline per resource lane with violations, naming how many and the first. */
  private static void violations(
      StringBuilder svg, List<Violation> violations, Map<String, Integer> resourceLane) {
    Map<String, List<Violation>> byResource = new java.util.LinkedHashMap<>();
    for (Violation violation : violations) {
      if (resourceLane.containsKey(violation.resource())) {
        byResource.computeIfAbsent(violation.resource(), r -> new ArrayList<>()).add(violation);
      }
    }
    for (Map.Entry<String, List<Violation>> lane : byResource.entrySet()) {
      List<Violation> found = lane.getValue();
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#d62728'"
                  + " stroke-dasharray='4 2'><title>%d violation(s), listed below; the first: %s"
                  + "</title></rect>%n",
              LEFT - 4,
              resourceLane.get(lane.getKey()),
              WIDTH - LEFT,
              LANE - 2,
              found.size(),
              escape(found.get(0).toString())));
    }
  }

  private static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.0f s", nanos / 1e9);
  }

  private static void faults(
      StringBuilder svg,
      List<FaultRecord> faults,
      long origin,
      long span,
      Map<Integer, Integer> nodeLane,
      Map<String, Integer> clientLane) {
    Map<String, FaultRecord> open = new HashMap<>();
    for (FaultRecord fault : faults) {
      String key = fault.fault() + "|" + fault.nodes() + "|" + fault.client();
      switch (fault.phase()) {
        case "start" -> open.put(key, fault);
        case "end" -> {
          FaultRecord start = open.remove(key);
          if (start != null) {
            span(svg, start, fault.nanos(), origin, span, nodeLane, clientLane);
          }
        }
        default -> mark(svg, fault, origin, span, nodeLane, clientLane);
      }
    }
  }

  private static void span(
      StringBuilder svg,
      FaultRecord start,
      long endNanos,
      long origin,
      long span,
      Map<Integer, Integer> nodeLane,
      Map<String, Integer> clientLane) {
    double x1 = x(start.nanos() - origin, span);
    double x2 = Math.max(x1 + 2, x(endNanos - origin, span));
    String colour =
        switch (start.fault()) {
          case KILL -> "#d62728";
          case PAUSE -> "#ff7f0e";
          case LATENCY -> "#e6c200";
          case BLACKHOLE -> "#7f7f7f";
          case SLOW_COMMAND -> "#8c564b";
          case PARTITION -> "#9467bd";
          case RESTORE_BACKUP -> "#2ca02c";
          default -> "#333333";
        };
    List<Integer> ys = new ArrayList<>();
    if (start.fault() == Fault.PARTITION && clientLane.containsKey(start.client())) {
      ys.add(clientLane.get(start.client()));
    } else {
      for (int node : start.nodes()) {
        ys.add(nodeLane.get(node));
      }
    }
    for (int laneY : ys) {
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' fill-opacity='0.7'>"
                  + "<title>%s</title></rect>%n",
              x1,
              laneY + 5,
              x2 - x1,
              LANE - 12,
              colour,
              escape(start.toString())));
    }
  }

  private static void refusals(
      StringBuilder svg,
      List<TortureResult.Refusal> refusals,
      long origin,
      long span,
      Map<String, Integer> clientLane) {
    for (TortureResult.Refusal refusal : refusals) {
      Integer laneY = clientLane.get(refusal.client());
      if (laneY == null) {
        continue;
      }
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x='%.1f' y='%d' width='4' height='%d' fill='#d62728'><title>%s</title>"
                  + "</rect>%n",
              x(refusal.nanos() - origin, span) - 2,
              laneY + 2,
              LANE - 4,
              escape(
                  "refused: "
                      + refusal.client()
                      + " with token "
                      + refusal.token()
                      + " on "
                      + refusal.resource()
                      + ", the store had seen "
                      + refusal.seen())));
    }
  }

  private static void mark(
      StringBuilder svg,
      FaultRecord fault,
      long origin,
      long span,
      Map<Integer, Integer> nodeLane,
      Map<String, Integer> clientLane) {
    double x = x(fault.nanos() - origin, span);
    List<Integer> ys = new ArrayList<>();
    if (!fault.client().isEmpty() && clientLane.containsKey(fault.client())) {
      ys.add(clientLane.get(fault.client()));
    }
    for (int node : fault.nodes()) {
      ys.add(nodeLane.get(node));
    }
    String colour =
        switch (fault.fault()) {
          case MAJORITY_RESTART -> "#8c1aff";
          case CLIENT_PAUSE -> "#000000";
          case EVICTION -> "#17becf";
          default -> "#1f77b4";
        };
    for (int laneY : ys) {
      svg.append(
          String.format(
              Locale.ROOT,
              "<rect x='%.1f' y='%d' width='4' height='%d' fill='%s'><title>%s</title></rect>%n",
              x - 2,
              laneY + 2,
              LANE - 6,
              colour,
              escape(fault.toString())));
    }
  }

  private static void axis(StringBuilder svg, long span, int height) {
    for (TimeAxis.Tick tick : TimeAxis.ticks(span, PLOT)) {
      double x = x(tick.nanos(), span);
      svg.append(
          String.format(
              Locale.ROOT,
              "<line x1='%.1f' y1='22' x2='%.1f' y2='%d' stroke='#ddd'/>"
                  + "<text class='tick' x='%.1f' y='16' text-anchor='middle'>%s</text>%n",
              x,
              x,
              height - 20,
              x,
              tick.label()));
    }
  }

  private static void label(StringBuilder svg, int y, String text) {
    svg.append(
        String.format(
            Locale.ROOT, "<text x='8' y='%d'>%s</text>%n", y + LANE / 2 + 4, escape(text)));
  }

  private static double x(long nanos, long span) {
    return LEFT + PLOT * (double) nanos / span;
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&#39;");
  }
}
