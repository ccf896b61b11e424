package io.redlock.cli;

import io.redlock.InitReport;
import io.redlock.ReadmitReport;
import io.redlock.Redlock;
import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code redlock init}: declares a brand-new cluster fresh ({@link Redlock#init}), so that
 * the restart guard counts its nodes at once instead of one max-ttl after they started.
 */
@Command(
    name = "init",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    header = "Declares a brand-new cluster fresh: its nodes count at once.",
    description = {
      "Writes to each node a marker bound to its current Redis process (run_id), declaring"
          + " that it holds no locks; the restart guard then counts the node at once,"
          + " instead of only once a client has seen it for max-ttl plus drift. A restart breaks the"
          + " binding: the guard applies again.",
      "",
      "A whole-cluster act, for a cluster no client uses: it writes nothing while any node"
          + " holds keys that may be locks (keys under the key prefix, or with no prefix any"
          + " key but the marker), while any node's max-ttl register holds a live entry"
          + " (clients are running, or stopped less than about max-ttl ago), or when it cannot"
          + " rule these out (a node unreachable, or refusing the check). Never run it to bring"
          + " back nodes that restarted: the restart guard does that by itself. --force writes"
          + " to every reachable node without looking."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:every node is marked",
      "1:refused: a node holds keys that may be locks, or clients are running (nothing was"
          + " written)",
      "2:bad arguments, settings or config file",
      "3:could not run, or a node could not be checked or marked (or re-admitted)"
    })
final class InitCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConnectionOptions connection;

  @Option(
      names = "--force",
      description =
          "Write the marker without looking for keys: only when no client holds a" + " lease.")
  boolean force;

  @Option(
      names = "--readmit",
      paramLabel = "<node>",
      description =
          "Instead of declaring the cluster fresh, bring this one node (as in --nodes) back into"
              + " fencing after it lost its counters while a majority did not: once its restart"
              + " guard window has passed, its counters are raised to the largest of the trusted"
              + " nodes' and its process admitted (see docs/fencing.md). Clients may run.")
  String readmit;

  @Override
  public Integer call() {
    ConnectionOptions.Settings settings = connection.resolve();
    RedlockConfig config = connection.build(settings, settings.builder());
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (readmit != null) {
      return readmit(config, out, err);
    }
    InitReport report;
    try {
      report = Redlock.init(config, force);
    } catch (RedlockConfigException e) {
      err.println("redlock init: cannot use the nodes: " + e.getMessage());
      err.flush();
      return ExitCodes.FAILURE;
    }
    boolean holdsKeys = false;
    boolean running = false;
    int marked = 0;
    for (InitReport.NodeResult node : report.nodes()) {
      holdsKeys |= node.outcome() == InitReport.Outcome.HOLDS_KEYS;
      running |= node.outcome() == InitReport.Outcome.CLIENTS_RUNNING;
      marked += node.outcome() == InitReport.Outcome.MARKED ? 1 : 0;
      out.println(node.node() + "  " + describe(node));
    }
    if (report.complete()) {
      out.println(
          "init: every node is declared fresh ("
              + report.nodes().size()
              + " node(s)); each counts at once until it restarts");
      out.flush();
      return ExitCodes.OK;
    }
    out.flush();
    String what =
        marked > 0
            ? marked + " of " + report.nodes().size() + " node(s) marked fresh, the others not"
            : "nothing was declared fresh";
    err.println(
        "redlock init: "
            + (running
                ? "refused: clients are running (a node's max-ttl register holds a live entry);"
                    + " init is for a cluster no client uses; "
                    + what
                : holdsKeys
                    ? "refused: a node holds keys that may be locks; "
                        + what
                        + " (use --force only if no client holds a lease)"
                    : "not every node could be checked and marked; " + what + "; see above"));
    err.flush();
    return holdsKeys || running ? ExitCodes.VIOLATION : ExitCodes.FAILURE;
  }

  private int readmit(RedlockConfig config, PrintWriter out, PrintWriter err) {
    if (force) {
      err.println("redlock init: --force and --readmit do not go together");
      err.flush();
      return ExitCodes.USAGE;
    }
    ReadmitReport report;
    try {
      report = Redlock.readmit(config, readmit);
    } catch (RedlockConfigException e) {
      err.println("redlock init --readmit: " + e.getMessage());
      err.flush();
      return ExitCodes.FAILURE;
    }
    if (report.outcome() == ReadmitReport.Outcome.READMITTED
        || report.outcome() == ReadmitReport.Outcome.ALREADY_TRUSTED) {
      out.println(report.node() + "  " + report.outcome() + ": " + report.detail());
      out.flush();
      return ExitCodes.OK;
    }
    err.println(
        "redlock init --readmit: "
            + report.node()
            + " not re-admitted, nothing written: "
            + report.outcome()
            + " ("
            + report.detail()
            + ")");
    err.flush();
    return ExitCodes.FAILURE;
  }

  private static String describe(InitReport.NodeResult node) {
    return switch (node.outcome()) {
      case MARKED -> "marked fresh (run_id " + node.runId() + ")";
      case HOLDS_KEYS -> "refused: " + node.detail();
      case CLIENTS_RUNNING -> "refused: " + node.detail();
      case UNCHECKED -> "not checked: " + node.detail();
      case NOT_WRITTEN -> "empty, but not marked (another node was refused)";
    };
  }
}
