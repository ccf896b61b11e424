package io.redlock.lettuce;

import io.redlock.spi.NodeInfo;
import java.util.Map;

/**
 * What the restart guard's probe reads from a node's {@code INFO} replies: fields by name, the
 * memory limit and policy, the eviction count and how the node persists writes. Pure functions
 * of the reply's text. A field the probe cannot do without fails ({@link #field}); one that a
 * server or an ACL may withhold gives {@code null} or -1, never a guess.
 */
final class InfoReplies {
  private InfoReplies() {}

  /** The memory limit and policy from {@code INFO memory}, or {@code null} if not known. */
  static NodeInfo.Memory memory(String info) {
    if (info == null) {
      return null;
    }
    String maxmemory = optionalField(info, "maxmemory");
    String policy = optionalField(info, "maxmemory_policy");
    if (maxmemory == null || policy == null) {
      return null;
    }
    try {
      return new NodeInfo.Memory(Long.parseLong(maxmemory), policy);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code evicted_keys} from {@code INFO stats}, or -1 if not known. */
  static long evictedKeys(String info) {
    String evicted = info == null ? null : optionalField(info, "evicted_keys");
    if (evicted == null) {
      return -1;
    }
    try {
      return Long.parseLong(evicted);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * How the node persists writes, or {@code null} if not known. A rewrite is seen by
   * {@code aof_rewrites} (Redis 7) or {@code aof_last_rewrite_time_sec} (-1 until this
   * process finished one), and by a rewrite in progress or scheduled.
   */
  static NodeInfo.Persistence persistence(String info, Map<String, String> fsync) {
    if (info == null || fsync == null || fsync.get("appendfsync") == null) {
      return null;
    }
    String enabled = optionalField(info, "aof_enabled");
    String inProgress = optionalField(info, "aof_rewrite_in_progress");
    String scheduled = optionalField(info, "aof_rewrite_scheduled");
    String lastRewrite = optionalField(info, "aof_last_rewrite_time_sec");
    String rewrites = optionalField(info, "aof_rewrites");
    String lastWrite = optionalField(info, "aof_last_write_status");
    if (enabled == null
        || inProgress == null
        || scheduled == null
        || lastRewrite == null
        || lastWrite == null) {
      return null;
    }
    boolean rewritten =
        !"0".equals(inProgress)
            || !"0".equals(scheduled)
            || !"-1".equals(lastRewrite)
            || (rewrites != null && !"0".equals(rewrites));
    return new NodeInfo.Persistence(
        "1".equals(enabled), fsync.get("appendfsync"), rewritten, "ok".equals(lastWrite));
  }

  private static String optionalField(String info, String field) {
    try {
      return field(info, field);
    } catch (IllegalStateException e) {
      return null;
    }
  }

  /** The value of {@code name:value} in an {@code INFO} reply. */
  static String field(String info, String field) {
    String prefix = field + ":";
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(prefix)) {
        return line.substring(prefix.length()).trim();
      }
    }
    throw new IllegalStateException("INFO reply has no " + field);
  }
}
