package io.redlock.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One redis-server of a fleet: its port, its data directory and its current process.
 *
 * <p>The port and directory stay fixed for the node's life, so a restart comes back where
 * clients expect it (and, with AOF, with its data).
 *
 * <p>Thread-safe: every lifecycle method synchronizes on the node. {@link #command} does not,
 * so a thread blocked on a paused server never keeps another thread from resuming it.
 */
final class RedisNode {

  private static final Logger LOG = LoggerFactory.getLogger(RedisNode.class);

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  private static final int PORT_ATTEMPTS = 5;
  private static final int RESERVED_REDIS_PORT = 6379;

  /**
   * Ports held by live nodes of any fleet in this JVM. A killed node's port is free at the OS
   * level but must not be handed to another fleet, or the node's restart would find it taken.
   */
  private static final Set<Integer> CLAIMED_PORTS = ConcurrentHashMap.newKeySet();

  private final int index;
  private final ServerOptions options;
  private final Path dir;
  private volatile int port;
  private volatile int tlsPort;

  // Guarded by this.
  private Process process;
  private boolean paused;
  private boolean closed;
  private List<String> extraOptions = List.of();

  private RedisNode(int index, ServerOptions options, Path dir) {
    this.index = index;
    this.options = options;
    this.dir = dir;
  }

  /**
   * Starts a node on a free loopback port, trying again with a new port if another process
   * took the chosen one between probing and redis binding it.
   */
  static RedisNode start(int index, ServerOptions options) {
    Path dir;
    try {
      dir = Files.createTempDirectory("redlock-redis-" + index + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Could not create a data directory for redis node " + index, e);
    }
    RedisNode node = new RedisNode(index, options, dir);
    try {
      node.startOnFreePort();
      return node;
    } catch (RuntimeException | Error e) {
      node.close();
      throw e;
    }
  }

  private synchronized void startOnFreePort() {
    for (int attempt = 1; ; attempt++) {
      int candidate = claimFreePort();
      port = candidate;
      if (options.hasTls()) {
        tlsPort = claimFreePort();
      }
      try {
        launch();
        return;
      } catch (PortTakenException e) {
        CLAIMED_PORTS.remove(candidate);
        CLAIMED_PORTS.remove(tlsPort);
        if (attempt == PORT_ATTEMPTS) {
          throw new IllegalStateException(
              "redis node "
                  + index
                  + " found its port taken "
                  + PORT_ATTEMPTS
                  + " times in a row; last: "
                  + e.getMessage());
        }
        LOG.debug(
            "Port {} was taken before redis node {} bound it; trying another", candidate, index);
      }
    }
  }

  private static int claimFreePort() {
    while (true) {
      int candidate;
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress(InetAddress.getByName(ServerOptions.HOST), 0));
        candidate = socket.getLocalPort();
      } catch (IOException e) {
        throw new UncheckedIOException("Could not find a free port on " + ServerOptions.HOST, e);
      }
      if (candidate != RESERVED_REDIS_PORT && CLAIMED_PORTS.add(candidate)) {
        return candidate;
      }
    }
  }

  /**
   * Tells whether a node of any fleet in this JVM holds {@code port}, even while that node is
   * down; a {@link FaultProxy} never listens on such a port, or the node could not restart.
   */
  static boolean isClaimed(int port) {
    return port == RESERVED_REDIS_PORT || CLAIMED_PORTS.contains(port);
  }

  int port() {
    return port;
  }

  /** The TLS port, or 0 without TLS. */
  int tlsPort() {
    return tlsPort;
  }

  Path dir() {
    return dir;
  }

  synchronized long pid() {
    return process.pid();
  }

  synchronized boolean isRunning() {
    return process.isAlive();
  }

  synchronized boolean isPaused() {
    return paused && process.isAlive();
  }

  synchronized void kill() {
    if (!process.isAlive()) {
      LOG.info("redis node {} (port {}) is already down; nothing to kill", index, port);
      return;
    }
    LOG.info("Killing redis node {} (port {}, pid {}) with SIGKILL", index, port, process.pid());
    killProcess();
  }

  synchronized void stop() {
    if (!process.isAlive()) {
      LOG.info("redis node {} (port {}) is already down; nothing to stop", index, port);
      return;
    }
    LOG.info(
        "Stopping redis node {} (port {}, pid {}) gracefully with SIGTERM",
        index,
        port,
        process.pid());
    if (paused) {
      // A stopped process would not act on SIGTERM until continued.
      PosixSignals.resume(process.pid());
      paused = false;
    }
    process.destroy();
    if (!awaitExit()) {
      LOG.warn(
          "redis node {} (port {}) ignored SIGTERM for {} ms; killing it",
          index,
          port,
          EXIT_TIMEOUT.toMillis());
      killProcess();
    }
  }

  synchronized void restart() {
    requireOpen();
    if (process.isAlive()) {
      // A paused process cannot be stopped gracefully, and a restart models a crash anyway.
      LOG.info(
          "Killing redis node {} (port {}, pid {}) before restarting it",
          index,
          port,
          process.pid());
      killProcess();
    }
    if (!options.appendOnly()) {
      // Only an explicit SAVE could have left a snapshot; without AOF a restart starts empty.
      deleteQuietly(dir.resolve("dump.rdb"));
    }
    LOG.info("Restarting redis node {} on port {}", index, port);
    try {
      launch();
    } catch (PortTakenException e) {
      throw new IllegalStateException("Cannot restart redis node " + index + ": " + e.getMessage());
    }
  }

  /** The files in which Redis keeps a node's data: the RDB file and the AOF (6.x and 7.x). */
  private static final List<String> DATA_FILES =
      List.of("dump.rdb", "appendonly.aof", "appendonlydir");

  /**
   * Copies the node's data files, as they are on disk now, into {@code target} (an empty
   * directory): what a backup or a file copy taken now would hold.
   */
  synchronized void copyData(Path target) {
    requireOpen();
    try {
      for (String name : DATA_FILES) {
        Path from = dir.resolve(name);
        if (Files.exists(from)) {
          copyRecursively(from, target.resolve(name));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Could not copy the data of redis node " + index, e);
    }
  }

  /**
   * Kills the process, replaces the node's data files with those in {@code copy} (if not
   * {@code null}), and starts it again with {@code options} appended to its command line from
   * now on.
   */
  synchronized void restartWith(Path copy, List<String> options) {
    requireOpen();
    if (process.isAlive()) {
      killProcess();
    }
    try {
      if (copy != null) {
        for (String name : DATA_FILES) {
          deleteRecursively(dir.resolve(name));
          Path from = copy.resolve(name);
          if (Files.exists(from)) {
            copyRecursively(from, dir.resolve(name));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Could not restore the data of redis node " + index, e);
    }
    extraOptions = List.copyOf(options);
    LOG.info("Restarting redis node {} on port {} with {}", index, port, extraOptions);
    try {
      launch();
    } catch (PortTakenException e) {
      throw new IllegalStateException("Cannot restart redis node " + index + ": " + e.getMessage());
    }
  }

  private static void copyRecursively(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path path : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(path).toString());
        if (Files.isDirectory(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createDirectories(target);
        } else {
          Files.copy(path, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  synchronized void pause() {
    requireRunning("pause");
    if (paused) {
      return;
    }
    LOG.info("Pausing redis node {} (port {}, pid {}) with SIGSTOP", index, port, process.pid());
    PosixSignals.stop(process.pid());
    paused = true;
  }

  synchronized void resume() {
    requireRunning("resume");
    if (!paused) {
      return;
    }
    LOG.info("Resuming redis node {} (port {}, pid {}) with SIGCONT", index, port, process.pid());
    PosixSignals.resume(process.pid());
    paused = false;
  }

  /** Kills the process if any, releases the port and deletes the data directory. Idempotent. */
  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (process != null && process.isAlive()) {
      killProcess();
    }
    CLAIMED_PORTS.remove(port);
    CLAIMED_PORTS.remove(tlsPort);
    deleteRecursively(dir);
  }

  /** Runs one command over a fresh connection; deliberately unsynchronized (see class doc). */
  Object command(String... args) {
    if (args.length == 0) {
      throw new IllegalArgumentException("command needs at least the command name");
    }
    int target = port;
    Duration timeout = options.commandTimeout();
    String where = "redis node " + index + " (" + ServerOptions.HOST + ":" + target + ")";
    try (RespConnection connection = RespConnection.open(ServerOptions.HOST, target, timeout)) {
      connection.call("AUTH", ServerOptions.ADMIN_USER, options.adminPassword());
      return connection.call(args);
    } catch (SocketTimeoutException e) {
      throw new UncheckedIOException(
          where
              + " did not answer "
              + args[0]
              + " within "
              + timeout.toMillis()
              + " ms; is it paused or blocked?",
          e);
    } catch (ConnectException e) {
      throw new UncheckedIOException(
          where + " refused the connection for " + args[0] + "; is it running?", e);
    } catch (IOException e) {
      throw new UncheckedIOException(where + " failed on " + args[0] + ": " + e.getMessage(), e);
    }
  }

  private void launch() throws PortTakenException {
    Path binary = RedisBinary.locate();
    Path configFile = writeConfigFile();
    List<String> commandLine =
        new java.util.ArrayList<>(options.commandLine(binary, configFile, port, tlsPort, dir));
    commandLine.addAll(extraOptions); // the later of two settings of one option wins
    File console = dir.resolve("redis.out").toFile();
    Process started;
    try {
      // Output goes to a file, never to a pipe nobody drains; it catches the config
      // errors redis prints before it opens its log file.
      started =
          new ProcessBuilder(commandLine)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(console))
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not start " + binary + " for redis node " + index, e);
    }
    LiveProcesses.register(started);
    started.onExit().thenAccept(LiveProcesses::forget);
    process = started;
    paused = false;
    awaitReady();
    LOG.debug("redis node {} ready on port {} (pid {}, dir {})", index, port, started.pid(), dir);
  }

  /**
   * Writes the secrets (users and passwords) into {@code redis.conf} in the node's folder,
   * readable by the owner only; the folder itself is 0700 ({@link Files#createTempDirectory}).
   */
  private Path writeConfigFile() {
    Path file = dir.resolve("redis.conf");
    try {
      Files.deleteIfExists(file);
      Files.createFile(
          file,
          java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
              java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
      Files.writeString(file, options.configFile(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Could not write the config file of redis node " + index, e);
    }
    return file;
  }

  /**
   * Polls with PING until PONG, then checks via INFO that the answer came from our own process
   * and not from some other server that got the port first.
   */
  private void awaitReady() throws PortTakenException {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        String tail = logTail();
        if (tail.contains("Address already in use")) {
          throw new PortTakenException("port " + port + " is in use");
        }
        throw new IllegalStateException(
            "redis node "
                + index
                + " (port "
                + port
                + ") exited with code "
                + process.exitValue()
                + " during startup. Log tail:\n"
                + tail);
      }
      try (RespConnection probe = RespConnection.open(ServerOptions.HOST, port, PROBE_TIMEOUT)) {
        probe.call("AUTH", ServerOptions.ADMIN_USER, options.adminPassword());
        if ("PONG".equals(probe.call("PING"))) {
          long answeringPid = processIdFromInfo((String) probe.call("INFO", "server"));
          if (answeringPid != process.pid()) {
            killProcess();
            throw new PortTakenException(
                "port " + port + " is served by another redis (pid " + answeringPid + ")");
          }
          return;
        }
      } catch (RedisErrorReplyException e) {
        // LOADING while it replays its AOF: keep polling. Any other error means a
        // foreign server answered on our port; our own process then dies with "Address
        // already in use", which the liveness check above reports.
      } catch (IOException e) {
        // Not listening yet.
      }
      if (System.nanoTime() > deadline) {
        killProcess();
        throw new IllegalStateException(
            "redis node "
                + index
                + " (port "
                + port
                + ") did not answer PING within "
                + READY_TIMEOUT.toMillis()
                + " ms. Log tail:\n"
                + logTail());
      }
      awaitExitFor(Duration.ofMillis(10)); // returns early if the process dies
    }
  }

  private static long processIdFromInfo(String info) {
    for (String line : info.split("\r\n")) {
      if (line.startsWith("process_id:")) {
        return Long.parseLong(line.substring("process_id:".length()).trim());
      }
    }
    throw new IllegalStateException("INFO server reply has no process_id: " + info);
  }

  private void killProcess() {
    process.destroyForcibly();
    if (!awaitExit()) {
      throw new IllegalStateException(
          "redis node "
              + index
              + " (pid "
              + process.pid()
              + ") did not exit within "
              + EXIT_TIMEOUT.toMillis()
              + " ms of SIGKILL");
    }
    paused = false;
  }

  private boolean awaitExit() {
    return awaitExitFor(EXIT_TIMEOUT);
  }

  private boolean awaitExitFor(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for redis node " + index, e);
    }
  }

  private void requireRunning(String action) {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          "Cannot " + action + " redis node " + index + " (port " + port + "): it is not running");
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("redis node " + index + " belongs to a closed fleet");
    }
  }

  /** The last lines of the redis log and of its console output, for error messages. */
  private String logTail() {
    return tail(dir.resolve("redis.log")) + tail(dir.resolve("redis.out"));
  }

  private static String tail(Path file) {
    try {
      if (!Files.exists(file)) {
        return "";
      }
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      List<String> last = lines.subList(Math.max(0, lines.size() - 20), lines.size());
      return "--- " + file.getFileName() + " ---\n" + String.join("\n", last) + "\n";
    } catch (IOException e) {
      return "(could not read " + file + ": " + e.getMessage() + ")\n";
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("Could not delete {}", file, e);
    }
  }

  /** Deletes a folder and everything in it, logging what cannot be deleted. */
  static void deleteTree(Path root) {
    deleteRecursively(root);
  }

  private static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(RedisNode::deleteQuietly);
    } catch (IOException e) {
      LOG.warn("Could not delete {}", root, e);
    }
  }

  @Override
  public String toString() {
    return "redis node " + index + " on " + ServerOptions.HOST + ":" + port + " (" + dir + ")";
  }

  /** Another process owns the port; only the first start may pick a new one. */
  private static final class PortTakenException extends Exception {
    private static final long serialVersionUID = 1L;

    PortTakenException(String message) {
      super(message, null, false, false);
    }
  }
}
