package dev.gpudf.cli;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.ResultText;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code gpudf sql}: runs one SQL statement over a directory of Arrow IPC and CSV files and prints the result. */
@Command(name = "sql", description = "Run a SQL query over the *.arrow and *.csv files of a directory")
final class SqlCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--path", required = true, description = "Directory whose *.arrow and *.csv files are the tables")
  Path path;

  @Option(names = "--backend", defaultValue = "auto", description = "cpu, gpu, or auto (the GPU when one is usable; default)")
  String backend;

  @Option(names = "--explain", description = "Print the physical plan instead of running the query")
  boolean explain;

  @Parameters(index = "0", description = "The SQL statement")
  String sql;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    boolean gpu = GpuSession.usesGpu(backend);
    try (RootAllocator allocator = new RootAllocator(); Gpu device = gpu ? Gpu.open(0) : null;
        GpuSession session = gpu ? GpuSession.gpu(device, allocator) : GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(session.catalog(), path, allocator);
      if (explain) {
        out.print(session.explain(sql));
      } else {
        try (VectorSchemaRoot result = session.query(sql)) {
          out.print(ResultText.format(result));
          out.printf("(%d rows, %s backend)%n", result.getRowCount(), gpu ? "gpu" : "cpu");
        }
      }
    }
    out.flush();
    return 0;
  }
}
