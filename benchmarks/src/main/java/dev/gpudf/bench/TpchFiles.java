package dev.gpudf.bench;

import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.Statement;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;

/**
 * Writes TPC-H at a scale factor as Parquet files, one a table ({@code DIR/<table>.parquet}), as
 * DuckDB's {@code COPY} writes them (row groups of 122,880 rows, Snappy): the data of the file
 * benchmarks (issue 21) on a host with no network and no DuckDB extension to generate it. Each
 * table is generated on all cores, copied into DuckDB through the Arrow C stream interface,
 * written and dropped, so one table at a time is in memory (SF10's lineitem: about 7 GiB of
 * Arrow and DuckDB's copy of it).
 *
 * <pre>TpchFiles --sf 10 --out DIR</pre>
 */
public final class TpchFiles {
  private TpchFiles() {}

  public static void main(String[] args) throws Exception {
    double sf = 1;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--sf" -> sf = Double.parseDouble(value);
        case "--out" -> out = Path.of(value);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (options: --sf N --out DIR)");
      }
      i++;
    }
    if (out == null || !(sf > 0)) {
      throw new IllegalArgumentException("usage: TpchFiles --sf N --out DIR (a scale above 0)");
    }
    Files.createDirectories(out);
    int cores = Runtime.getRuntime().availableProcessors();
    try (RootAllocator a = new RootAllocator();
        DuckDBConnection duck = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:")) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        long t0 = System.nanoTime();
        long rows;
        try (VectorSchemaRoot r = TpchTables.arrow(a, t, sf, cores, n -> { })) {
          rows = r.getRowCount();
          DuckDbTables.load(duck, a, t.getTableName(), r);
        }
        Path file = out.resolve(t.getTableName() + ".parquet");
        try (Statement st = duck.createStatement()) {
          st.execute("COPY " + t.getTableName() + " TO '" + file.toString().replace("'", "''") + "' (FORMAT parquet)");
          st.execute("DROP TABLE " + t.getTableName());
        }
        System.out.printf(java.util.Locale.ROOT, "%s: %,d rows, %,d bytes of Parquet in %.1f s%n", file, rows, Files.size(file),
            (System.nanoTime() - t0) / 1e9);
      }
    }
  }
}
