package dev.gpudf.cli;

import dev.gpudf.columnar.RootBatches;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.FileTables;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code gpudf load}: files (Arrow IPC, Parquet, CSV) into tables of a running gpudf server by
 * Flight SQL bulk ingest, each file a table named after it unless {@code --table} names one, with
 * a progress bar (rows sent, rows/s, time left) on standard error.
 */
@Command(name = "load", description = "Load *.arrow, *.parquet and *.csv files into a running gpudf server")
final class LoadCommand implements Callable<Integer> {
  @picocli.CommandLine.Mixin
  ClientTls trust;

  private static final int BATCH_ROWS = 64 * 1024;

  @Spec
  CommandSpec spec;

  @Option(names = "--server", required = true, description = "The server: grpc://host:port or grpc+tls://host:port")
  String server;

  @Option(names = "--user", description = "User name")
  String user;

  @Option(names = "--password", description = "Password (default: the GPUDF_PASSWORD environment variable)")
  String password;

  @Option(names = "--table", description = "Table name (one file only; default: the file's name without its extension)")
  String table;

  @Option(names = "--mode", defaultValue = "create", description = "create (fail if the table exists), append, or replace "
      + "(default ${DEFAULT-VALUE}); append and replace create a missing table")
  String mode;

  @Parameters(arity = "1..*", description = "Files to load")
  List<Path> files;

  @Override
  public Integer call() throws Exception {
    if (table != null && files.size() > 1) {
      throw new UserException("--table names the table of one file, not " + files.size());
    }
    TableDefinitionOptions.TableExistsOption ifExists = switch (mode.toLowerCase(Locale.ROOT)) {
      case "create" -> TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL;
      case "append" -> TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND;
      case "replace" -> TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_REPLACE;
      default -> throw new UserException("--mode is create, append or replace, not " + mode);
    };
    TableDefinitionOptions options = TableDefinitionOptions.newBuilder()
        .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE).setIfExists(ifExists).build();
    URI u = URI.create(server);
    boolean tls = "grpc+tls".equals(u.getScheme());
    String pw = password != null ? password : System.getenv("GPUDF_PASSWORD");
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (BufferAllocator allocator = new RootAllocator();
        FlightClient client = trust.connect(allocator, u.getHost(), u.getPort(), tls);
        FlightSqlClient sql = new FlightSqlClient(client)) {
      CallOption[] auth = user == null ? new CallOption[0]
          : new CallOption[] {client.authenticateBasicToken(user, pw).orElseThrow()};
      for (Path f : files) {
        String file = f.getFileName().toString();
        int dot = file.lastIndexOf('.');
        String format = dot < 0 ? "" : file.substring(dot + 1).toLowerCase(Locale.ROOT);
        String name = table != null ? table : dot < 0 ? file : file.substring(0, dot);
        long t0 = System.nanoTime();
        try (VectorSchemaRoot rows = FileTables.read(f, format, allocator)) {
          Bar bar = new Bar(file + " -> " + name, rows.getRowCount(), err);
          long n;
          try (RootBatches batches = new RootBatches(allocator, rows, BATCH_ROWS, bar::advance)) {
            n = sql.executeIngest(batches, new FlightSqlClient.ExecuteIngestOptions(name, options, null, null, Map.of()), auth);
          }
          bar.finish();
          out.printf("%s: %,d rows into %s in %.1f s%n", file, n, name, (System.nanoTime() - t0) / 1e9);
          out.flush();
        } catch (FlightRuntimeException e) {
          throw new UserException(file + ": " + e.status().code() + ": " + e.getMessage(), e);
        } catch (IOException e) {
          throw new UserException("cannot read " + f + ": " + e.getMessage(), e);
        }
      }
    }
    return 0;
  }

  /** A text progress bar, redrawn in place at most ten times a second. */
  static final class Bar {
    private final String what;
    private final long total;
    private final PrintWriter err;
    private final long start = System.nanoTime();
    private long lastDraw;
    private long done;

    Bar(String what, long total, PrintWriter err) {
      this.what = what;
      this.total = Math.max(1, total);
      this.err = err;
    }

    void advance(long rows) {
      done += rows;
      long now = System.nanoTime();
      if (now - lastDraw > 100_000_000L) {
        lastDraw = now;
        draw(now);
      }
    }

    void finish() {
      draw(System.nanoTime());
      err.println();
      err.flush();
    }

    private void draw(long now) {
      double secs = Math.max(1e-9, (now - start) / 1e9);
      double rate = done / secs;
      int filled = (int) (30 * done / total);
      err.printf("\r%s [%s%s] %3d%% %,d rows, %.0f rows/s, %.0f s left", what, "#".repeat(filled), ".".repeat(30 - filled),
          100 * done / total, done, rate, rate > 0 ? (total - done) / rate : 0);
      err.flush();
    }
  }
}
