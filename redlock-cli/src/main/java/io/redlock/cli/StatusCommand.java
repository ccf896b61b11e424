package io.redlock.cli;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.redlock.NodeHistory;
import io.redlock.RedlockConfig;
import io.redlock.spi.NodeInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code redlock status RESOURCE}: what every node says about a resource, and the verdict.
 *
 * <p>Asks each node at once (within the connect timeout) for what it says about itself, as the
 * restart guard reads it ({@link io.redlock.spi.NodeInfo}: role, uptime, run id, fresh marker),
 * and for {@code GET key} and {@code PTTL key}; prints one row per node and
 * a verdict: <b>held</b> if a majority of all nodes hold the same token, <b>free</b> if a
 * majority answered and do not hold the key (so no majority can hold it), <b>unknown</b>
 * otherwise. It only reads; it never takes or breaks the lock.
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Shows what each node holds for a resource, and the quorum verdict.",
    description = {
      "Shows, per node, whether it is reachable, its role and uptime, whether the restart"
          + " guard would hold it back (up for less than max-ttl plus drift, without a fresh"
          + " marker from 'redlock init'), and whether it"
          + " holds"
          + " RESOURCE (token prefix and remaining ttl); then the quorum verdict: held (a"
          + " majority hold the same token), free (a majority answered without it) or"
          + " unknown. Read-only."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the verdict is held or free",
      "2:bad arguments, settings or config file",
      "3:the verdict is unknown (too few nodes answered, or no token has a majority)"
    })
final class StatusCommand implements Callable<Integer> {

  /** Token characters shown: enough to tell holders apart, not the whole secret. */
  static final int TOKEN_SHOWN = 8;

  @Spec CommandSpec spec;

  @Mixin ConnectionOptions connection;

  @Parameters(index = "0", paramLabel = "RESOURCE", description = "The resource to look at.")
  String resource;

  /** What one node said; {@code error} is set when it could not be asked. */
  record NodeState(
      String node,
      String error,
      String role,
      Long uptimeSeconds,
      String value,
      Long pttl,
      NodeHistory history) {
    NodeState(String node, String error, String role, Long uptimeSeconds, String value, Long pttl) {
      this(node, error, role, uptimeSeconds, value, pttl, null);
    }

    boolean reachable() {
      return error == null;
    }
  }

  /** The verdict over all nodes. */
  enum Verdict {
    held,
    free,
    unknown
  }

