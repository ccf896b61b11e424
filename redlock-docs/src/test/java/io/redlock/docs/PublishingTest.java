package io.redlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What Maven Central asks of a release, read from the poms: every module redlock-bom manages
 * builds a sources jar and a javadoc jar in {@code verify}, and every other module of the build
 * is kept out of a deploy.
 */
class PublishingTest {

  @Test
  void everyModuleTheBomManagesBuildsASourcesAndAJavadocJar() {
    Set<String> managed = bomModules();
    assertThat(managed).contains("redlock-core", "redlock-spring-boot-starter");
    Element parent = pom(Markdown.ROOT.resolve("pom.xml"));
    Element parentPlugins = child(child(child(parent, "build"), "pluginManagement"), "plugins");
    assertThat(goals(plugin(parentPlugins, "maven-source-plugin")))
        .as("the parent binds the source plugin")
        .contains("jar-no-fork");
    assertThat(goals(plugin(parentPlugins, "maven-javadoc-plugin")))
        .as("the parent binds the javadoc plugin")
        .contains("jar");

    List<String> missing = new ArrayList<>();
    for (String module : managed) {
      Element build = child(pom(Markdown.ROOT.resolve(module).resolve("pom.xml")), "build");
      Element plugins = child(build, "plugins");
      Set<String> classifiers = jarClassifiers(plugin(plugins, "maven-jar-plugin"));
      boolean sources =
          plugin(plugins, "maven-source-plugin") != null || classifiers.contains("sources");
      boolean javadoc =
          plugin(plugins, "maven-javadoc-plugin") != null || classifiers.contains("javadoc");
      if (!sources) {
        missing.add(module + ": no sources jar");
      }
      if (!javadoc) {
        missing.add(module + ": no javadoc jar");
      }
      boolean hasCode = Files.isDirectory(Markdown.ROOT.resolve(module).resolve("src/main/java"));
      if (hasCode && !classifiers.isEmpty()) {
        missing.add(module + ": has code, yet packs its sources or javadoc jar by hand");
      }
    }
    assertThat(missing).as("modules in redlock-bom that Maven Central would refuse").isEmpty();
  }

  @Test
  void everyOtherModuleIsNotDeployed() {
    Set<String> managed = bomModules();
    Element parent = pom(Markdown.ROOT.resolve("pom.xml"));
    List<String> modules = texts(child(parent, "modules"), "module");
    assertThat(modules).contains("redlock-bom", "redlock-cli", "redlock-torture");
    List<String> deployed = new ArrayList<>();
    for (String module : modules) {
      if (module.equals("redlock-bom") || managed.contains(module)) {
        continue;
      }
      Element properties =
          child(pom(Markdown.ROOT.resolve(module).resolve("pom.xml")), "properties");
      List<String> skip = texts(properties, "maven.deploy.skip");
      if (!skip.equals(List.of("true"))) {
        deployed.add(module);
      }
    }
    assertThat(deployed).as("modules outside redlock-bom without maven.deploy.skip=true").isEmpty();
  }

  @Test
  void theSinceCheckCoversEveryModuleOfTheBomThatHasCode() {
    List<String> withCode = new ArrayList<>();
    for (String module : bomModules()) {
      if (Files.isDirectory(Markdown.ROOT.resolve(module).resolve("src/main/java"))) {
        withCode.add(module);
      }
    }
    assertThat(SinceTest.PUBLISHED).containsExactlyInAnyOrderElementsOf(withCode);
  }

  /** The io.redlock artifacts redlock-bom manages, itself left out. */
  private static Set<String> bomModules() {
    Element bom = pom(Markdown.ROOT.resolve("redlock-bom").resolve("pom.xml"));
    Set<String> modules = new LinkedHashSet<>();
    for (Element dependency :
        children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
      if (texts(dependency, "groupId").equals(List.of("io.redlock"))) {
        modules.addAll(texts(dependency, "artifactId"));
      }
    }
    return modules;
  }

  private static Element pom(Path file) {
    try {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      Document document = factory.newDocumentBuilder().parse(file.toFile());
      return document.getDocumentElement();
    } catch (IOException | javax.xml.parsers.ParserConfigurationException e) {
      throw new IllegalStateException(file + ": " + e, e);
    } catch (org.xml.sax.SAXException e) {
      throw new IllegalStateException(file + " is not well-formed: " + e.getMessage(), e);
    }
  }

  /** The direct child elements of that name; none when the parent is null. */
  private static List<Element> children(Element parent, String name) {
    List<Element> out = new ArrayList<>();
    if (parent == null) {
      return out;
    }
    for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
      if (node instanceof Element element && element.getTagName().equals(name)) {
        out.add(element);
      }
    }
    return out;
  }

  private static Element child(Element parent, String name) {
    List<Element> found = children(parent, name);
    return found.isEmpty() ? null : found.get(0);
  }

  private static List<String> texts(Element parent, String name) {
    return children(parent, name).stream().map(e -> e.getTextContent().strip()).toList();
  }

  /** The plugin of that artifactId in a {@code <plugins>} element, or null. */
  private static Element plugin(Element plugins, String artifactId) {
    for (Element plugin : children(plugins, "plugin")) {
      if (texts(plugin, "artifactId").contains(artifactId)) {
        return plugin;
      }
    }
    return null;
  }

  private static List<String> goals(Element plugin) {
    List<String> goals = new ArrayList<>();
    for (Element execution : children(child(plugin, "executions"), "execution")) {
      goals.addAll(texts(child(execution, "goals"), "goal"));
    }
    return goals;
  }

  /** The classifiers of the extra jars the jar plugin makes: its executions of goal "jar". */
  private static Set<String> jarClassifiers(Element jarPlugin) {
    Set<String> classifiers = new LinkedHashSet<>();
    for (Element execution : children(child(jarPlugin, "executions"), "execution")) {
      if (texts(child(execution, "goals"), "goal").contains("jar")) {
        classifiers.addAll(texts(child(execution, "configuration"), "classifier"));
      }
    }
    return classifiers;
  }
}
