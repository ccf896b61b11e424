package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every public type of a published module says since when it exists: an {@code @since} tag in
 * the Javadoc right above it. The internal package is not API and is left out.
 */
class SinceTest {
  /** The modules of redlock-bom with code; PublishingTest checks that none is missing. */
  static final List<String> PUBLISHED =
      List.of(
          "redlock-core",
          "redlock-lettuce",
          "redlock-testkit",
          "redlock-micrometer",
          "redlock-shedlock",
          "redlock-spring-integration",
          "redlock-spring-boot-autoconfigure");

  private static final Pattern PUBLIC_TYPE =
      Pattern.compile(
          "(?m)^public (?:final |abstract |sealed )*(?:class|interface|enum|record|@interface) ");

  @Test
  void everyPublicTypeOfAPublishedModuleHasASinceTag() throws IOException {
    List<String> missing = new ArrayList<>();
    int checked = 0;
    for (String module : PUBLISHED) {
      Path sources = Markdown.ROOT.resolve(module).resolve("src/main/java");
      List<Path> files;
      try (Stream<Path> walk = Files.walk(sources)) {
        files =
            walk.filter(p -> p.toString().endsWith(".java"))
                .filter(p -> !p.toString().contains("internal"))
                .toList();
      }
      for (Path file : files) {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Matcher type = PUBLIC_TYPE.matcher(text);
        if (!type.find()) {
          continue;
        }
        checked++;
        String before = text.substring(0, type.start());
        int end = before.lastIndexOf("*/");
        int start = before.lastIndexOf("/**");
        if (start < 0 || end < start || !before.substring(start, end).contains("@since")) {
          missing.add(Markdown.ROOT.relativize(file).toString());
        }
      }
    }
    assertThat(checked).as("public types found").isGreaterThan(30);
    assertThat(missing).as("public types without @since").isEmpty();
  }
}