  @Override
  public Integer call() throws InterruptedException {
    ConnectionOptions.Settings settings = connection.resolve();
    // What a Redlock with these settings would be; building it refuses bad node URIs,
    // naming them.
    RedlockConfig config = connection.build(settings, settings.builder());
    String key = settings.key(resource);
    List<NodeState> states = query(settings, key);
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        "resource "
            + Printable.of(resource)
            + (key.equals(resource) ? "" : " (key " + Printable.of(key) + ")")
            + ", "
            + states.size()
            + " node(s), quorum "
            + config.quorum());
    printTable(out, states, holdBack(config));
    Verdict verdict = verdict(states, config.quorum());
    out.println(verdictLine(verdict, states, config.quorum()));
    out.flush();
    return verdict == Verdict.unknown ? ExitCodes.FAILURE : ExitCodes.OK;
  }

  /**
   * What a Redlock with {@code config} would make of each node: the restart guard holds back
   * a node up for less than this, unless the fresh marker names its current process; null when
   * the guard is off. (Persistence and the clock are checked by 'redlock doctor'.)
   */
  static Duration holdBack(RedlockConfig config) {
    return config.restartGuard() ? config.restartGuardWindow() : null;
  }

  /**
   * Held if a quorum of all nodes ({@link RedlockConfig#quorum()}) hold one value; free if a
   * quorum answered without it.
   */
  static Verdict verdict(List<NodeState> states, int quorum) {
    Map<String, Integer> holders = new HashMap<>();
    int without = 0;
    for (NodeState state : states) {
      if (!state.reachable()) {
        continue;
      }
      if (state.value() == null) {
        without++;
      } else {
        holders.merge(state.value(), 1, Integer::sum);
      }
    }
    if (holders.values().stream().anyMatch(count -> count >= quorum)) {
      return Verdict.held;
    }
    return without >= quorum ? Verdict.free : Verdict.unknown;
  }

  private static String verdictLine(Verdict verdict, List<NodeState> states, int quorum) {
    long reachable = states.stream().filter(NodeState::reachable).count();
    long holding = states.stream().filter(s -> s.reachable() && s.value() != null).count();
    String counts =
        reachable + " of " + states.size() + " node(s) answered, " + holding + " hold the key";
    return switch (verdict) {
      case held -> "verdict: held (" + counts + "; a majority hold the same token)";
      case free -> "verdict: free (" + counts + "; no majority can hold it)";
      case unknown ->
          "verdict: unknown ("
              + counts
              + "; neither "
              + quorum
              + " holding the same token nor "
              + quorum
              + " answering without it)";
    };
  }

  private List<NodeState> query(ConnectionOptions.Settings settings, String key)
      throws InterruptedException {
    Duration timeout = settings.connectTimeout();
    return InspectionClient.lookAtAll(
        settings.nodes(),
        "redlock-status",
        timeout.multipliedBy(3),
        (node, resources) -> ask(node, settings, key, resources, timeout),
        node -> new NodeState(displayName(node), "no answer in time", null, null, null, null));
  }

  private static NodeState ask(
      String node,
      ConnectionOptions.Settings settings,
      String key,
      ClientResources resources,
      Duration timeout) {
    String name = displayName(node);
    RedisURI uri;
    try {
      uri = InspectionClient.uri(node, settings, timeout);
    } catch (IllegalArgumentException e) {
      return new NodeState(name, "not a Redis URI", null, null, null, null);
    }
    RedisClient client = InspectionClient.client(resources, timeout, settings.tls());
    try (StatefulRedisConnection<String, String> connection =
        client.connect(StringCodec.UTF8, uri)) {
      RedisCommands<String, String> redis = connection.sync();
      NodeInfo info;
      try {
        info = InspectionClient.nodeInfo(node, settings, resources, timeout);
      } catch (IllegalStateException e) {
        info = null; // INFO or TIME refused, or no answer in time: role unknown, the key still read
      }
      String value = redis.get(key);
      Long pttl = redis.pttl(key);
      return info == null
          ? new NodeState(name, null, "?", null, value, pttl, null)
          : new NodeState(
              name, null, info.role(), info.uptimeSeconds(), value, pttl, NodeHistory.of(info));
    } catch (RuntimeException e) {
      return new NodeState(name, InspectionClient.oneLine(e), null, null, null, null);
    } finally {
      client.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  /** What the restart guard makes of a node: counts, held back, or off. */
  static String guard(NodeState s, Duration holdBack) {
    if (holdBack == null) {
      return "off";
    }
    if ("?".equals(s.role())) {
      return "?"; // INFO or TIME refused: what the guard makes of it is not known here
    }
    if (!"master".equals(s.role())) {
      return "excluded (not a master)";
    }
    // The library's own judgement (NodeHistory), never the uptime the node reports.
    NodeHistory history = s.history();
    if (history == null) {
      return "?";
    }
    if (history.countsAtOnce()) {
      return "counts (data known complete)";
    }
    Duration seen = history.seenFor().orElse(null);
    if (seen == null) {
      return "held back (not seen by a client yet)";
    }
    return seen.compareTo(holdBack) >= 0
        ? "counts (seen for " + DurationConverter.format(seen) + ")"
        : "held back (seen for "
            + DurationConverter.format(seen)
            + " of "
            + DurationConverter.format(holdBack)
            + ")";
  }

  private static void printTable(PrintWriter out, List<NodeState> states, Duration holdBack) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "NODE", "REACHABLE", "ROLE", "UPTIME", "GUARD", "HELD", "TTL", "TOKEN", "NOTE"
        });
    for (NodeState s : states) {
      if (!s.reachable()) {
        rows.add(new String[] {s.node(), "no", "-", "-", "-", "-", "-", "-", s.error()});
        continue;
      }
      boolean held = s.value() != null;
      String note = held && s.pttl() != null && s.pttl() == -1 ? "key has no expiry" : "";
      rows.add(
          new String[] {
            s.node(),
            "yes",
            s.role(),
            s.uptimeSeconds() == null ? "?" : uptime(s.uptimeSeconds()),
            guard(s, holdBack),
            held ? "yes" : "no",
            held ? ttl(s.pttl()) : "-",
            held ? s.value().substring(0, Math.min(TOKEN_SHOWN, s.value().length())) : "-",
            note
          });
    }
    InspectionClient.printColumns(out, rows);
  }

  private static String ttl(Long pttl) {
    if (pttl == null || pttl == -2) {
      return "gone";
    }
    if (pttl == -1) {
      return "none";
    }
    return pttl < 10_000 ? pttl + "ms" : String.format(Locale.ROOT, "%.1fs", pttl / 1_000.0);
  }

  private static String uptime(long seconds) {
    if (seconds < 60) {
      return seconds + "s";
    }
    if (seconds < 3_600) {
      return seconds / 60 + "m" + seconds % 60 + "s";
    }
    if (seconds < 86_400) {
      return seconds / 3_600 + "h" + seconds % 3_600 / 60 + "m";
    }
    return seconds / 86_400 + "d" + seconds % 86_400 / 3_600 + "h";
  }

  /** The URI without credentials. */
  static String displayName(String uri) {
    int schemeEnd = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (at < 0 || schemeEnd < 0 || at < schemeEnd) {
      return at < 0 ? Printable.of(uri) : "****";
    }
    // escaped: a node string with control characters cannot forge a line of the table
    return Printable.of(uri.substring(0, schemeEnd + 3) + uri.substring(at + 1));
  }
}
