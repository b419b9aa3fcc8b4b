package dev.gpudf.bench;

import dev.gpudf.columnar.RootBatches;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;

/** Arrow tables into DuckDB, the peer engine of the benchmarks and of answer checks, through the Arrow C stream interface. */
public final class DuckDbTables {
  private DuckDbTables() {}

  /** Copies {@code root} (which the caller keeps) into a new DuckDB table {@code name}. */
  public static void load(DuckDBConnection duck, BufferAllocator allocator, String name, VectorSchemaRoot root)
      throws SQLException {
    load(duck, allocator, name, root, rows -> { });
  }

  /** {@link #load(DuckDBConnection, BufferAllocator, String, VectorSchemaRoot)}, telling {@code progress} of each batch's rows as DuckDB takes it. */
  public static void load(DuckDBConnection duck, BufferAllocator allocator, String name, VectorSchemaRoot root,
      java.util.function.LongConsumer progress) throws SQLException {
    copy(duck, allocator, name, root, true, progress);
  }

  /** Appends the rows of {@code root} (which the caller keeps) to DuckDB table {@code name}, which {@link #load} made. */
  public static void append(DuckDBConnection duck, BufferAllocator allocator, String name, VectorSchemaRoot root)
      throws SQLException {
    copy(duck, allocator, name, root, false, rows -> { });
  }

  private static void copy(DuckDBConnection duck, BufferAllocator allocator, String name, VectorSchemaRoot root, boolean create,
      java.util.function.LongConsumer progress) throws SQLException {
    // DuckDB scans a stream's batches on as many threads as there are batches: a part of a few
    // million rows goes in as several batches a core, a whole table in batches of up to 1M rows
    int batch = (int) Math.max(1 << 16, Math.min(1 << 20, root.getRowCount() / (4L * Runtime.getRuntime().availableProcessors())));
    try (RootBatches reader = new RootBatches(allocator, root, batch, progress::accept);
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, reader, stream);
      duck.registerArrowStream("arrow_" + name, stream);
      try (Statement st = duck.createStatement()) {
        st.execute(create ? "CREATE TABLE " + name + " AS SELECT * FROM arrow_" + name
            : "INSERT INTO " + name + " SELECT * FROM arrow_" + name);
        st.execute("DROP VIEW IF EXISTS arrow_" + name);
      }
    } catch (IOException e) {
      throw new SQLException("cannot export " + name + " to DuckDB", e);
    }
  }
}
