package dev.gpudf.bench;

import dev.gpudf.sql.TpchTables;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.stream.Stream;

/**
 * The DuckDB side of {@code scripts/files-bench.sh}: one TPC-H query over the {@code *.parquet}
 * files of a directory (each a view over {@code read_parquet}), in a fresh process, as gpudf's
 * {@code gpudf sql --path DIR} runs it; prints the rows and the time inside the process.
 * {@code DuckDbFiles --text qN} prints the query's text instead.
 */
public final class DuckDbFiles {
  private DuckDbFiles() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--text")) {
      System.out.println(query(args[1]));
      return;
    }
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: DuckDbFiles DIR qN | --text qN");
    }
    long t0 = System.nanoTime();
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        Stream<Path> files = Files.list(Path.of(args[0]))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
        String name = f.getFileName().toString().replace(".parquet", "");
        st.execute("CREATE VIEW " + name + " AS SELECT * FROM read_parquet('" + f.toString().replace("'", "''") + "')");
      }
      try (ResultSet rs = st.executeQuery(query(args[1]))) {
        int n = rs.getMetaData().getColumnCount();
        int rows = 0;
        while (rs.next()) {
          StringBuilder line = new StringBuilder();
          for (int i = 1; i <= n; i++) {
            line.append(i > 1 ? " | " : "").append(rs.getString(i));
          }
          System.out.println(line);
          rows++;
        }
        System.out.printf("(%d rows, %.1f ms, duckdb)%n", rows, (System.nanoTime() - t0) / 1e6);
      }
    }
  }

  private static String query(String name) {
    String q = TpchTables.queries().get(name);
    if (q == null) {
      throw new IllegalArgumentException("no TPC-H query " + name);
    }
    return q;
  }
}
