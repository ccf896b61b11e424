package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlock.RedlockConfig;
import io.redlock.cli.Main;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What README.md and docs/ say, checked against the code, without the network: every Java
 * snippet appears in a test source (compiled by the build; in this module, run against real
 * nodes by the {@code *IT} classes), every {@code redlock} option they name exists, every
 * relative link leads somewhere, Maven coordinates name real modules, and every setting of
 * {@link RedlockConfig.Builder} is in the configuration page.
 */
class DocsTest {
  private static final Pattern REDLOCK_COMMAND =
      Pattern.compile(
          "(?<![\\w-])(?:\\./)?redlock\\s+(exec|status|init|doctor|demo|torture|generate-completion)\\b"
              + "([^\\n#|]*)");
  private static final Pattern OPTION = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");
  private static final List<String> CONNECTING = List.of("exec", "status", "init", "doctor");

  /**
   * The code of every test source of every module, without its layout (this one holds most
   * snippets; a page about one module's test support may keep its snippet there), lines
   * marked {@code // test-only} left out.
   */
  private static Map<Path, String> testSources() throws IOException {
    Map<Path, String> sources = new HashMap<>();
    List<Path> roots;
    try (Stream<Path> modules = Files.list(Markdown.ROOT)) {
      roots =
          modules
              .map(m -> m.resolve("src").resolve("test").resolve("java"))
              .filter(Files::isDirectory)
              .toList();
    }
    for (Path root : roots) {
      List<Path> javaFiles;
      try (Stream<Path> files = Files.walk(root)) {
        javaFiles = files.filter(p -> p.toString().endsWith(".java")).toList();
      }
      for (Path file : javaFiles) {
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          if (!line.contains("// test-only")) {
            lines.add(line);
          }
        }
        sources.put(file, compact(Markdown.codeLines(lines)));
      }
    }
    assertThat(sources.keySet())
        .as("this module's own test sources are among them")
        .anyMatch(p -> p.endsWith(Path.of("io", "redlock", "docs", "ReadmeIT.java")));
    return sources;
  }

  /**
   * The code without its layout: every whitespace character dropped, so that a snippet wrapped
   * for a page matches the same code as the formatter wrapped it in a test source.
   */
  private static String compact(List<String> lines) {
    return String.join("", lines).replaceAll("\\s+", "");
  }

  @Test
  void everyJavaSnippetIsInACompiledTestSource() throws IOException {
    Map<Path, String> sources = testSources();
    List<String> missing = new ArrayList<>();
    int snippets = 0;
    for (Markdown page : Markdown.pages()) {
      for (Markdown.Block block : page.blocks) {
        if (!block.language().equals("java")) {
          continue;
        }
        snippets++;
        List<String> snippet = Markdown.codeLines(block.lines());
        String code = compact(snippet);
        boolean found = sources.values().stream().anyMatch(source -> source.contains(code));
        if (!found) {
          missing.add(page.name() + ":" + block.line() + " " + snippet.get(0));
        }
      }
    }
    assertThat(snippets).as("java snippets found").isGreaterThan(10);
    assertThat(missing)
        .as(
            "java snippets that no test source holds, layout aside (test lines may sit"
                + " between them, marked // test-only)")
        .isEmpty();
  }

  private static Map<String, Set<String>> optionsByCommand() {
    CommandLine redlock = Main.commandLine();
    Map<String, Set<String>> options = new HashMap<>();
    for (Map.Entry<String, CommandLine> sub : redlock.getSubcommands().entrySet()) {
      Set<String> names = new HashSet<>();
      CommandSpec spec = sub.getValue().getCommandSpec();
      for (OptionSpec option : spec.options()) {
        names.addAll(List.of(option.names()));
      }
      options.put(sub.getKey(), names);
    }
    return options;
  }

  @Test
  void everyDocumentedRedlockOptionExists() {
    Map<String, Set<String>> options = optionsByCommand();
    assertThat(options).containsKeys("exec", "status", "init", "doctor", "demo", "torture");
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Markdown page : Markdown.pages()) {
      List<String> texts = new ArrayList<>();
      for (Markdown.Block block : page.blocks) {
        texts.add(block.text().replace("\\\n", " "));
      }
      for (Markdown.Span span : page.spans) {
        texts.add(span.code());
      }
      for (String text : texts) {
        Matcher command = REDLOCK_COMMAND.matcher(text);
        while (command.find()) {
          String arguments = command.group(2);
          int end = arguments.indexOf(" -- ");
          if (end >= 0) {
            arguments = arguments.substring(0, end); // the rest is exec's COMMAND
          }
          Matcher option = OPTION.matcher(arguments);
          while (option.find()) {
            checked++;
            if (!options.get(command.group(1)).contains(option.group())) {
              wrong.add(page.name() + ": redlock " + command.group(1) + " " + option.group());
            }
          }
        }
      }
    }
    assertThat(checked).as("options named after a redlock command").isGreaterThan(20);
    assertThat(wrong).as("documented options that the command does not have").isEmpty();
  }

  /**
   * In docs/cli.md every option in inline code belongs to the command of its section; in the
   * section on nodes and the config file, to every command that connects to a cluster.
   */
  @Test
  void everyOptionOfTheCommandLinePageBelongsToItsCommand() {
    Map<String, Set<String>> options = optionsByCommand();
    Set<String> anyCommand = new HashSet<>();
    options.values().forEach(anyCommand::addAll);
    Markdown cli = Markdown.read(Markdown.ROOT.resolve("docs").resolve("cli.md"));
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Markdown.Span span : cli.spans) {
      Matcher option = OPTION.matcher(span.code());
      if (!option.lookingAt()) {
        continue;
      }
      checked++;
      String name = option.group();
      String section = span.section();
      if (options.containsKey(section)) {
        if (!options.get(section).contains(name)) {
          wrong.add(section + " " + name);
        }
      } else if (section.startsWith("Nodes")) {
        for (String command : CONNECTING) {
          if (!options.get(command).contains(name)) {
            wrong.add(command + " " + name);
          }
        }
      } else if (!anyCommand.contains(name)) {
        wrong.add("(any command) " + name);
      }
    }
    assertThat(checked).isGreaterThan(20);
    assertThat(wrong)
        .as("options in docs/cli.md that the command of their section lacks")
        .isEmpty();
  }

  @Test
  void everyRelativeLinkLeadsToAFileAndHeadingThatExist() {
    List<String> broken = new ArrayList<>();
    for (Markdown page : Markdown.pages()) {
      for (String link : page.links) {
        if (link.matches("^[a-z]+:.*")) {
          continue; // http:, https:, mailto:
        }
        int hash = link.indexOf('#');
        String file = hash < 0 ? link : link.substring(0, hash);
        Path target = file.isEmpty() ? page.path : page.path.getParent().resolve(file).normalize();
        if (!Files.exists(target)) {
          broken.add(page.name() + ": " + link + " (no such file)");
          continue;
        }
        if (hash >= 0) {
          String anchor = link.substring(hash + 1);
          if (!target.toString().endsWith(".md")
              || !Markdown.read(target).anchors.contains(anchor)) {
            broken.add(page.name() + ": " + link + " (no such heading)");
          }
        }
      }
    }
    assertThat(broken).isEmpty();
  }

  @Test
  void mavenCoordinatesNameModulesOfThisVersion() throws IOException {
    String parent = Files.readString(Markdown.ROOT.resolve("pom.xml"), StandardCharsets.UTF_8);
    Matcher version =
        Pattern.compile("<artifactId>redlock-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(parent);
    assertThat(version.find()).isTrue();
    Pattern dependency =
        Pattern.compile(
            "<groupId>io\\.redlock</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*(?:<!--.*?-->\\s*)?"
                + "<version>([^<]+)</version>");
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Markdown page : Markdown.pages()) {
      for (Markdown.Block block : page.blocks) {
        if (!block.language().equals("xml")) {
          continue;
        }
        Matcher m = dependency.matcher(block.text());
        while (m.find()) {
          checked++;
          if (!Files.exists(Markdown.ROOT.resolve(m.group(1)).resolve("pom.xml"))
              || !m.group(2).equals(version.group(1))) {
            wrong.add(page.name() + ": " + m.group(1) + ":" + m.group(2));
          }
        }
      }
    }
    assertThat(checked).isGreaterThanOrEqualTo(4);
    assertThat(wrong).as("coordinates of no module, or of another version").isEmpty();
  }

  @Test
  void theBomPageNamesEveryModuleTheBomManages() throws IOException {
    String bom =
        Files.readString(
            Markdown.ROOT.resolve("redlock-bom").resolve("pom.xml"), StandardCharsets.UTF_8);
    String page =
        Files.readString(
            Markdown.ROOT.resolve("docs").resolve("integrations.md"), StandardCharsets.UTF_8);
    String section = page.substring(page.indexOf("## One version"), page.indexOf("## ShedLock"));
    Matcher managed =
        Pattern.compile("<artifactId>(redlock-(?!bom)[a-z-]+)</artifactId>").matcher(bom);
    List<String> modules = new ArrayList<>();
    while (managed.find()) {
      modules.add(managed.group(1));
    }
    assertThat(modules).contains("redlock-core", "redlock-lettuce");
    for (String module : modules) {
      assertThat(section).as("the BOM section names " + module).contains("`" + module + "`");
    }
  }

  /** One page says a thing, the others link to it: no paragraph of prose or code twice. */
  @Test
  void noParagraphIsWrittenTwice() throws IOException {
    Map<String, String> seen = new HashMap<>();
    List<String> twice = new ArrayList<>();
    for (Markdown page : Markdown.pages()) {
      String text = Files.readString(page.path, StandardCharsets.UTF_8);
      for (String paragraph : text.split("\n\\s*\n")) {
        String normal = String.join(" ", paragraph.strip().split("\\s+"));
        if (normal.length() < 80) {
          continue; // short lines (a heading, a bare command) may well repeat
        }
        String first = seen.putIfAbsent(normal, page.name());
        if (first != null) {
          twice.add(first + " and " + page.name() + ": " + normal.substring(0, 60));
        }
      }
    }
    assertThat(twice).isEmpty();
  }

  @Test
  void theConfigurationPageHasARowForEverySetting() throws IOException {
    String page =
        Files.readString(
            Markdown.ROOT.resolve("docs").resolve("configuration.md"), StandardCharsets.UTF_8);
    List<String> missing = new ArrayList<>();
    for (Method method : RedlockConfig.Builder.class.getDeclaredMethods()) {
      if (Modifier.isPublic(method.getModifiers())
          && !method.getName().equals("build")
          && !page.contains("| `" + method.getName() + "`")
          && !page.contains(", `" + method.getName() + "` |")) {
        missing.add(method.getName());
      }
    }
    assertThat(missing).as("RedlockConfig.Builder settings without a row").isEmpty();
  }
}
