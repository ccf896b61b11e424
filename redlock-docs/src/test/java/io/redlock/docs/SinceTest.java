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
 * the Javadoc right above it. The internal package is not API and is left out. Test classes a
 * module publishes in its test jar (the packages its pom's {@code test-jar} execution
 * includes, such as the core's {@code NodeClientContract}) are API too and are checked.
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
    int publishedTestTypes = 0;
    for (String module : PUBLISHED) {
      List<Path> roots = new ArrayList<>();
      roots.add(Markdown.ROOT.resolve(module).resolve("src/main/java"));
      for (String include : testJarIncludes(Markdown.ROOT.resolve(module).resolve("pom.xml"))) {
        roots.add(Markdown.ROOT.resolve(module).resolve("src/test/java").resolve(include));
      }
      List<Path> files = new ArrayList<>();
      for (Path root : roots) {
        try (Stream<Path> walk = Files.walk(root)) {
          walk.filter(p -> p.toString().endsWith(".java"))
              .filter(p -> !p.toString().contains("internal"))
              .forEach(files::add);
        }
      }
      for (Path file : files) {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Matcher type = PUBLIC_TYPE.matcher(text);
        if (!type.find()) {
          continue;
        }
        checked++;
        if (file.toString().contains("src" + java.io.File.separator + "test")) {
          publishedTestTypes++;
        }
        String before = text.substring(0, type.start());
        int end = before.lastIndexOf("*/");
        int start = before.lastIndexOf("/**");
        if (start < 0 || end < start || !before.substring(start, end).contains("@since")) {
          missing.add(Markdown.ROOT.relativize(file).toString());
        }
      }
    }
    assertThat(checked).as("public types found").isGreaterThan(30);
    assertThat(publishedTestTypes).as("public types of the published test jars").isPositive();
    assertThat(missing).as("public types without @since").isEmpty();
  }

  /**
   * The folders (under src/test/java) that the {@code test-jar} execution of {@code pom}
   * includes: {@code <include>io/redlock/spi/contract/**</include>} gives
   * {@code io/redlock/spi/contract}.
   */
  private static List<String> testJarIncludes(Path pom) throws IOException {
    String text = Files.readString(pom, StandardCharsets.UTF_8);
    int goal = text.indexOf("<goal>test-jar</goal>");
    if (goal < 0) {
      return List.of();
    }
    int end = text.indexOf("</execution>", goal);
    Matcher include =
        Pattern.compile("<include>([^<*]+?)/?\\*\\*</include>").matcher(text.substring(goal, end));
    List<String> folders = new ArrayList<>();
    while (include.find()) {
      folders.add(include.group(1));
    }
    return folders;
  }
}
