package io.redlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code redlock} command.
 *
 * <p>Exit codes: 0 success, 1 a safety violation was seen, 2 bad arguments, 3 the command could
 * not run (for instance no redis-server could be started).
 */
@Command(
    name = "redlock",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Redlock, a distributed lock over independent Redis masters.",
    subcommands = {DemoCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:success",
        "1:a safety violation was seen",
        "2:bad arguments",
        "3:the command could not run"})
public final class Main implements Runnable {

  /** Exit code when a safety violation was seen. */
  static final int EXIT_VIOLATION = 1;
  /** Exit code when the command failed to run. */
  static final int EXIT_FAILURE = 3;

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "Missing required subcommand");
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The configured command line, also used by tests to parse without running anything. */
  static CommandLine commandLine() {
    return new CommandLine(new Main())
        .setParameterExceptionHandler(Main::badArguments)
        .setExecutionExceptionHandler(Main::failed);
  }

  /** Bad arguments: one line naming the problem and where to find help, exit 2. */
  private static int badArguments(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
        + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
    err.flush();
    return cmd.getCommandSpec().exitCodeOnInvalidInput();
  }

  /** An unexpected failure while running: one line with the cause, exit 3. */
  private static int failed(Exception e, CommandLine cmd, ParseResult parseResult) {
    PrintWriter err = cmd.getErr();
    err.println(cmd.getCommandSpec().qualifiedName() + ": error: "
        + (e.getMessage() != null ? e.getMessage() : e.toString()));
    err.flush();
    return EXIT_FAILURE;
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
