package io.redlock.cli;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.redlock.FreshMarker;
import io.redlock.NodeHistory;
import io.redlock.RedlockConfig;
import io.redlock.spi.MaxTtlRegister;
import io.redlock.spi.NodeInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code redlock doctor}: checks each node against what Redlock's safety assumes, one row per
 * node and a verdict.
 *
 * <p>The I/O ({@link #examine}) is apart from the judgement ({@link #assess}), which is pure.
 */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Checks the nodes against what Redlock's safety assumes.",
    description = {
      "Per node: reachable, role (must be master), Redis version, run_id, persistence"
          + " against the restart guard, eviction (maxmemory with any policy but noeviction"
          + " can evict lock keys; an allkeys-* policy also fencing counters), clock offset and rate against this host, round trip"
          + " against the node timeout, the ACL rights the library needs (checked by running"
          + " them on the key <prefix>__redlock__:doctor, which is deleted again), and the"
          + " guard state (fresh marker, uptime). Then a verdict.",
      "",
      "Safety problems (exit 1): two URIs reaching one server (same run_id), a replica,"
          + " maxmemory with an evicting policy, a clock that runs ahead of this host's by"
          + " more than the drift factor. Warnings (exit 0): unreachable nodes (a minority),"
          + " missing rights, slow round trips, nodes held back by the guard."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:healthy (warnings may be listed)",
      "1:a safety problem was found",
      "2:bad arguments, settings or config file",
      "3:could not run: fewer than a majority of the nodes answered"
    })
final class DoctorCommand implements Callable<Integer> {

  /** How long the clock rate is measured for, per node. */
  static final Duration RATE_BASELINE = Duration.ofSeconds(2);

  /** The commands the library needs, and what for (see docs/production.md). */
  static final Map<String, String> NEEDED = neededCommands();

  @Spec CommandSpec spec;

  @Mixin ConnectionOptions connection;

  @Option(names = "--json", description = "Print the rows and the verdict as one JSON document.")
  boolean json;

  /** What one node said; {@code error} is set when it could not be reached. */
  record NodeFacts(
      String node,
      String error,
      String role,
      String version,
      String runId,
      Long uptimeSeconds,
      String appendonly,
      String appendfsync,
      boolean rewrittenSinceStart,
      Long maxmemory,
      String maxmemoryPolicy,
      String marker,
      Long offsetMillis,
      Double rateExcess,
      Double rateUncertainty,
      Long roundTripMicros,
      List<String> refused,
      MaxTtlRegister register,
      NodeHistory history) {

    /** Facts without the node's history (it could not be read). */
    NodeFacts(
        String node,
        String error,
        String role,
        String version,
        String runId,
        Long uptimeSeconds,
        String appendonly,
        String appendfsync,
        boolean rewrittenSinceStart,
        Long maxmemory,
        String maxmemoryPolicy,
        String marker,
        Long offsetMillis,
        Double rateExcess,
        Double rateUncertainty,
        Long roundTripMicros,
        List<String> refused,
        MaxTtlRegister register) {
      this(
          node,
          error,
          role,
          version,
          runId,
          uptimeSeconds,
          appendonly,
          appendfsync,
          rewrittenSinceStart,
          maxmemory,
          maxmemoryPolicy,
          marker,
          offsetMillis,
          rateExcess,
          rateUncertainty,
          roundTripMicros,
          refused,
          register,
          null);
    }

    boolean reachable() {
      return error == null;
    }
  }

  /** How bad a finding is. */
  enum Severity {
    OK,
    WARN,
    PROBLEM
  }

  /** One finding on one node (or on the cluster, node {@code null}). */
  record Finding(String node, Severity severity, String check, String text) {}

  /** Everything doctor concluded. */
  record Verdict(List<Finding> findings, int reachable, int nodes, int exitCode) {}

  private static Map<String, String> neededCommands() {
    Map<String, String> needed = new LinkedHashMap<>();
    needed.put("set", "acquire one resource (SET NX PX)");
    needed.put("eval", "acquire several resources, extend; EVALSHA's fallback");
    needed.put("evalsha", "release (a compare-and-delete script)");
    needed.put("script|load", "load the release script on each new connection");
    needed.put("get", "scripts compare the token; the guard reads the fresh marker");
    needed.put("del", "release (inside the script)");
    needed.put("pexpire", "extend (inside the script)");
    needed.put("exists", "acquire several resources (inside the script)");
    needed.put("info", "restart guard and start-up checks: run_id, uptime, role");
    needed.put("time", "restart guard: the node's clock");
    return needed;
  }

  @Override
  public Integer call() throws InterruptedException {
    ConnectionOptions.Settings settings = connection.resolve();
    RedlockConfig config = connection.build(settings, settings.builder());
    List<NodeFacts> facts = examineAll(settings);
    Verdict verdict = assess(facts, config);
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(toJson(facts, verdict));
    } else {
      print(out, facts, verdict, config);
    }
    out.flush();
    return verdict.exitCode();
  }

  /** Judges the facts: pure, so that every rule can be tested without Redis. */
  static Verdict assess(List<NodeFacts> facts, RedlockConfig config) {
    List<Finding> findings = new ArrayList<>();
    Map<String, String> runIds = new HashMap<>();
    int reachable = 0;
    for (NodeFacts f : facts) {
      if (!f.reachable()) {
        findings.add(
            new Finding(f.node(), Severity.WARN, "reachable", "unreachable: " + f.error()));
        continue;
      }
      reachable++;
      String other = f.runId() == null ? null : runIds.putIfAbsent(f.runId(), f.node());
      if (other != null) {
        findings.add(
            new Finding(
                f.node(),
                Severity.PROBLEM,
                "run_id",
                "the same server as " + other + " (run_id " + f.runId() + "): two URIs, one node"));
      }
      if ("?".equals(f.role())) {
        // Not read (INFO timed out, or was refused: the acl finding names a refusal): unknown
        // is not a proven replica, and said as a warning.
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "role",
                "its role could not be read: run doctor again, or check the node"));
      } else if (!"master".equals(f.role())) {
        findings.add(
            new Finding(
                f.node(),
                Severity.PROBLEM,
                "role",
                "role " + f.role() + ": every node must be an independent master"));
      }
      if (f.maxmemory() == null || f.maxmemoryPolicy() == null) {
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "eviction",
                "maxmemory not read (INFO memory and CONFIG GET refused or not answered): eviction"
                    + " not checked"));
      } else if (f.maxmemory() > 0
          && !f.maxmemoryPolicy().toLowerCase(Locale.ROOT).equals("noeviction")) {
        findings.add(
            new Finding(
                f.node(),
                Severity.PROBLEM,
                "eviction",
                "maxmemory "
                    + f.maxmemory()
                    + " with maxmemory-policy "
                    + f.maxmemoryPolicy()
                    + " can evict lock keys"
                    + (new NodeInfo.Memory(f.maxmemory(), f.maxmemoryPolicy())
                            .mayEvictKeysWithoutTtl()
                        ? " and fencing counters (fenced leases will not trust this node)"
                        : "")
                    + "; use noeviction or maxmemory 0"));
      }
      if (f.rateExcess() != null
          && f.rateUncertainty() != null
          && f.rateExcess() - f.rateUncertainty() > config.driftFactor()) {
        findings.add(
            new Finding(
                f.node(),
                Severity.PROBLEM,
                "clock",
                String.format(
                    Locale.ROOT,
                    "clock runs %.2f%% ahead of this host's (more than driftFactor %.2f%%): keys"
                        + " expire early",
                    100 * f.rateExcess(),
                    100 * config.driftFactor())));
      }
      if (f.roundTripMicros() != null
          && f.roundTripMicros() * 2 > config.nodeTimeout().toNanos() / 1_000) {
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "round trip",
                "round trip "
                    + f.roundTripMicros() / 1_000.0
                    + " ms is more than half the node timeout "
                    + DurationConverter.format(config.nodeTimeout())
                    + ": votes may time out"));
      }
      if (!f.refused().isEmpty()) {
        List<String> why = new ArrayList<>();
        for (String command : f.refused()) {
          why.add(command + " (" + NEEDED.getOrDefault(command, "needed") + ")");
        }
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "acl",
                "refuses "
                    + String.join(", ", why)
                    + ": locks "
                    + (probeRefused(f) ? "never count while the restart guard is on" : "fail")
                    + "; see the ACL in docs/production.md"));
      }
      if (f.register() != null && f.register().maxTtlMillis() > config.maxTtl().toMillis()) {
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "register",
                "a client of this cluster uses maxTtl "
                    + seconds(f.register().maxTtlMillis())
                    + ", longer than "
                    + seconds(config.maxTtl().toMillis())
                    + ": every client holds restarted nodes back for it until it lapses ("
                    + register(f)
                    + "); set the same maxTtl on every client, see docs/production.md"));
      }
      if (config.restartGuard()
          && f.history() != null
          && !probeRefused(f) // never counts: the acl finding says so
          && !f.history().counts(config.restartGuardWindow())) {
        findings.add(
            new Finding(
                f.node(),
                Severity.WARN,
                "guard",
                guardState(f, config)
                    + ": "
                    + f.history().reason()
                    + "; it counts again by itself (never run 'redlock init' after a restart:"
                    + " it is only for a new cluster no client has used)"));
      }
    }
    List<NodeHistory> histories = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (NodeFacts f : facts) {
      histories.add(f.reachable() ? f.history() : null);
      names.add(f.node());
    }
    List<java.util.Optional<String>> conflicts = NodeHistory.clusterConflicts(histories, names);
    for (int i = 0; i < facts.size(); i++) {
      String node = facts.get(i).node();
      conflicts
          .get(i)
          .ifPresent(
              why ->
                  findings.add(new Finding(node, Severity.PROBLEM, "cluster", "not used: " + why)));
    }
    int quorum = config.quorum();
    boolean problem = findings.stream().anyMatch(f -> f.severity() == Severity.PROBLEM);
    int exit =
        reachable < quorum ? ExitCodes.FAILURE : problem ? ExitCodes.VIOLATION : ExitCodes.OK;
    return new Verdict(findings, reachable, facts.size(), exit);
  }

  /** Whether the node refuses a command of the guard's probe ({@code INFO}, {@code TIME}). */
  static boolean probeRefused(NodeFacts f) {
    return f.refused().contains("info") || f.refused().contains("time");
  }

  static boolean persistsEveryWrite(NodeFacts f) {
    return "yes".equals(f.appendonly()) && "always".equals(f.appendfsync());
  }

  /** What the restart guard makes of the node: the library's own judgement ({@link NodeHistory}). */
  static String guardState(NodeFacts f, RedlockConfig config) {
    if (!config.restartGuard()) {
      return "off";
    }
    if (probeRefused(f)) {
      return "never (probe refused)";
    }
    NodeHistory history = f.history();
    if (history == null) {
      return "?";
    }
    if (history.countsAtOnce()) {
      return "counts (data known complete"
          + (history.countersTrusted() ? "" : ", not for fencing")
          + ")";
    }
    Duration window = config.restartGuardWindow();
    Duration seen = history.seenFor().orElse(null);
    if (seen == null) {
      return "held back (not seen by a client yet)";
    }
    return (seen.compareTo(window) >= 0 ? "counts (seen for " : "held back (seen for ")
        + DurationConverter.format(seen)
        + (seen.compareTo(window) >= 0 ? "" : " of " + DurationConverter.format(window))
        + (history.countersTrusted() ? "" : "; out of fencing")
        + ")";
  }

  static String persistence(NodeFacts f) {
    if (f.appendonly() == null) {
      return "unknown (CONFIG GET refused): the guard waits out restarts";
    }
    if (persistsEveryWrite(f)) {
      return "AOF always: a restart that a running client watches keeps its data trusted";
    }
    return "appendonly "
        + f.appendonly()
        + ", appendfsync "
        + f.appendfsync()
        + (f.rewrittenSinceStart() ? ", AOF rewritten" : "")
        + ": the guard holds a restarted node back for max-ttl";
  }

  private List<NodeFacts> examineAll(ConnectionOptions.Settings settings)
      throws InterruptedException {
    Duration timeout = settings.connectTimeout();
    return InspectionClient.lookAtAll(
        settings.nodes(),
        "redlock-doctor",
        timeout.multipliedBy(3).plus(RATE_BASELINE),
        (node, resources) -> examine(node, settings, resources, timeout),
        node -> unreachable(StatusCommand.displayName(node), "no answer in time"));
  }

  private static NodeFacts unreachable(String node, String error) {
    return new NodeFacts(
        node, error, null, null, null, null, null, null, false, null, null, null, null, null, null,
        null, List.of(), null);
  }

  /** Asks one node everything doctor needs; never throws. */
  static NodeFacts examine(
      String node,
      ConnectionOptions.Settings settings,
      ClientResources resources,
      Duration timeout) {
    String name = StatusCommand.displayName(node);
    RedisURI uri;
    try {
      uri = InspectionClient.uri(node, settings, timeout);
    } catch (IllegalArgumentException e) {
      return unreachable(name, "not a Redis URI");
    }
    RedisClient client = InspectionClient.client(resources, timeout, settings.tls());
    try (StatefulRedisConnection<String, String> connection =
        client.connect(StringCodec.UTF8, uri)) {
      RedisCommands<String, String> redis = connection.sync();
      List<String> refused = new ArrayList<>();
      // What the node says about itself, as the restart guard reads it: role, version, run id,
      // uptime, fresh marker, persistence (unknown without CONFIG GET), memory.
      NodeInfo info = null;
      Identity identity = null;
      try {
        info = InspectionClient.nodeInfo(node, settings, resources, timeout);
        identity = new Identity(info.role(), info.version(), info.runId(), info.uptimeSeconds());
      } catch (IllegalStateException e) {
        String why = InspectionClient.oneLine(e);
        if (why.toLowerCase(Locale.ROOT).contains("'time'")) {
          // The guard's read needs TIME as well as INFO: with TIME alone refused (the clock
          // check below names it), INFO still says what the node is.
          identity = identityFromInfo(redis);
        } else {
          // else not a refusal (a timeout, LOADING): what the node is stays unknown
          addIfRefused(refused, e, "info");
        }
      }
      NodeInfo.Persistence persistence = info == null ? null : info.persistence();
      // The guard's read leaves the memory unknown when its INFO memory fails (it is optional
      // there); doctor asks again on its own connection rather than leave eviction unchecked.
      NodeInfo.Memory memory =
          info != null && info.memory() != null
              ? info.memory()
              : identity != null ? memoryOf(redis) : null;
      Long offset = null;
      Double excess = null;
      Double uncertainty = null;
      long bestRoundTrip = Long.MAX_VALUE;
      try {
        long[] first = readClock(redis);
        bestRoundTrip = first[2];
        offset = (first[0] / 1_000 - first[3]);
        Thread.sleep(RATE_BASELINE.toMillis());
        long[] second = readClock(redis);
        bestRoundTrip = Math.min(bestRoundTrip, second[2]);
        double local = second[1] - first[1];
        excess = ((second[0] - first[0]) * 1_000.0 - local) / local;
        uncertainty = (first[2] / 2.0 + second[2] / 2.0) / local;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        addIfRefused(refused, e, "time"); // a slow TIME is no refusal
      }
      for (int i = 0; i < 5; i++) {
        long sent = System.nanoTime();
        redis.ping();
        bestRoundTrip = Math.min(bestRoundTrip, System.nanoTime() - sent);
      }
      refused.addAll(refusedScriptCommands(redis, settings.keyPrefix()));
      MaxTtlRegister register = null;
      try {
        String stored = redis.get(FreshMarker.maxTtlKey(settings.keyPrefix()));
        if (stored != null) {
          register = MaxTtlRegister.read(stored, readClock(redis)[0] / 1_000);
        }
      } catch (RuntimeException e) {
        // GET or TIME refused: named above; the register is left unknown
      }
      return new NodeFacts(
          name,
          null,
          identity == null || identity.role() == null ? "?" : identity.role(),
          identity == null || identity.version() == null ? "?" : identity.version(),
          identity == null ? null : identity.runId(),
          identity == null ? null : identity.uptimeSeconds(),
          persistence == null ? null : persistence.aofEnabled() ? "yes" : "no",
          persistence == null ? null : persistence.appendfsync(),
          persistence != null && persistence.rewrittenSinceStart(),
          memory == null ? null : memory.maxmemory(),
          memory == null ? null : memory.policy(),
          info == null ? null : info.marker(),
          offset,
          excess,
          uncertainty,
          bestRoundTrip == Long.MAX_VALUE ? null : bestRoundTrip / 1_000,
          List.copyOf(refused),
          register,
          info == null ? null : NodeHistory.of(info));
    } catch (RuntimeException e) {
      return unreachable(name, InspectionClient.oneLine(e));
    } finally {
      client.shutdown(0, 1, TimeUnit.SECONDS);
    }
  }

  /** What a node is: role, version, run id and uptime, each {@code null} where not read. */
  private record Identity(String role, String version, String runId, Long uptimeSeconds) {}

  /**
   * The node's identity from {@code INFO server} and {@code INFO replication} alone, for a node
   * that refuses {@code TIME} (which the restart guard's read needs too); {@code null} if
   * {@code INFO} is refused as well.
   */
  private static Identity identityFromInfo(RedisCommands<String, String> redis) {
    try {
      String server = redis.info("server");
      String replication = redis.info("replication");
      String uptime = infoField(server, "uptime_in_seconds");
      Long uptimeSeconds = null;
      if (uptime != null) {
        try {
          uptimeSeconds = Long.parseLong(uptime);
        } catch (NumberFormatException e) {
          // left unknown
        }
      }
      return new Identity(
          infoField(replication, "role"),
          NodeInfo.serverVersion(server),
          infoField(server, "run_id"),
          uptimeSeconds);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * {@code maxmemory} and its policy by {@code INFO memory}, else by {@code CONFIG GET}; {@code
   * null} if neither answers with numbers.
   */
  private static NodeInfo.Memory memoryOf(RedisCommands<String, String> redis) {
    try {
      String info = redis.info("memory");
      String maxmemory = infoField(info, "maxmemory");
      String policy = infoField(info, "maxmemory_policy");
      if (maxmemory != null && policy != null) {
        return new NodeInfo.Memory(Long.parseLong(maxmemory), policy);
      }
    } catch (RuntimeException e) {
      // refused, not answered or not a number: CONFIG GET may still say
    }
    try {
      String maxmemory = redis.configGet("maxmemory").get("maxmemory");
      String policy = redis.configGet("maxmemory-policy").get("maxmemory-policy");
      return maxmemory == null || policy == null
          ? null
          : new NodeInfo.Memory(Long.parseLong(maxmemory), policy);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The value of {@code field} in an {@code INFO} section's text, or {@code null}. */
  static String infoField(String info, String field) {
    if (info == null) {
      return null;
    }
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(field + ":")) {
        return line.substring(field.length() + 1).strip();
      }
    }
    return null;
  }

  /** {@code TIME}: {node micros, local nanos at the midpoint, round trip nanos, wall millis}. */
  private static long[] readClock(RedisCommands<String, String> redis) {
    long wall = System.currentTimeMillis();
    long sent = System.nanoTime();
    List<String> time = redis.time();
    long received = System.nanoTime();
    long micros = Long.parseLong(time.get(0)) * 1_000_000L + Long.parseLong(time.get(1));
    return new long[] {
      micros, sent + (received - sent) / 2, received - sent, wall + (received - sent) / 2_000_000
    };
  }

  /**
   * Runs what the library's requests run, on a key of doctor's own, and returns the commands
   * the node refused (NOPERM).
   */
  private static List<String> refusedScriptCommands(
      RedisCommands<String, String> redis, String keyPrefix) {
    List<String> refused = new ArrayList<>();
    String key = keyPrefix + "__redlock__:doctor";
    try {
      redis.set(key, "doctor", SetArgs.Builder.nx().px(5_000));
    } catch (RuntimeException e) {
      addIfRefused(refused, e, "set");
    }
    for (String command : List.of("get", "exists", "pexpire", "del")) {
      String script =
          "return redis.call('"
              + command
              + "', KEYS[1]"
              + (command.equals("pexpire") ? ", 5000" : "")
              + ")";
      try {
        // GET answers a value, the others a number: the output type must fit, or the client
        // fails to decode the reply (an UnsupportedOperationException that reads as a refusal)
        redis.eval(
            script, command.equals("get") ? ScriptOutputType.VALUE : ScriptOutputType.INTEGER, key);
      } catch (RuntimeException e) {
        String name = refusedByScript(command, e);
        if (name != null) {
          refused.add(name);
        }
      }
    }
    try {
      redis.evalsha("0000000000000000000000000000000000000000", ScriptOutputType.VALUE, key);
    } catch (RuntimeException e) {
      addIfRefused(refused, e, "evalsha"); // NOSCRIPT means it is allowed
    }
    try {
      redis.scriptLoad("return 1"); // a script that touches nothing; caching it is harmless
    } catch (RuntimeException e) {
      addIfRefused(refused, e, "script|load");
    }
    try {
      redis.del(key);
    } catch (RuntimeException e) {
      // the key expires by itself
    }
    return refused.stream().distinct().toList();
  }

  private static void addIfRefused(List<String> refused, RuntimeException e, String command) {
    if (isRefused(e)) {
      refused.add(command);
    }
  }

  /** The library's own rule ({@link io.redlock.spi.Refusals}): doctor never judges apart. */
  private static boolean isRefused(RuntimeException e) {
    return io.redlock.spi.Refusals.isRefusal(e);
  }

  /**
   * What a refusal of a script that runs only {@code command} refused: {@code "eval"} when the
   * node refused EVAL itself ({@code NOPERM ... 'eval' ...}), else {@code command}, denied inside
   * the script in whatever words the server uses (Redis 6.2 and 7.0 {@code "... can't run this
   * command or subcommand"}, which does not name it; Redis 7.2 and Valkey {@code "ERR ACL
   * failure in script: ... the 'pexpire' command"}); {@code null} when {@code error} is no
   * refusal ({@link io.redlock.spi.Refusals}).
   */
  static String refusedByScript(String command, RuntimeException error) {
    if (!isRefused(error)) {
      return null;
    }
    return InspectionClient.oneLine(error).toLowerCase(Locale.ROOT).contains("'eval'")
        ? "eval"
        : command;
  }

  private static void print(
      PrintWriter out, List<NodeFacts> facts, Verdict verdict, RedlockConfig config) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "NODE",
          "REACHABLE",
          "ROLE",
          "VERSION",
          "UPTIME",
          "GUARD",
          "RTT",
          "CLOCK",
          "EVICTION",
          "PERSISTENCE",
          "REGISTER",
          "CLUSTER"
        });
    for (NodeFacts f : facts) {
      if (!f.reachable()) {
        rows.add(
            new String[] {
              f.node(), "no: " + f.error(), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"
            });
        continue;
      }
      rows.add(
          new String[] {
            f.node(),
            "yes",
            f.role(),
            f.version(),
            f.uptimeSeconds() == null ? "?" : f.uptimeSeconds() + "s",
            guardState(f, config),
            f.roundTripMicros() == null
                ? "?"
                : String.format(Locale.ROOT, "%.2fms", f.roundTripMicros() / 1_000.0),
            f.rateExcess() == null
                ? "?"
                : String.format(
                    Locale.ROOT, "%+dms %+.3f%%", f.offsetMillis(), 100 * f.rateExcess()),
            f.maxmemoryPolicy() == null
                ? "?"
                : "maxmemory " + f.maxmemory() + " " + f.maxmemoryPolicy(),
            persistence(f),
            register(f),
            f.history() == null ? "?" : f.history().cluster().orElse("-")
          });
    }
    InspectionClient.printColumns(out, rows);
    for (Finding finding : verdict.findings()) {
      out.println(
          finding.severity()
              + " "
              + finding.node()
              + " "
              + finding.check()
              + ": "
              + finding.text());
    }
    out.println(
        "verdict: "
            + verdictWord(verdict)
            + " ("
            + verdict.reachable()
            + " of "
            + verdict.nodes()
            + " node(s) answered)");
  }

  /**
   * The max-ttl register's longest live value and how long it lasts if no client raises it
   * again, for the table: {@code 60s (lapses in 64.8s)}; {@code -} if the node holds none.
   */
  static String register(NodeFacts f) {
    if (f.register() == null) {
      return "-";
    }
    return String.format(
        Locale.ROOT,
        "%s (lapses in %s)",
        seconds(f.register().maxTtlMillis()),
        f.register().remainingMillis() < 0
            ? "never: written without expiry"
            : seconds(f.register().remainingMillis()));
  }

  private static String seconds(long millis) {
    return millis % 1_000 == 0
        ? millis / 1_000 + "s"
        : String.format(Locale.ROOT, "%.1fs", millis / 1_000.0);
  }

  static String verdictWord(Verdict verdict) {
    return switch (verdict.exitCode()) {
      case ExitCodes.OK -> "healthy";
      case ExitCodes.VIOLATION -> "safety problem";
      default -> "cannot run: fewer than a majority answered";
    };
  }

  static String toJson(List<NodeFacts> facts, Verdict verdict) {
    StringBuilder json =
        new StringBuilder("{\"verdict\":")
            .append(quote(verdictWord(verdict)))
            .append(",\"exitCode\":")
            .append(verdict.exitCode())
            .append(",\"nodes\":[");
    for (int i = 0; i < facts.size(); i++) {
      NodeFacts f = facts.get(i);
      json.append(i == 0 ? "" : ",")
          .append("{\"node\":")
          .append(quote(f.node()))
          .append(",\"reachable\":")
          .append(f.reachable())
          .append(",\"error\":")
          .append(quote(f.error()))
          .append(",\"role\":")
          .append(quote(f.role()))
          .append(",\"version\":")
          .append(quote(f.version()))
          .append(",\"runId\":")
          .append(quote(f.runId()))
          .append(",\"uptimeSeconds\":")
          .append(f.uptimeSeconds())
          .append(",\"appendonly\":")
          .append(quote(f.appendonly()))
          .append(",\"appendfsync\":")
          .append(quote(f.appendfsync()))
          .append(",\"maxmemory\":")
          .append(f.maxmemory())
          .append(",\"maxmemoryPolicy\":")
          .append(quote(f.maxmemoryPolicy()))
          .append(",\"freshMarker\":")
          .append(f.marker() != null)
          .append(",\"clockOffsetMillis\":")
          .append(f.offsetMillis())
          .append(",\"clockRateExcess\":")
          .append(f.rateExcess())
          .append(",\"roundTripMicros\":")
          .append(f.roundTripMicros())
          .append(",\"maxTtlRegister\":")
          .append(
              f.register() == null
                  ? "null"
                  : "{\"maxTtlMillis\":"
                      + f.register().maxTtlMillis()
                      + ",\"remainingMillis\":"
                      + f.register().remainingMillis()
                      + "}")
          .append(",\"refused\":[");
      for (int r = 0; r < f.refused().size(); r++) {
        json.append(r == 0 ? "" : ",").append(quote(f.refused().get(r)));
      }
      json.append("]}");
    }
    json.append("],\"findings\":[");
    for (int i = 0; i < verdict.findings().size(); i++) {
      Finding finding = verdict.findings().get(i);
      json.append(i == 0 ? "" : ",")
          .append("{\"node\":")
          .append(quote(finding.node()))
          .append(",\"severity\":")
          .append(quote(finding.severity().name()))
          .append(",\"check\":")
          .append(quote(finding.check()))
          .append(",\"text\":")
          .append(quote(finding.text()))
          .append('}');
    }
    return json.append("]}").toString();
  }

  private static String quote(String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder quoted = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (c < 0x20) {
            quoted.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    return quoted.append('"').toString();
  }
}
