package io.redlock.torture;

import io.redlock.testkit.LeaseRecord;
import io.redlock.testkit.Violation;
import io.redlock.testkit.WorkRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * The machine-readable record of a run: options, totals, faults, leases, work and
 * violations, as one JSON document. Times are nanoseconds of the monotonic clock, relative
 * to the first recorded instant ({@code "origin"} holds its absolute value).
 */
public final class HistoryJson {
  private HistoryJson() {}

  public static void write(TortureResult result, Path file) throws IOException {
    Files.writeString(file, toJson(result), StandardCharsets.UTF_8);
  }

  static String toJson(TortureResult result) {
    long origin = Timeline.origin(result);
    StringBuilder json = new StringBuilder(4096);
    json.append("{\n  \"options\": ").append(string(result.options().toString()));
    json.append(",\n  \"origin\": ").append(origin);
    json.append(",\n  \"elapsedMillis\": ").append(result.elapsed().toMillis());
    json.append(",\n  \"attempts\": ").append(result.attempts());
    json.append(",\n  \"acquisitions\": ").append(result.acquisitions());
    json.append(",\n  \"lostBeforeWrite\": ").append(result.lostBeforeWrite());
    json.append(",\n  \"failures\": {");
    appendMap(json, result.failures());
    json.append("},\n  \"faults\": [");
    String comma = "";
    for (FaultRecord fault : result.faults()) {
      json.append(comma)
          .append("\n    {\"t\": ")
          .append(fault.nanos() - origin)
          .append(", \"at\": ")
          .append(string(fault.at().toString()))
          .append(", \"fault\": ")
          .append(string(fault.fault().name()))
          .append(", \"phase\": ")
          .append(string(fault.phase()))
          .append(", \"target\": ")
          .append(string(fault.target()))
          .append('}');
      comma = ",";
    }
    json.append("\n  ],\n  \"leases\": [");
    comma = "";
    for (LeaseRecord lease : result.history().leases()) {
      json.append(comma)
          .append("\n    {\"client\": ")
          .append(string(lease.client()))
          .append(", \"resource\": ")
          .append(string(lease.resource()))
          .append(", \"token\": ")
          .append(string(lease.token()))
          .append(", \"granted\": ")
          .append(lease.grantedNanos() - origin)
          .append(", \"validUntil\": ")
          .append(lease.validUntilNanos() - origin)
          .append(", \"ended\": ")
          .append(lease.endedNanos() - origin)
          .append(", \"lost\": ")
          .append(lease.lost())
          .append(", \"fencingToken\": ")
          .append(lease.fencingToken())
          .append('}');
      comma = ",";
    }
    json.append("\n  ],\n  \"work\": [");
    comma = "";
    for (WorkRecord work : result.history().work()) {
      json.append(comma)
          .append("\n    {\"client\": ")
          .append(string(work.client()))
          .append(", \"resource\": ")
          .append(string(work.resource()))
          .append(", \"token\": ")
          .append(string(work.token()))
          .append(", \"start\": ")
          .append(work.startNanos() - origin)
          .append(", \"end\": ")
          .append(work.endNanos() - origin)
          .append('}');
      comma = ",";
    }
    json.append("\n  ],\n  \"violations\": [");
    comma = "";
    for (Violation violation : result.violations()) {
      json.append(comma)
          .append("\n    {\"kind\": ")
          .append(string(violation.kind().name()))
          .append(", \"resource\": ")
          .append(string(violation.resource()))
          .append(", \"description\": ")
          .append(string(violation.description()))
          .append('}');
      comma = ",";
    }
    json.append("\n  ]\n}\n");
    return json.toString();
  }

  private static void appendMap(StringBuilder json, Map<String, Long> map) {
    Iterator<Map.Entry<String, Long>> entries = map.entrySet().iterator();
    while (entries.hasNext()) {
      Map.Entry<String, Long> entry = entries.next();
      json.append(string(entry.getKey())).append(": ").append(entry.getValue());
      if (entries.hasNext()) {
        json.append(", ");
      }
    }
  }

  /** A JSON string literal. */
  static String string(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2).append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
