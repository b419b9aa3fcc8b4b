package dev.gpudf.cli;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code gpudf sql}: one statement, or an interactive shell without one (line editing and history
 * by JLine, statements ending at {@code ;}, aligned results and timing), in-process over a
 * directory of tables or against a gpudf Flight SQL server.
 */
@Command(name = "sql", description = "Run SQL over the tables of a directory (*.arrow, *.parquet, *.csv) or against a "
    + "gpudf server; without a statement, an interactive shell")
final class SqlCommand implements Callable<Integer> {
  @picocli.CommandLine.Mixin
  ClientTls trust;

  @Spec
  CommandSpec spec;

  @Option(names = "--path", description = "Directory whose files are the tables (in-process)")
  Path path;

  @Option(names = "--server", description = "A gpudf Flight SQL server: grpc://host:port or grpc+tls://host:port")
  String server;

  @Option(names = "--user", description = "User name for --server")
  String user;

  @Option(names = "--password", description = "Password for --server (default: the GPUDF_PASSWORD environment variable)")
  String password;

  @Option(names = "--backend", defaultValue = "auto", description = "cpu, gpu, or auto (the GPU when one is usable; default)")
  String backend;

  @Option(names = "--explain", description = "Print the physical plan instead of running the statement")
  boolean explain;

  @Option(names = {"-f", "--file"}, description = "A file of statements, each ended by ';', run in order; the first "
      + "that fails stops the run")
  Path file;

  @Option(names = "--timings", description = "Print where the time went: the start-up (the JVM and command line, the "
      + "device, the session, opening the tables) and each query's plan, execute and transfer")
  boolean timings;

  @Parameters(index = "0", arity = "0..1", description = "The SQL statement (none: an interactive shell); it may start with a "
      + "-- comment")
  String sql;

  @Override
  public Integer call() throws Exception {
    if (server != null && path != null) {
      throw new UserException("--path and --server exclude each other");
    }
    if (server == null && path == null && sql != null) {
      throw new UserException("a statement needs --path DIR or --server URI");
    }
    if (notAStatement() != null) {
      throw new UserException("Unknown option: '" + sql + "'");
    }
    if (sql != null && file != null) {
      throw new UserException("a statement and --file exclude each other");
    }
    String pw = password != null ? password : System.getenv("GPUDF_PASSWORD");
    // from the JVM's start to here: the JVM, its class loading and the command line's parsing
    long jvmMs = System.currentTimeMillis() - java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    long t0 = System.nanoTime();
    try (SqlTarget target = server != null ? SqlTarget.remote(server, user, pw, trust) : SqlTarget.local(path, backend)) {
      PrintWriter out = spec.commandLine().getOut();
      if (timings) {
        String phases = target.startup();
        out.printf(java.util.Locale.ROOT, "(start-up %.1f ms: JVM and command line %d, %s %.1f ms%s)%n",
            jvmMs + (System.nanoTime() - t0) / 1e6, jvmMs, server != null ? "connecting" : "opening",
            (System.nanoTime() - t0) / 1e6, phases == null ? "" : ": " + phases);
      }
      if (file != null) {
        return script(target, file, out, timings);
      }
      if (sql == null) {
        return shell(target, System.in, System.out, timings);
      }
      return statements(target, null, sql, out, timings, explain);
    }
  }

  /**
   * Runs the statements of {@code file} in order, printing each one's outcome; the first that fails
   * stops the run, and its error names its number and line.
   */
  static int script(SqlTarget target, Path file, PrintWriter out, boolean timings) {
    String text;
    try {
      text = java.nio.file.Files.readString(file);
    } catch (java.io.IOException e) {
      throw new UserException("cannot read " + file + ": " + e.getMessage(), e);
    }
    return statements(target, file.getFileName().toString(), text, out, timings, false);
  }

