package dev.gpudf.cli;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code gpudf} command line: {@code info}, {@code sql}, {@code serve} (Flight SQL), {@code load}, {@code user} and {@code health} ({@code bench} is the launcher's, in benchmarks/). */
// help and version options are inherited, so `gpudf serve --help` works as `gpudf --help` does
@Command(name = "gpudf", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT, version = "gpudf 0.1.0-SNAPSHOT",
    description = "GPU dataframe and SQL engine for the JVM on Apache Arrow",
    subcommands = {InfoCommand.class, SqlCommand.class, ServeCommand.class, LoadCommand.class, UserCommand.class,
        HealthCommand.class})
public final class GpudfCli {
  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("sql")) {
      initializeSqlSoon();
    }
    System.exit(commandLine().execute(args));
  }

  /**
   * Initializes the SQL session's classes (Calcite's parser configuration and operator tables,
   * about 90 ms of a 2-core host's start) on a daemon thread while the command line is parsed
   * on this one; a statement's session then finds them initialized, or waits for the rest.
   */
  private static void initializeSqlSoon() {
    Thread t = new Thread(() -> {
      try {
        Class.forName("dev.gpudf.sql.GpuSession", true, GpudfCli.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        // the session that needs the class initializes it again, and reports the failure there
        return;
      }
    }, "gpudf-sql-init");
    t.setDaemon(true);
    t.start();
  }

  /**
   * The command line with its error handling: a user error or an unsupported feature prints its
   * message and exits with status 1; anything else is a bug and keeps its stack trace.
   */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new GpudfCli());
    // a statement pasted as it was written may start with a -- comment; SqlCommand still rejects
    // an unknown option that is not one
    CommandLine sql = cli.getSubcommands().get("sql");
    sql.setUnmatchedOptionsArePositionalParams(true);
    CommandLine.IParameterExceptionHandler usual = cli.getParameterExceptionHandler();
    cli.setParameterExceptionHandler((ex, args) -> {
      // a misspelt option followed by its value: name the option, not the value left over
      String unknown = ex.getCommandLine() == sql ? ((SqlCommand) sql.getCommand()).notAStatement() : null;
      if (unknown != null) {
        ex.getCommandLine().getErr().println("error: Unknown option: '" + unknown + "'");
        return 2;
      }
      return usual.handleParseException(ex, args);
    });
    cli.setExecutionExceptionHandler((e, line, parsed) -> {
      if (e instanceof UserException || e instanceof NotSupportedException) {
        line.getErr().println("error: " + e.getMessage());
        return 1;
      }
      throw e;
    });
    return cli;
  }
}
