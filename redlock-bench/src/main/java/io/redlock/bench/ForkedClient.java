package io.redlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One Java implementation in a JVM of its own, kept for the whole run, as JMH forks a JVM per
 * benchmark. In one JVM, the clients measured one after the other share the JIT's type
 * profiles of common code ({@code CompletableFuture}, Netty, Lettuce), and a client's figure
 * depended on which clients ran before it (docs/profiling.md, "One JVM per client"). In its
 * own JVM each client is measured on code compiled for itself alone.
 *
 * <p>The harness talks to the child over its standard streams, one line per request and per
 * answer: {@code measure <prefix> <threads> <oneResource> <warmupNanos> <windowNanos>}, answered
 * by {@code figure <the eleven Figure components>}. Every other line of the child's output
 * (its errors, its logging) is passed on to the harness's standard error. The child meters its
 * own JVM and the servers, whose pids it is given, with a {@link CpuMeter}.
 */
final class ForkedClient implements Client {
  private static final String FIGURE = "figure ";

  private final String name;
  private final int nodes;
  private final Process process;
  private final BufferedReader answers;
  private final Writer requests;

  private ForkedClient(String name, int nodes, Process process) {
    this.name = name;
    this.nodes = nodes;
    this.process = process;
    this.answers =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
  }

  /**
   * Starts a JVM with this JVM's class path and options (heap, {@code -XX} flags) that builds
   * {@code impl} over {@code uris}; returns once it is ready to measure.
   */
  static ForkedClient start(
      String impl, List<String> uris, List<Long> serverPids, Adapters.Retry retry)
      throws IOException {
    return start(impl, impl, System.getProperty("java.class.path"), uris, serverPids, retry);
  }

  /**
   * The same, on another class path (the benchmark jar of another build, for a comparison in
   * one run), reported as {@code shownAs}.
   */
  static ForkedClient start(
      String impl,
      String shownAs,
      String classPath,
      List<String> uris,
      List<Long> serverPids,
      Adapters.Retry retry)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.add("-cp");
    command.add(classPath);
    command.add(ForkedClient.class.getName());
    command.add(impl);
    command.add(String.join(",", uris));
    command.add(String.join(",", serverPids.stream().map(String::valueOf).toList()));
    command.add(Long.toString(retry.delay().toNanos()));
    command.add(Long.toString(retry.jitter().toNanos()));
    command.add(Long.toString(retry.maxWait().toNanos()));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    ForkedClient client = new ForkedClient(shownAs, Adapters.nodes(impl, uris), process);
    client.awaitAnswer("ready");
    return client;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int nodes() {
    return nodes;
  }

  @Override
  public Figure measure(
      String prefix, int threads, boolean oneResource, Duration warmup, Duration window)
      throws InterruptedException {
    try {
      requests.write(
          String.format(
              Locale.ROOT,
              "measure %s %d %b %d %d%n",
              prefix,
              threads,
              oneResource,
              warmup.toNanos(),
              window.toNanos()));
      requests.flush();
      return parse(awaitAnswer(FIGURE));
    } catch (IOException e) {
      throw new IllegalStateException(name + "'s JVM failed: " + e.getMessage(), e);
    }
  }

  /** Reads the child's output up to the line starting with {@code prefix}. */
  private String awaitAnswer(String prefix) throws IOException {
    for (String line = answers.readLine(); line != null; line = answers.readLine()) {
      if (line.startsWith(prefix)) {
        return line.substring(prefix.length());
      }
      System.err.println("  [" + name + "] " + line);
    }
    throw new IOException(name + "'s JVM ended (exit " + exitCode() + ")");
  }

  private String exitCode() {
    try {
      return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "?";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "?";
    }
  }

  @Override
  public void close() {
    try {
      requests.write("exit\n");
      requests.flush();
    } catch (IOException ignored) {
      // already gone
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  static String format(Figure f) {
    return String.join(
        " ",
        List.of(
            Double.toString(f.p50Micros()),
            Double.toString(f.p99Micros()),
            Double.toString(f.p999Micros()),
            Double.toString(f.opsPerSecond()),
            Long.toString(f.count()),
            Long.toString(f.failures()),
            Long.toString(f.violations()),
            Long.toString(f.lostUpdates()),
            Double.toString(f.clientCpuMicros()),
            Double.toString(f.serverCpuMicros()),
            Double.toString(f.compilerCpuMicros())));
  }

  static Figure parse(String line) {
    String[] v = line.trim().split(" ");
    if (v.length != 11) {
      throw new IllegalStateException("not a figure: " + line);
    }
    return new Figure(
        Double.parseDouble(v[0]),
        Double.parseDouble(v[1]),
        Double.parseDouble(v[2]),
        Double.parseDouble(v[3]),
        Long.parseLong(v[4]),
        Long.parseLong(v[5]),
        Long.parseLong(v[6]),
        Long.parseLong(v[7]),
        Double.parseDouble(v[8]),
        Double.parseDouble(v[9]),
        Double.parseDouble(v[10]));
  }

  /**
   * The child: {@code <impl> <uris,...> <server pids,...> <retry delay ns> <retry jitter ns>
   * <max wait ns>}, then requests on standard input.
   */
  public static void main(String[] args) throws Exception {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    // Only answers go to the harness's reader; everything else the child prints goes to
    // standard error, which the harness shares.
    PrintStream answers = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    List<String> uris = Arrays.asList(args[1].split(","));
    List<Long> pids = Arrays.stream(args[2].split(",")).map(Long::parseLong).toList();
    Adapters.Retry retry =
        new Adapters.Retry(
            Duration.ofNanos(Long.parseLong(args[3])),
            Duration.ofNanos(Long.parseLong(args[4])),
            Duration.ofNanos(Long.parseLong(args[5])));
    int status = 0;
    try (LockUnderTest impl = Adapters.create(args[0], uris, retry)) {
      CpuMeter cpu = new CpuMeter(pids);
      answers.println("ready");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine();
          line != null && !line.equals("exit");
          line = in.readLine()) {
        String[] r = line.split(" ");
        Figure f =
            Load.run(
                impl,
                r[1],
                Integer.parseInt(r[2]),
                Boolean.parseBoolean(r[3]),
                Duration.ofNanos(Long.parseLong(r[4])),
                Duration.ofNanos(Long.parseLong(r[5])),
                cpu);
        answers.println(FIGURE + format(f));
      }
    } catch (Exception | Error e) {
      e.printStackTrace();
      status = 1;
    }
    System.exit(status); // Redisson and Lettuce may leave non-daemon threads behind
  }
}
