package dev.gpudf.bench;

import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.Statement;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;

/**
 * Writes TPC-H at a scale factor as Parquet files, one a table ({@code DIR/<table>.parquet}), as
 * DuckDB's {@code COPY} writes them (row groups of 122,880 rows, Snappy): the data of the file
 * benchmarks (issue 21) on a host with no network and no DuckDB extension to generate it. Each
 * table is generated in parts on all cores, each part appended to DuckDB's copy through the
 * Arrow C stream interface and freed; the table is then written and dropped, so one table at a
 * time is in DuckDB's memory and a few parts in Arrow's. A table's file is written under a
 * temporary name and renamed into place, and a table whose file is there already is kept: a
 * scale whose tables do not all fit one device call's time (SF100's lineitem alone takes most of
 * one) is written over several calls, {@code --tables} naming each call's.
 *
 * <pre>TpchFiles --sf 10 --out DIR [--tables lineitem,orders]</pre>
 */
public final class TpchFiles {
  private TpchFiles() {}

  public static void main(String[] args) throws Exception {
    double sf = 1;
    Path out = null;
    java.util.Set<String> tables = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      if (value == null) {
        throw new IllegalArgumentException(args[i] + " needs a value (options: --sf N --out DIR [--tables a,b])");
      }
      switch (args[i]) {
        case "--sf" -> sf = Double.parseDouble(value);
        case "--out" -> out = Path.of(value);
        case "--tables" -> tables = new java.util.LinkedHashSet<>(java.util.Arrays.asList(value.split(",")));
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (options: --sf N --out DIR [--tables a,b])");
      }
      i++;
    }
    if (out == null || !(sf > 0)) {
      throw new IllegalArgumentException("usage: TpchFiles --sf N --out DIR [--tables a,b] (a scale above 0)");
    }
    write(sf, out, tables, System.out);
  }

  /**
   * Writes the tables named in {@code tables} (null: all eight) at scale {@code sf} into {@code
   * out}, keeping those whose file is there; a line a table goes to {@code log}. An unknown table
   * name is an {@link IllegalArgumentException} before anything is written.
   */
  static void write(double sf, Path out, java.util.Set<String> tables, java.io.PrintStream log) throws Exception {
    java.util.List<String> known = TpchTable.getTables().stream().map(TpchTable::getTableName).toList();
    if (tables != null && !known.containsAll(tables)) {
      java.util.Set<String> unknown = new java.util.LinkedHashSet<>(tables);
      unknown.removeAll(known);
      throw new IllegalArgumentException("no TPC-H table " + unknown + " (tables: " + String.join(", ", known) + ")");
    }
    Files.createDirectories(out);
    int cores = Runtime.getRuntime().availableProcessors();
    try (RootAllocator a = new RootAllocator();
        DuckDBConnection duck = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:")) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        Path file = out.resolve(t.getTableName() + ".parquet");
        if (tables != null && !tables.contains(t.getTableName())) {
          continue;
        }
        if (Files.exists(file)) {
          log.printf(java.util.Locale.ROOT, "%s: kept (%,d bytes of Parquet)%n", file, Files.size(file));
          continue;
        }
        long t0 = System.nanoTime();
        long[] rows = {0};
        boolean[] made = {false};
        // in parts (each generated on all cores, appended to DuckDB's table, freed): no whole-table
        // Arrow vector, whose string data Arrow caps at 2 GiB (SF30's orders comments pass it)
        int parts = Math.max(cores, (int) Math.ceil(sf * 4));
        TpchTables.generate(a, t, sf, parts, cores, n -> { }, part -> {
          try {
            if (made[0]) {
              DuckDbTables.append(duck, a, t.getTableName(), part);
            } else {
              DuckDbTables.load(duck, a, t.getTableName(), part);
              made[0] = true;
            }
          } catch (java.sql.SQLException e) {
            throw new IllegalStateException("copying " + t.getTableName() + " into DuckDB: " + e.getMessage(), e);
          }
          rows[0] += part.getRowCount();
        });
        // a file of the final name is always whole: a call cut short leaves only the .part, written again
        Path part = out.resolve(t.getTableName() + ".parquet.part");
        Files.deleteIfExists(part);
        try (Statement st = duck.createStatement()) {
          st.execute("COPY " + t.getTableName() + " TO '" + part.toString().replace("'", "''") + "' (FORMAT parquet)");
          st.execute("DROP TABLE " + t.getTableName());
        }
        Files.move(part, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        log.printf(java.util.Locale.ROOT, "%s: %,d rows, %,d bytes of Parquet in %.1f s%n", file, rows[0], Files.size(file),
            (System.nanoTime() - t0) / 1e9);
      }
    }
  }
}
