package io.redlock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A section of {@code docs/performance.md} that one harness writes between two HTML comments
 * and every other harness keeps as it is: {@link StallHarness}'s, {@link HeldHarness}'s and
 * {@link PathsHarness}'s, each run on its own, beside the report {@link LoadHarness} rewrites;
 * the own-I/O experiment's record and the notes that read the sections' figures ({@link
 * #NOTES}), written by hand and kept by every harness. Within {@link #PATHS}, each of its parts
 * is a marked section of its own ({@link #pathsPart}), so that a run of some parts keeps the
 * others.
 *
 * @param name the marker's name, as in {@code <!-- name:begin -->}
 */
record MarkedSection(String name) {
  static final MarkedSection STALL = new MarkedSection("stall-harness");
  static final MarkedSection HELD = new MarkedSection("held-harness");
  static final MarkedSection PATHS = new MarkedSection("paths-harness");
  static final MarkedSection OWN_IO = new MarkedSection("own-io");

  /** Notes written by hand that read the sections' figures; no harness writes it. */
  static final MarkedSection NOTES = new MarkedSection("notes");

  /** Every marked section, in the order they follow the generated report. */
  static final java.util.List<MarkedSection> ALL =
      java.util.List.of(STALL, OWN_IO, PATHS, HELD, NOTES);

  /** The part {@code part} of {@link PathsHarness}'s section, one of {@link PathsHarness#PARTS}. */
  static MarkedSection pathsPart(String part) {
    return new MarkedSection("paths-" + part);
  }

  String begin() {
    return "<!-- " + name + ":begin -->";
  }

  String end() {
    return "<!-- " + name + ":end -->";
  }

  /** This section of {@code text}, markers and final newline included, or an empty string. */
  String of(String text) {
    int begin = text.indexOf(begin());
    int end = text.indexOf(end());
    return begin >= 0 && end > begin ? text.substring(begin, end + end().length() + 1) : "";
  }

  /** {@code text} with {@code section} in place of this section, or appended. */
  String replaceIn(String text, String section) {
    int begin = text.indexOf(begin());
    int end = text.indexOf(end());
    if (begin >= 0 && end > begin) {
      return text.substring(0, begin) + section + text.substring(end + end().length() + 1);
    }
    return text + (text.isEmpty() || text.endsWith("\n\n") ? "" : "\n") + section;
  }

  /** Puts {@code section} into {@code out} in place of this section, or at its end. */
  void write(Path out, String section) throws IOException {
    String text = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : "";
    Files.writeString(out, replaceIn(text, section), StandardCharsets.UTF_8);
  }

  /** Every marked section {@code text} holds, each followed by an empty line, in order. */
  static String keptIn(String text) {
    StringBuilder kept = new StringBuilder();
    for (MarkedSection section : ALL) {
      String found = section.of(text);
      if (!found.isEmpty()) {
        kept.append('\n').append(found);
      }
    }
    return kept.toString();
  }
}
