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
   * The classes a statement's session and planning initialize first, in about the order it needs
   * them; each of the later ones took 2-30 ms of the main thread in a fresh process (Calcite's
   * metadata provider the most), which now runs beside the command line's parsing and the
   * opening of the tables (a one-row query over SF1's directory, 2 cores: 0.61 -> 0.58 s,
   * benchmarks/results/2026-12-05-files-cpu-s41.txt).
   */
  private static final String[] SQL_CLASSES = {"dev.gpudf.sql.GpuSession", "dev.gpudf.sql.Statements",
      "org.apache.arrow.memory.BaseAllocator", "org.apache.calcite.rel.type.TimeFrames",
      "org.apache.calcite.sql.type.SqlTypeCoercionRule", "org.apache.calcite.rex.RexBuilder",
      "org.apache.calcite.rel.metadata.DefaultRelMetadataProvider", "org.apache.calcite.sql2rel.StandardConvertletTable",
      "dev.gpudf.sql.LogicalRules", "dev.gpudf.sql.GpuRules", "dev.gpudf.kernels.StringBuild",
      // Arrow's Schema starts Jackson (30-40 ms), first needed by the result's root
      "org.apache.arrow.vector.types.pojo.Schema"};

  /**
   * Initializes the SQL session's classes (Calcite's parser configuration and operator tables,
   * about 90 ms of a 2-core host's start) on a daemon thread while the command line is parsed
   * on this one; a statement's session then finds them initialized, or waits for the rest.
   */
  private static void initializeSqlSoon() {
    Thread t = new Thread(() -> {
      for (String name : SQL_CLASSES) {
        try {
          Class.forName(name, true, GpudfCli.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
          // the session that needs the class initializes it again, and reports the failure there
          return;
        }
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
