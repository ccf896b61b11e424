package io.redlock.lettuce;

import io.redlock.testkit.RedisServers;

/** What a server counts of each command ({@code INFO commandstats}). */
final class CommandStats {
  private CommandStats() {}

  /** Calls of {@code command} on server {@code i} of {@code servers} so far. */
  static long calls(RedisServers servers, int i, String command) {
    String info = String.valueOf(servers.command(i, "INFO", "commandstats"));
    String prefix = "cmdstat_" + command + ":calls=";
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(prefix)) {
        int end = line.indexOf(',', prefix.length());
        return Long.parseLong(line.substring(prefix.length(), end));
      }
    }
    return 0;
  }
}
