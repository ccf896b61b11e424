package io.redlock.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One Markdown page of the documentation, read just far enough for the checks: fenced code
 * blocks, inline code spans and links outside them, and the anchors of its headings.
 */
final class Markdown {
  /** The repository root, seen from this module's directory (where Maven runs the tests). */
  static final Path ROOT = Path.of("..");

  private static final Pattern FENCE = Pattern.compile("^```(\\S*)\\s*$");
  private static final Pattern INLINE_CODE = Pattern.compile("`([^`\\n]+)`");
  private static final Pattern LINK = Pattern.compile("\\[[^\\]\\n]*\\]\\(([^)\\s]+)\\)");

  /** A fenced code block: its language tag (may be empty) and its lines. */
  record Block(String language, int line, List<String> lines) {
    String text() {
      return String.join("\n", lines);
    }
  }

  /** An inline code span and the heading (level 2) it stands under, "" before the first. */
  record Span(String code, String section) {}

  final Path path;
  final List<Block> blocks = new ArrayList<>();
  final List<Span> spans = new ArrayList<>();
  final List<String> links = new ArrayList<>();
  final Set<String> anchors = new LinkedHashSet<>();

  private Markdown(Path path, List<String> lines) {
    this.path = path;
    String section = "";
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher fence = FENCE.matcher(line.strip());
      if (fence.matches()) {
        int start = i;
        List<String> body = new ArrayList<>();
        for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
          body.add(lines.get(i));
        }
        blocks.add(new Block(fence.group(1), start + 1, body));
        continue;
      }
      if (line.startsWith("#")) {
        String title = line.replaceFirst("^#+\\s*", "");
        anchors.add(slug(title));
        if (line.startsWith("## ")) {
          section = title;
        }
      }
      Matcher code = INLINE_CODE.matcher(line);
      while (code.find()) {
        spans.add(new Span(code.group(1), section));
      }
      Matcher link = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
      while (link.find()) {
        links.add(link.group(1));
      }
    }
  }

  static Markdown read(Path path) {
    try {
      return new Markdown(path, Files.readAllLines(path, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** README.md and every page of docs/. */
  static List<Markdown> pages() {
    List<Markdown> pages = new ArrayList<>();
    pages.add(read(ROOT.resolve("README.md")));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(p -> pages.add(read(p)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  /** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
  static String slug(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N} _-]", "")
        .replace(' ', '-');
  }

  String name() {
    return ROOT.relativize(path).toString();
  }

  /** The stripped, non-blank lines of a text. */
  static List<String> codeLines(List<String> lines) {
    List<String> out = new ArrayList<>();
    for (String line : lines) {
      if (!line.isBlank()) {
        out.add(line.strip());
      }
    }
    return out;
  }
}
