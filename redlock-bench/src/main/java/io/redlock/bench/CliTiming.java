package io.redlock.bench;

import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.testkit.RedisServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The command line's fixed cost, for {@link PathsHarness}: {@code redlock --version} and
 * {@code redlock exec --no-wait RESOURCE true} on a free resource of three local nodes
 * (declared fresh, restart guard on), each run many times in turn as the repository's
 * launcher starts the tool (with its JVM options and class-data archive for one-shot commands) and as a
 * bare {@code java -jar redlock.jar}. Reported: the median wall time of a run (process start
 * to exit, as a shell sees it) and the median CPU time of the process, then where one run of
 * each goes, read from a class-loading log ({@code -Xlog:class+load} with the JVM's uptime):
 * the moment the first class of each step is loaded.
 */
final class CliTiming {
  private CliTiming() {}

  /** The first class each step loads, in the order the steps run. */
  private static final Map<String, String> MILESTONES = milestones();

  private static Map<String, String> milestones() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("io.redlock.cli.Main", "JVM start to the main class");
    // Not io.redlock.Redlock: picocli's reflection over exec's fields loads that one while it
    // builds the command line. Connector is first loaded when Redlock.create runs.
    m.put("io.redlock.Connector", "command line parsed, warm-up awaited, configuration built");
    m.put("io.redlock.internal.LockEngine", "Lettuce and Netty started, every node connected");
    m.put("io.redlock.internal.Acquisition", "the restart guard's first probe of every node");
    return m;
  }

  /**
   * The part's Markdown, or null when it cannot be measured here (no jar or launcher: built by
   * {@code ./bench}), said on standard error.
   */
  static String section(PathsHarness.Options o) throws Exception {
    Path launcher = o.launcher.toAbsolutePath();
    Path jar = o.cliJar.toAbsolutePath();
    StringBuilder md = new StringBuilder("### The command line's fixed cost\n\n");
    if (!Files.isRegularFile(jar) || !Files.isExecutable(launcher)) {
      System.err.println(
          "cli part not measured (the report keeps what it had): no "
              + o.cliJar
              + " or no executable "
              + o.launcher);
      return null;
    }
    try (RedisServers servers = RedisServers.start(3)) {
      RedlockConfig config = RedlockConfig.builder().nodes(servers.uris()).build();
      if (!Redlock.init(config, true).complete()) {
        throw new IllegalStateException("could not declare the servers fresh");
      }
      List<String> addresses = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        addresses.add(servers.address(i));
      }
      Map<String, String> env = new HashMap<>();
      env.put("REDLOCK_NODES", String.join(",", addresses));
      env.put("REDLOCK_PASSWORD", servers.password());
      // The launcher's first run after a build may build the jar: not measured.
      Run first = run(List.of(launcher.toString(), "--version"), env);
      System.out.println("launcher's first run: " + first.wallMillis + " ms");
      // Its first exec writes a class-data archive as it exits, its second checks it and keeps
      // it: reported, not measured with the runs below, which map it.
      Run writes =
          run(List.of(launcher.toString(), "exec", "--no-wait", "bench:cli:w", "true"), env);
      Run keeps =
          run(List.of(launcher.toString(), "exec", "--no-wait", "bench:cli:k", "true"), env);

      Map<String, List<String>> variants = new LinkedHashMap<>();
      variants.put("launcher (`./redlock`)", List.of(launcher.toString()));
      variants.put("`java -jar redlock.jar`", List.of("java", "-jar", jar.toString()));
      Map<String, List<String>> commands = new LinkedHashMap<>();
      commands.put("`--version`", List.of("--version"));
      commands.put(
          "`exec --no-wait RESOURCE true`", List.of("exec", "--no-wait", "RESOURCE", "true"));
      Map<String, List<Run>> runs = new LinkedHashMap<>();
      for (int i = 0; i < o.cliRuns; i++) {
        for (Map.Entry<String, List<String>> c : commands.entrySet()) {
          for (Map.Entry<String, List<String>> v : variants.entrySet()) {
            List<String> words = new ArrayList<>(v.getValue());
            for (String w : c.getValue()) {
              words.add(w.equals("RESOURCE") ? "bench:cli:" + i : w);
            }
            Run r = run(words, env);
            if (r.exit != 0) {
              System.err.println("  exit " + r.exit + ": " + String.join(" ", words));
            }
            runs.computeIfAbsent(c.getKey() + "|" + v.getKey(), k -> new ArrayList<>()).add(r);
          }
        }
      }
      md.append(
          String.format(
              Locale.ROOT,
              "3 local nodes, declared fresh; %d runs of each, in turn; medians. Wall: from"
                  + " the process's start to its exit, as the shell that started it sees it;"
                  + " CPU: user + system time of the process and its children.%n%n",
              o.cliRuns));
      md.append(
          String.format(
              Locale.ROOT,
              "The launcher gives one-shot commands a class-data sharing archive of its own"
                  + " (`redlock-cli/target/cds/`): its first `exec` wrote it as it exited"
                  + " (%.0f ms wall), its second checked it in a JVM of its own and kept it"
                  + " (%.0f ms); the runs below map it. `java -jar` runs without it.%n%n",
              writes.wallMillis,
              keeps.wallMillis));
      md.append("| Command | Started by | Wall ms | CPU ms | Failed runs |\n");
      md.append("| --- | --- | ---: | ---: | ---: |\n");
      for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
        String[] key = e.getKey().split("\\|");
        List<Run> all = e.getValue();
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %.0f | %.0f | %d |%n",
                key[0],
                key[1],
                Results.median(all.stream().map(r -> r.wallMillis).toList()),
                Results.median(all.stream().map(r -> r.cpuMillis).toList()),
                all.stream().filter(r -> r.exit != 0).count()));
      }
      md.append('\n');
      md.append(steps(variants, env));
    }
    return md.toString();
  }

  /** One run of exec per variant with a class-loading log: when each step began. */
  private static String steps(Map<String, List<String>> variants, Map<String, String> env)
      throws IOException, InterruptedException {
    StringBuilder md = new StringBuilder();
    md.append(
        "Where one run of `exec --no-wait RESOURCE true` goes, from its class-loading log"
            + " (`-Xlog:class+load`, which slows the run down a little): the JVM's uptime when"
            + " the first class of each step was loaded, in ms, and the classes loaded from"
            + " the JDK's class-data sharing archive and from the"
            + " jar.\n\n");
    List<String> names = new ArrayList<>(variants.keySet());
    md.append("| Step (first class) | ").append(String.join(" | ", names)).append(" |\n");
    md.append("| --- |").append(" ---: |".repeat(names.size())).append('\n');
    List<Map<String, Double>> found = new ArrayList<>();
    List<long[]> counts = new ArrayList<>();
    int n = 0;
    for (List<String> variant : variants.values()) {
      Path log = Files.createTempFile("cli-classes", ".log");
      Map<String, String> withLog = new HashMap<>(env);
      withLog.put("JAVA_TOOL_OPTIONS", "-Xlog:class+load:file=" + log + ":uptime");
      List<String> words = new ArrayList<>(variant);
      words.addAll(List.of("exec", "--no-wait", "bench:cli:steps:" + n++, "true"));
      Run r = run(words, withLog);
      Map<String, Double> at = new LinkedHashMap<>();
      long shared = 0;
      long fromJar = 0;
      double last = 0;
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        int close = line.indexOf("s]");
        if (!line.startsWith("[") || close < 0) {
          continue;
        }
        double uptime = Double.parseDouble(line.substring(1, close)) * 1000;
        last = uptime;
        String rest = line.substring(close + 2).trim();
        String name = rest.split(" ")[0];
        MILESTONES.keySet().stream()
            .filter(name::equals)
            .findFirst()
            .ifPresent(m -> at.putIfAbsent(m, uptime));
        if (rest.contains("shared objects file")) {
          shared++;
        } else {
          fromJar++;
        }
      }
      at.put("end", last);
      at.put("wall", r.wallMillis);
      found.add(at);
      counts.add(new long[] {shared, fromJar});
      Files.deleteIfExists(log);
    }
    double[] previous = new double[names.size()];
    for (Map.Entry<String, String> m : MILESTONES.entrySet()) {
      md.append("| ").append(m.getValue()).append(" (`").append(simple(m.getKey())).append("`)");
      for (int i = 0; i < names.size(); i++) {
        Double t = found.get(i).get(m.getKey());
        md.append(" | ").append(t == null ? "–" : String.format(Locale.ROOT, "%.0f", t));
      }
      md.append(" |\n");
    }
    md.append("| acquire, run `true`, release, close: last class loaded");
    for (int i = 0; i < names.size(); i++) {
      md.append(String.format(Locale.ROOT, " | %.0f", found.get(i).get("end")));
    }
    md.append(" |\n| the whole run, wall (the shell's view)");
    for (int i = 0; i < names.size(); i++) {
      md.append(String.format(Locale.ROOT, " | %.0f", found.get(i).get("wall")));
    }
    md.append(" |\n| classes from CDS archives / from the jar");
    for (int i = 0; i < names.size(); i++) {
      md.append(" | ").append(counts.get(i)[0]).append(" / ").append(counts.get(i)[1]);
    }
    md.append(" |\n\n");
    return md.toString();
  }

  private static String simple(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }

  /** One run: wall time, the CPU time of the process and its children, the exit code. */
  private record Run(double wallMillis, double cpuMillis, int exit) {}

  private static Run run(List<String> words, Map<String, String> env)
      throws IOException, InterruptedException {
    // bash's `times` gives the user and system time of the children it waited for.
    List<String> command =
        new ArrayList<>(
            List.of("bash", "-c", "\"$@\" >/dev/null 2>&1; r=$?; times; exit $r", "run"));
    command.addAll(words);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    builder.redirectError(ProcessBuilder.Redirect.DISCARD);
    long start = System.nanoTime();
    Process process = builder.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int exit = process.waitFor();
    double wall = (System.nanoTime() - start) / 1e6;
    // `times` prints the shell's own times, then its children's: "0m0.412s 0m0.061s".
    String[] lines = out.trim().split("\n");
    double cpu = Double.NaN;
    if (lines.length >= 2) {
      String[] parts = lines[lines.length - 1].trim().split("\\s+");
      cpu = seconds(parts[0]) * 1000 + seconds(parts[1]) * 1000;
    }
    return new Run(wall, cpu, exit);
  }

  private static double seconds(String time) {
    int m = time.indexOf('m');
    return Double.parseDouble(time.substring(0, m)) * 60
        + Double.parseDouble(time.substring(m + 1, time.length() - 1));
  }
}
