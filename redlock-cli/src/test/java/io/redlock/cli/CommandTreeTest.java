package io.redlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandTreeTest {

  @Test
  void aProcessOfTheSessionOrTheGroupIsAMemberUnlessItExited() {
    // pid (comm) state ppid pgrp session ...
    assertThat(CommandTree.isMember("901 (sleep) S 900 900 900 0 -1", 900)).isTrue();
    assertThat(CommandTree.isMember("902 (sh) S 1 902 900 0 -1", 900))
        .as("moved to a group of its own, same session")
        .isTrue();
    assertThat(CommandTree.isMember("903 (x) S 1 900 1 0 -1", 900)).as("same group").isTrue();
    assertThat(CommandTree.isMember("904 (daemon) S 1 904 904 0 -1", 900))
        .as("left the session (double fork)")
        .isFalse();
    assertThat(CommandTree.isMember("905 (sleep) Z 1 900 900 0 -1", 900)).as("zombie").isFalse();
    assertThat(CommandTree.isMember("906 (a) b) 9 0) R 1 900 900 0", 900))
        .as("a name with parentheses and spaces")
        .isTrue();
    assertThat(CommandTree.isMember("907 (sleep) S 1 1 900\n", 900)).as("last field").isTrue();
    for (String broken : new String[] {"", "908 (sleep", "909 (x) S 1 900"}) {
      assertThat(CommandTree.isMember(broken, 900)).as(broken).isFalse();
    }
    assertThat(CommandTree.isMember("911 (x) S 1 a 900 0", 900)).as("bad group").isTrue();
  }

  @Test
  void aStatLineIsReadWhateverItsNameAndLength(@TempDir Path dir) throws Exception {
    // The kernel cuts a name at 15 bytes, perhaps inside a character: not valid UTF-8.
    byte[] name = {(byte) 0xe2, (byte) 0x82};
    Path stat = dir.resolve("stat");
    Files.write(
        stat, concat("42 (".getBytes(StandardCharsets.US_ASCII), name, ") S 1 900 900 0\n"));
    for (int size : new int[] {2048, 8}) { // 8: longer than the buffer
      String line = CommandTree.readStat(stat, new byte[size]);
      assertThat(line).as("buffer %d", size).endsWith(") S 1 900 900 0\n");
      assertThat(CommandTree.isMember(line, 900)).as("buffer %d", size).isTrue();
    }
    assertThat(CommandTree.readStat(dir.resolve("gone"), new byte[2048])).isEmpty();
  }

  private static byte[] concat(byte[] first, byte[] second, String rest) {
    byte[] tail = rest.getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[first.length + second.length + tail.length];
    System.arraycopy(first, 0, all, 0, first.length);
    System.arraycopy(second, 0, all, first.length, second.length);
    System.arraycopy(tail, 0, all, first.length + second.length, tail.length);
    return all;
  }

  @Test
  void aProcessWhoseMainThreadAloneExitedIsAMemberWhileAnotherThreadLives(@TempDir Path proc)
      throws Exception {
    // A program that ends its main thread with pthread_exit: /proc/PID/stat shows Z, the
    // other threads (task/TID/stat) run on.
    String leader = "920 (worker) Z 1 900 900 0 -1\n";
    assertThat(CommandTree.isMember(leader, 900)).isFalse();
    assertThat(CommandTree.isExitedLeader(leader, 900)).isTrue();
    assertThat(CommandTree.isExitedLeader("921 (worker) Z 1 921 921 0 -1", 900))
        .as("outside the session")
        .isFalse();
    assertThat(CommandTree.isExitedLeader("922 (worker) S 1 900 900 0 -1", 900))
        .as("its main thread runs")
        .isFalse();

    Path process = proc.resolve("920");
    byte[] buffer = new byte[2048];
    task(process, "920", leader);
    task(process, "923", "923 (worker) S 1 900 900 0 -1\n");
    assertThat(CommandTree.hasLiveThread(process, buffer)).as("a thread sleeps").isTrue();
    task(process, "923", "923 (worker) Z 1 900 900 0 -1\n");
    assertThat(CommandTree.hasLiveThread(process, buffer)).as("every thread exited").isFalse();
    task(process, "924", "924 (worker) R 1 900 900 0 -1\n");
    assertThat(CommandTree.hasLiveThread(process, buffer)).as("another one runs").isTrue();
    assertThat(CommandTree.hasLiveThread(proc.resolve("925"), buffer)).as("gone").isFalse();
  }

  private static void task(Path process, String tid, String stat) throws Exception {
    Path folder = Files.createDirectories(process.resolve("task").resolve(tid));
    Files.writeString(folder.resolve("stat"), stat);
  }

  @Test
  void psOutputGivesTheLiveMembersOfTheGroup() {
    String ps = "    1     1 Ss\n  900   900 Ss\n  901   900 S+\n  902   900 Z\n  903   903 S\n";
    assertThat(CommandTree.membersInPs(ps, 900)).containsExactly(900L, 901L);
  }

  @Test
  void executablesAreFoundOnThePathLikeAShellDoes(@TempDir Path dir) throws Exception {
    Path tool = Files.createFile(dir.resolve("tool"));
    assertThat(CommandTree.findExecutable("tool", dir.toString())).isEmpty(); // not executable
    assertThat(tool.toFile().setExecutable(true)).isTrue();
    assertThat(CommandTree.findExecutable("tool", "/nonexistent:" + dir)).contains(tool);
    assertThat(CommandTree.findExecutable(tool.toString(), null)).contains(tool);
    assertThat(CommandTree.findExecutable("no-such-tool", dir.toString())).isEmpty();
  }
}
