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
 * time is in DuckDB's memory and a few parts in Arrow's. A file is written under a temporary name
 * and renamed into place, and a file that is there already is kept: a scale whose tables do not
 * all fit one device call's time is written over several calls, {@code --tables} naming each
 * call's. With {@code --files-per-table N} each table but NATION and REGION is a directory of N
 * files ({@code DIR/<table>/part-K-of-N.parquet}), each a range of the generator's parts, so that
 * DuckDB holds an N-th of the table at a time: SF100's lineitem whole would hold about 600 M rows
 * (SF30's whole took 140 s to write); as 8 files it took 298 s on a 16-core host, the machine's
 * memory in use at most 30 GiB (benchmarks/results/2026-12-07-files-sf100-budget16g-h100-s53-write.txt).
 *
 * <pre>TpchFiles --sf 10 --out DIR [--tables lineitem,orders] [--files-per-table N]</pre>
 */
public final class TpchFiles {
  private TpchFiles() {}

  private static final String USAGE = "options: --sf N --out DIR [--tables a,b] [--files-per-table N]";

  public static void main(String[] args) throws Exception {
    double sf = 1;
    Path out = null;
    java.util.Set<String> tables = null;
    int filesPerTable = 1;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      if (value == null) {
        throw new IllegalArgumentException(args[i] + " needs a value (" + USAGE + ")");
      }
      switch (args[i]) {
        case "--sf" -> sf = Double.parseDouble(value);
        case "--out" -> out = Path.of(value);
        case "--tables" -> tables = new java.util.LinkedHashSet<>(java.util.Arrays.asList(value.split(",")));
        case "--files-per-table" -> filesPerTable = Integer.parseInt(value);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (" + USAGE + ")");
      }
      i++;
    }
    if (out == null || !(sf > 0) || filesPerTable < 1) {
      throw new IllegalArgumentException("usage: TpchFiles --sf N --out DIR [--tables a,b] [--files-per-table N]"
          + " (a scale above 0, at least one file a table)");
    }
    write(sf, out, tables, filesPerTable, System.out);
  }

  /** {@link #write(double, Path, java.util.Set, int, java.io.PrintStream)} with one file a table. */
  static void write(double sf, Path out, java.util.Set<String> tables, java.io.PrintStream log) throws Exception {
    write(sf, out, tables, 1, log);
  }

  /**
   * Writes the tables named in {@code tables} (null: all eight) at scale {@code sf} into {@code
   * out}, each as {@code filesPerTable} files (see the class comment), keeping the files that are
   * there; a line a file goes to {@code log}. An unknown table name is an {@link
   * IllegalArgumentException} before anything is written.
   */
  static void write(double sf, Path out, java.util.Set<String> tables, int filesPerTable, java.io.PrintStream log)
      throws Exception {
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
        if (tables != null && !tables.contains(t.getTableName())) {
          continue;
        }
        // in parts (each generated on all cores, appended to DuckDB's table, freed): no whole-table
        // Arrow vector, whose string data Arrow caps at 2 GiB (SF30's orders comments pass it)
        int quarters = (int) Math.ceil(sf * 4);
        if (TpchTables.partsOf(t, filesPerTable) == 1) {
          int parts = TpchTables.partsOf(t, Math.max(cores, quarters));
          writeFile(duck, a, t, sf, parts, 1, parts, cores, out.resolve(t.getTableName() + ".parquet"), log);
          continue;
        }
        // the parts of a split table do not depend on the host's cores: a table written over calls on
        // two hosts is one table, and a file's name says of how many files it is one
        int parts = TpchTables.partsOf(t, Math.max(filesPerTable, quarters));
        Path dir = out.resolve(t.getTableName());
        Files.createDirectories(dir);
        for (int k = 0; k < filesPerTable; k++) {
          writeFile(duck, a, t, sf, parts, (int) ((long) k * parts / filesPerTable) + 1,
              (int) ((long) (k + 1) * parts / filesPerTable), cores,
              dir.resolve(String.format(java.util.Locale.ROOT, "part-%03d-of-%03d.parquet", k + 1, filesPerTable)), log);
        }
      }
    }
  }

  /** Parts {@code first} to {@code last} of {@code parts} of table {@code t} as Parquet file {@code file}, unless it is there. */
  private static void writeFile(DuckDBConnection duck, RootAllocator a, TpchTable<?> t, double sf, int parts, int first,
      int last, int cores, Path file, java.io.PrintStream log) throws Exception {
    if (Files.exists(file)) {
      log.printf(java.util.Locale.ROOT, "%s: kept (%,d bytes of Parquet)%n", file, Files.size(file));
      return;
    }
    long t0 = System.nanoTime();
    long[] rows = {0};
    boolean[] made = {false};
    TpchTables.generate(a, t, sf, parts, first, last, cores, n -> { }, part -> {
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
    Path part = file.resolveSibling(file.getFileName() + ".part");
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
