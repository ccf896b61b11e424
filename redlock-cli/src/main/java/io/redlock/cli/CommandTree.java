package io.redlock.cli;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The command of {@code redlock exec} with every process it starts: the command runs in a
 * session of its own (started through {@code setsid(1)}), and the tree is every live process
 * of that session or of its process group.
 *
 * <p>Why a session: a JDK 17 {@link ProcessBuilder} can neither start a child in a new process
 * group or session nor signal a group, and {@link ProcessHandle#descendants()} loses a
 * grandchild whose parent exited (it is re-parented to init). A session keeps them together:
 * background jobs of a script, and jobs a job-control shell moves to process groups of their
 * own, stay in it. Only a process that calls {@code setsid()} itself (a daemon's double fork,
 * {@code setsid}, {@code nohup setsid ...}) leaves it.
 *
 * <p>Members are found in {@code /proc} (session and process group of each process) on
 * Linux, and with {@code ps -A -o pid=,pgid=,stat=} (process group only) elsewhere. A process
 * that has exited but not been reaped (a zombie, state {@code Z}) is no member: it runs no
 * code and holds no file. A process whose main thread alone exited shows the same state, and is
 * a member while another of its threads lives. The command itself is our child and is reaped
 * by the JDK (the JDK sees it alive until its last thread exits).
 *
 * <p>Signals go to each member through {@link ProcessHandle}, which remembers the start time
 * of the process it names: a pid reused by an unrelated process after the scan is not
 * signalled.
 *
 * <p>Not thread-safe: one thread (the one running {@code exec}) owns it.
 */
final class CommandTree {

  private static final Path PROC = Path.of("/proc");

  /** Larger than any {@code /proc/PID/stat} line: 52 numeric fields, a name of 64 bytes at most. */
  private static final int STAT_BUFFER = 2048;

  private final Process leader;
  private final long id;

  private CommandTree(Process leader) {
    this.leader = leader;
    this.id = leader.pid();
  }

  /**
   * Starts {@code words} in a new session through {@code setsid}.
   *
   * @param setsid the {@code setsid} executable (see {@link #findSetsid})
   * @throws IOException if it cannot be started
   */
  static CommandTree start(Path setsid, List<String> words, Map<String, String> environment)
      throws IOException {
    List<String> command = new ArrayList<>(words.size() + 1);
    command.add(setsid.toString());
    command.addAll(words);
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    builder.environment().clear();
    builder.environment().putAll(environment);
    // setsid(1) forks only when it is a process group leader; a child of the JVM never is,
    // so it calls setsid() and executes the command in its own process: the command's pid is
    // the session's id and the process group's id.
    return new CommandTree(builder.start());
  }

  /** The {@code setsid} executable on {@code PATH}, if there is one. */
  static Optional<Path> findSetsid(String path) {
    return findExecutable("setsid", path);
  }

  /**
   * Looks {@code name} up the way a shell does: a name with a slash as it is, else the first
   * executable file of that name in the {@code PATH} folders.
   */
  static Optional<Path> findExecutable(String name, String path) {
    if (name.contains("/")) {
      Path file = Path.of(name);
      return Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
    }
    if (path == null) {
      return Optional.empty();
    }
    for (String folder : path.split(File.pathSeparator, -1)) {
      Path file = Path.of(folder.isEmpty() ? "." : folder).resolve(name);
      if (Files.isRegularFile(file) && Files.isExecutable(file)) {
        return Optional.of(file);
      }
    }
    return Optional.empty();
  }

  /** The command itself: the session leader. */
  Process leader() {
    return leader;
  }

  /** The session's and the process group's id (the command's pid). */
  long id() {
    return id;
  }

  /**
   * The live processes of the tree now, the command included while it runs (also in the
   * instant before it called {@code setsid()}).
   */
  List<ProcessHandle> members() {
    List<ProcessHandle> members = new ArrayList<>();
    if (leader.isAlive()) {
      members.add(leader.toHandle());
    }
    if (Files.isDirectory(PROC.resolve("self"))) {
      addFromProc(members);
    } else {
      addFromPs(members);
    }
    return members;
  }

  private void addFromProc(List<ProcessHandle> members) {
    byte[] buffer = new byte[STAT_BUFFER];
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC, "[0-9]*")) {
      for (Path entry : entries) {
        long pid;
        try {
          pid = Long.parseLong(entry.getFileName().toString());
        } catch (NumberFormatException e) {
          continue;
        }
        if (pid == id) {
          continue;
        }
        // Most processes are no members: one read each rules them out. A process outside
        // the session cannot join it later (setsid() makes a session of its own, setpgid()
        // joins a group of its own session), so only a reused pid could, and the next scan
        // sees that.
        if (!runsInTree(entry, buffer)) {
          continue;
        }
        // Then the handle: it fixes the process by its start time, so the stat read after
        // it describes this process or a later one with the same pid (which the handle then
        // refuses to signal).
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isPresent() && runsInTree(entry, buffer)) {
          members.add(handle.get());
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list /proc: " + e.getMessage(), e);
    }
  }

  /**
   * Whether the process at {@code /proc/PID} belongs to the tree and runs code: a live member,
   * or one whose main thread alone exited while another thread lives.
   */
  private boolean runsInTree(Path process, byte[] buffer) {
    String line = readStat(process.resolve("stat"), buffer);
    int state = stateAt(line);
    if (state < 0 || !inTree(line, state, id)) {
      return false; // most processes: one parse of one read
    }
    char c = line.charAt(state);
    return !exited(c) || (c == 'Z' && hasLiveThread(process, buffer));
  }

  /**
   * The line of a {@code /proc/PID/stat} file, or an empty string if the process is gone. Read
   * into the caller's buffer, with {@code java.io}: {@code Files.readString} opens a channel and
   * sizes the file first, and a file of {@code /proc} has no size, so it allocates and copies
   * for each of the hundreds of files a scan reads.
   */
  static String readStat(Path stat, byte[] buffer) {
    try (InputStream in = new FileInputStream(stat.toFile())) {
      int length = in.readNBytes(buffer, 0, buffer.length);
      if (length == buffer.length) {
        // longer than any stat line; decoded the same way (a name cut inside a character by
        // the kernel is not valid UTF-8: replaced, not an error)
        return new String(Files.readAllBytes(stat), StandardCharsets.UTF_8);
      }
      return new String(buffer, 0, length, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return ""; // gone meanwhile
    }
  }

  /**
   * Whether a {@code /proc/PID/stat} line describes a live process of session or process
   * group {@code id}.
   */
  static boolean isMember(String stat, long id) {
    int state = stateAt(stat);
    return state >= 0 && !exited(stat.charAt(state)) && inTree(stat, state, id);
  }

  /**
   * Whether a {@code /proc/PID/stat} line describes a process of session or process group
   * {@code id} whose main thread exited ({@code Z}): its other threads, if any, still run
   * code (a program may end its main thread with {@code pthread_exit}), so it is a member
   * while one of them lives (see {@link #hasLiveThread}).
   */
  static boolean isExitedLeader(String stat, long id) {
    int state = stateAt(stat);
    return state >= 0 && stat.charAt(state) == 'Z' && inTree(stat, state, id);
  }

  /**
   * Whether a thread of the process at {@code /proc/PID} other than its main thread has not
   * exited, from {@code task/TID/stat}. False when the folder cannot be read (the process is
   * gone).
   */
  static boolean hasLiveThread(Path process, byte[] buffer) {
    String main = process.getFileName().toString();
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(process.resolve("task"), "[0-9]*")) {
      for (Path task : tasks) {
        if (!task.getFileName().toString().equals(main)) {
          String line = readStat(task.resolve("stat"), buffer);
          int state = stateAt(line);
          if (state >= 0 && !exited(line.charAt(state))) {
            return true;
          }
        }
      }
    } catch (IOException e) {
      return false; // gone meanwhile
    }
    return false;
  }

  private static boolean exited(char state) {
    return state == 'Z' || state == 'X' || state == 'x';
  }

  /**
   * Where the state letter of a stat line is, or -1 if it has none: {@code pid (comm) state
   * ...}, and comm may hold spaces and parentheses.
   */
  private static int stateAt(String stat) {
    int close = stat.lastIndexOf(')');
    return close < 0 || close + 2 >= stat.length() ? -1 : close + 2;
  }

  /**
   * Whether the stat line's process group or session is {@code id}, whatever its state (at
   * {@code state}, from {@link #stateAt}).
   */
  private static boolean inTree(String stat, int state, long id) {
    // state ppid pgrp session ...: read field by field, a scan runs this for every process,
    // most of it in the interpreter.
    int ppid = stat.indexOf(' ', state) + 1;
    int pgrp = ppid == 0 ? -1 : stat.indexOf(' ', ppid) + 1;
    int session = pgrp <= 0 ? -1 : stat.indexOf(' ', pgrp) + 1;
    if (session <= 0) {
      return false;
    }
    int end = stat.indexOf(' ', session);
    if (end < 0) {
      end = stat.stripTrailing().length(); // the last field
    }
    return field(stat, pgrp, session - 1) == id || field(stat, session, end) == id;
  }

  private static long field(String stat, int from, int to) {
    try {
      return Long.parseLong(stat, from, to, 10);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private void addFromPs(List<ProcessHandle> members) {
    Process ps;
    String output;
    try {
      ps =
          new ProcessBuilder("ps", "-A", "-o", "pid=", "-o", "pgid=", "-o", "stat=")
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      output = new String(ps.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      ps.waitFor();
    } catch (IOException e) {
      throw new IllegalStateException("cannot list processes with ps: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while listing processes", e);
    }
    for (long pid : membersInPs(output, id)) {
      if (pid != id && pid != ps.pid()) {
        ProcessHandle.of(pid).ifPresent(members::add);
      }
    }
  }

  /** The pids of live processes of process group {@code id} in {@code ps} output. */
  static List<Long> membersInPs(String output, long id) {
    List<Long> pids = new ArrayList<>();
    for (String line : output.split("\n")) {
      String[] fields = line.trim().split("\\s+");
      if (fields.length < 3 || fields[2].startsWith("Z")) {
        continue;
      }
      try {
        if (Long.parseLong(fields[1]) == id) {
          pids.add(Long.parseLong(fields[0]));
        }
      } catch (NumberFormatException e) {
        // a header or a line of another shape
      }
    }
    return pids;
  }
}
