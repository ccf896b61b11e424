package io.redlock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * node-redlock (the npm package {@code redlock}) as an optional peer: the script in
 * {@code redlock-bench/node/} is copied to a work directory under {@code target/}, its
 * dependencies installed there with npm (both lines, 4.2.0 and 5.0.0-beta.2, under npm
 * aliases), and run once per round and line against the same servers; it prints one JSON
 * line with its uncontended latency percentiles.
 */
final class NodePeer {
  private final Path work;

  private NodePeer(Path work) {
    this.work = work;
  }

  /** Prepares the work directory, or returns null (with the reason printed) if it cannot. */
  static NodePeer prepare(Path source, Path work) {
    try {
      if (!Files.isRegularFile(source.resolve("package.json"))) {
        System.err.println("node-redlock skipped: no package.json in " + source);
        return null;
      }
      if (run(List.of("node", "--version"), source, 30) == null) {
        System.err.println("node-redlock skipped: node is not on PATH");
        return null;
      }
      Files.createDirectories(work);
      for (String file : List.of("package.json", "package-lock.json", "bench.js")) {
        if (Files.isRegularFile(source.resolve(file))) {
          Files.copy(source.resolve(file), work.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        }
      }
      if (!Files.isDirectory(work.resolve("node_modules"))) {
        List<String> install =
            Files.isRegularFile(work.resolve("package-lock.json"))
                ? List.of("npm", "ci", "--no-audit", "--no-fund")
                : List.of("npm", "install", "--no-audit", "--no-fund");
        System.out.println("installing node-redlock into " + work + ": " + install);
        if (run(install, work, 600) == null) {
          System.err.println("node-redlock skipped: " + install + " failed");
          return null;
        }
      }
      return new NodePeer(work);
    } catch (IOException e) {
      System.err.println("node-redlock skipped: " + e);
      return null;
    }
  }

  /**
   * Uncontended acquire+release on one resource over {@code ports} (servers that require
   * {@code password}) with node-redlock's {@code major} line ({@code "4"} or {@code "5"}); null
   * if it failed.
   */
  Figure latency(
      String major,
      List<Integer> ports,
      String password,
      String resource,
      Duration warmup,
      Duration window) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "node",
                "bench.js",
                major,
                String.join(",", ports.stream().map(String::valueOf).toList()),
                resource,
                Long.toString(warmup.toMillis()),
                Long.toString(window.toMillis())));
    String out = run(command, password, work, warmup.toSeconds() + window.toSeconds() + 120);
    if (out == null) {
      return null;
    }
    String json = out.strip().lines().reduce((a, b) -> b).orElse("");
    try {
      return new Figure(
          number(json, "p50Micros"),
          number(json, "p99Micros"),
          number(json, "p999Micros"),
          number(json, "opsPerSecond"),
          (long) number(json, "count"),
          (long) number(json, "failures"),
          0,
          0,
          Double.NaN,
          Double.NaN,
          Double.NaN); // its CPU is another process's: not measured
    } catch (IllegalArgumentException e) {
      System.err.println("node-redlock: unexpected output: " + json);
      return null;
    }
  }

  private static double number(String json, String field) {
    Matcher m = Pattern.compile("\"" + field + "\"\\s*:\\s*([-0-9.eE]+)").matcher(json);
    if (!m.find()) {
      throw new IllegalArgumentException(field);
    }
    return Double.parseDouble(m.group(1));
  }

  /** Runs a command; its standard output, or null if it failed or timed out. */
  private static String run(List<String> command, Path dir, long timeoutSeconds) {
    return run(command, null, dir, timeoutSeconds);
  }

  /** As {@link #run(List, Path, long)}, with the servers' password in the environment. */
  private static String run(List<String> command, String password, Path dir, long timeoutSeconds) {
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT);
      if (password != null) {
        builder.environment().put("REDLOCK_BENCH_PASSWORD", password);
      }
      Process process = builder.start();
      byte[] out = process.getInputStream().readAllBytes();
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return null;
      }
      return process.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