  /**
   * Runs (or with {@code explain} explains) the statements of {@code text} in order, printing each
   * one's outcome; the first that fails stops the run. A statement argument is split as a file is,
   * so that one pasted with its closing ';' runs, as several do; its error names the statement by
   * number and line when there are several, and the file ({@code source}) when there is one.
   */
  private static int statements(SqlTarget target, String source, String text, PrintWriter out, boolean timings,
      boolean explain) {
    List<SqlScript.Statement> statements = SqlScript.split(text);
    if (statements.isEmpty() && source == null) {
      throw new UserException("the statement is empty");
    }
    for (int i = 0; i < statements.size(); i++) {
      SqlScript.Statement st = statements.get(i);
      String where = source == null && statements.size() == 1 ? ""
          : (source == null ? "" : source + ", ") + "statement " + (i + 1) + " (line " + st.line() + "): ";
      try {
        out.print(explain ? target.explain(st.sql()) : run(target, st.sql(), timings));
        out.flush();
      } catch (UserException e) {
        throw where.isEmpty() ? e : new UserException(where + e.getMessage(), e);
      } catch (NotSupportedException e) {
        throw where.isEmpty() ? e : new NotSupportedException(where + e.getMessage(), e);
      }
    }
    return 0;
  }

  /** The statement argument when it is an unknown option rather than a statement (one may start with a -- comment), else null. */
  String notAStatement() {
    return sql != null && sql.startsWith("-") && !sql.matches("(?s)--\\s.*") ? sql : null;
  }

  /** Runs {@code statement}: its output and a line of its time (split, with {@code timings}, where known). */
  private static String run(SqlTarget target, String statement, boolean timings) {
    long t0 = System.nanoTime();
    String text = target.run(statement);
    String split = timings ? target.lastSplit() : null;
    return text.substring(0, text.length() - 2) + String.format(java.util.Locale.ROOT, ", %.1f ms, %s%s)%n",
        (System.nanoTime() - t0) / 1e6, target.label(), split == null ? "" : "; " + split);
  }

  /** Where the shell's lines come from: JLine on a console, plain lines from a pipe; null at the end. */
  private interface Lines {
    String read(String prompt) throws java.io.IOException;
  }

  /**
   * Reads statements until end of input or {@code exit}; a failed statement prints its error and
   * the shell goes on. On a console JLine edits lines and keeps history in {@code ~/.gpudf_history};
   * from a pipe, lines are read as they come and no prompts are printed.
   */
  static int shell(SqlTarget target, InputStream in, OutputStream outStream, boolean timings) throws Exception {
    boolean console = in == System.in && System.console() != null;
    PrintWriter out;
    Lines lines;
    Terminal terminal = null;
    if (console) {
      terminal = TerminalBuilder.builder().system(true).build();
      LineReader reader = LineReaderBuilder.builder().terminal(terminal)
          .variable(LineReader.HISTORY_FILE, Path.of(System.getProperty("user.home"), ".gpudf_history")).build();
      out = terminal.writer();
      lines = prompt -> {
        while (true) {
          try {
            return reader.readLine(prompt);
          } catch (UserInterruptException e) {
            // Ctrl-C drops the line being typed
          } catch (EndOfFileException e) {
            return null;
          }
        }
      };
    } else {
      java.io.BufferedReader reader = new java.io.BufferedReader(
          new java.io.InputStreamReader(in, java.nio.charset.StandardCharsets.UTF_8));
      out = new PrintWriter(new java.io.OutputStreamWriter(outStream, java.nio.charset.StandardCharsets.UTF_8), true);
      lines = prompt -> reader.readLine();
    }
    try {
      out.println("gpudf SQL shell (" + target.label() + "): end statements with ';', 'exit' to leave");
      StringBuilder statement = new StringBuilder();
      String line;
      while ((line = lines.read(statement.length() == 0 ? "gpudf> " : "  ...> ")) != null) {
        String t = line.strip();
        if (statement.length() == 0 && (t.equalsIgnoreCase("exit") || t.equalsIgnoreCase("quit") || t.equals("\\q"))) {
          break;
        }
        statement.append(line).append('\n');
        if (!t.endsWith(";")) {
          continue;
        }
        String sqlText = statement.toString().strip();
        statement.setLength(0);
        try {
          out.print(run(target, sqlText.substring(0, sqlText.length() - 1), timings));
        } catch (UserException | NotSupportedException e) {
          out.println("error: " + e.getMessage());
        }
        out.flush();
      }
      out.flush();
      return 0;
    } finally {
      if (terminal != null) {
        terminal.close();
      }
    }
  }
}
