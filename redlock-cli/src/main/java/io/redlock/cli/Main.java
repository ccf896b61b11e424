package io.redlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.UsageMessageSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code redlock} command.
 *
 * <p>Exit codes (see {@link ExitCodes}): 0 success, 1 a safety violation was seen (demo), 2 bad
 * arguments, 3 the command could not run; {@code exec} adds its own (73, 74, 126, 127, the
 * command's status).
 */
@Command(
    name = "redlock",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Redlock, a distributed lock over independent Redis masters.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success",
      "1:a safety violation was seen",
      "2:bad arguments",
      "3:the command could not run",
      "73, 74, ...:see 'redlock exec --help'"
    },
    footerHeading = "%nBash completion:%n",
    footer = {
      "  ./redlock generate-completion > redlock_completion",
      "  source redlock_completion"
    })
public final class Main implements Runnable {

  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "Missing required subcommand");
  }

  /** The subcommands, in the order help lists them. */
  private static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

  private static Map<String, Supplier<Object>> subcommands() {
    Map<String, Supplier<Object>> all = new LinkedHashMap<>();
    all.put("exec", ExecCommand::new);
    all.put("status", StatusCommand::new);
    all.put("init", InitCommand::new);
    all.put("doctor", DoctorCommand::new);
    all.put("demo", DemoCommand::new);
    all.put("torture", TortureCommand::new);
    all.put("generate-completion", AutoComplete.GenerateCompletion::new);
    return all;
  }

  public static void main(String[] args) {
    oneShotDefaults(args, System.getProperties());
    if (args.length > 0 && args[0].equals("exec")) {
      WarmUp.begin();
    }
    int status = commandLine(args).execute(args);
    WarmUp.settle(5_000);
    System.exit(status);
  }

  /** The subcommands that drive many clients for a while: they keep the libraries' defaults. */
  private static final Set<String> LONG_RUNNING = Set.of("demo", "torture");

  /**
   * Start-up defaults for a one-shot run (every subcommand but {@code demo} and {@code
   * torture}): such a run connects, takes or inspects a lock or two, and exits, so Netty's
   * pooling allocator and Lettuce's JFR events cost more at start (the first chunk's
   * allocation; event classes generated and registered on first use, on the calling thread and
   * on the event loops) than they save in the run. Measured on three local nodes, {@code
   * redlock exec --no-wait r1 true}: about 0.1 s of wall time and 0.15 s of CPU less (see
   * docs/performance.md, "The command line's fixed cost, and class-data sharing"). A property
   * already set, on the command line or in {@code JAVA_TOOL_OPTIONS}, is kept. Must run before
   * any Netty or Lettuce class is initialized: both read these once.
   */
  static void oneShotDefaults(String[] args, Properties properties) {
    if (args.length > 0 && LONG_RUNNING.contains(args[0])) {
      return;
    }
    properties.putIfAbsent("io.netty.allocator.type", "unpooled");
    properties.putIfAbsent("io.lettuce.core.jfr", "false");
  }

  /**
   * The configured command line with every subcommand, also used by tests (and the docs'
   * checks) to parse without running anything.
   */
  public static CommandLine commandLine() {
    return commandLine(new String[0]);
  }

  /**
   * The command line for {@code args}: when they start with a subcommand's name, only that
   * subcommand is built. picocli builds each subcommand's model by reflection when it is added,
   * and a one-shot {@code redlock exec} need not pay for the six others; anything else (help,
   * a mistyped name, no subcommand, {@code generate-completion}) gets all of them.
   */
  static CommandLine commandLine(String[] args) {
    CommandLine commandLine =
        new CommandLine(new Main())
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setParameterExceptionHandler(Main::badArguments)
            .setExecutionExceptionHandler(Main::failed);
    // generate-completion describes every subcommand: it needs them all.
    boolean one =
        args.length > 0
            && SUBCOMMANDS.containsKey(args[0])
            && !args[0].equals("generate-completion");
    for (Map.Entry<String, Supplier<Object>> sub : SUBCOMMANDS.entrySet()) {
      if (!one || sub.getKey().equals(args[0])) {
        commandLine.addSubcommand(sub.getKey(), sub.getValue().get());
      }
    }
    CommandLine exec = commandLine.getSubcommands().get("exec");
    if (exec != null) {
      // exec: every word after RESOURCE belongs to the command, even "-l" or "--help".
      exec.setStopAtPositional(true);
    }
    CommandLine completion = commandLine.getSubcommands().get("generate-completion");
    if (completion != null) {
      describeCompletion(completion.getCommandSpec());
    }
    return commandLine;
  }

  /** picocli's own completion command, described and versioned as a redlock command. */
  private static void describeCompletion(CommandSpec completion) {
    completion.version("redlock " + Version.version());
    UsageMessageSpec usage = completion.usageMessage();
    usage.description(
        "Prints a bash completion script for redlock (zsh can use it too, after"
            + " 'autoload -U +X bashcompinit && bashcompinit'): subcommands and options of"
            + " 'redlock', typed as 'redlock' (on the PATH) or as a path such as './redlock'.",
        "",
        "To use it in the current shell:",
        "",
        "  ./redlock generate-completion > redlock_completion",
        "  source redlock_completion",
        "",
        "To have it in every shell, source that file from ~/.bashrc, or copy it into"
            + " /etc/bash_completion.d/.");
    Map<String, String> exitCodes = new LinkedHashMap<>();
    exitCodes.put("0", "the script was printed");
    exitCodes.put("2", "bad arguments");
    usage.exitCodeListHeading("%nExit codes:%n");
    usage.exitCodeList(exitCodes);
  }

  /** Bad arguments: one line naming the problem and where to find help, exit 2. */
  private static int badArguments(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(
        cmd.getCommandSpec().qualifiedName()
            + ": "
            + e.getMessage()
            + " (see '"
            + cmd.getCommandSpec().qualifiedName()
            + " --help')");
    err.flush();
    return cmd.getCommandSpec().exitCodeOnInvalidInput();
  }

  /** An unexpected failure while running: one line with the cause, exit 3. */
  private static int failed(Exception e, CommandLine cmd, ParseResult parseResult) {
    PrintWriter err = cmd.getErr();
    err.println(
        cmd.getCommandSpec().qualifiedName()
            + ": error: "
            + (e.getMessage() != null ? e.getMessage() : e.toString()));
    err.flush();
    return ExitCodes.FAILURE;
  }

  /** Reads the version that the build wrote into {@code version.properties}. */
  static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"redlock " + version()};
    }

    static String version() {
      try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
        if (in != null) {
          Properties properties = new Properties();
          properties.load(in);
          return properties.getProperty("version", "unknown");
        }
      } catch (IOException e) {
        // fall through
      }
      return "unknown";
    }
  }
}
