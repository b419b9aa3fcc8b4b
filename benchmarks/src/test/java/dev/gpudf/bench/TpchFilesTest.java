package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TPC-H written as Parquet over several calls: only the tables named, a table whose file is there
 * kept as it is, a file cut short by an earlier call (its {@code .part}) written again, a misspelt
 * table refused before anything is written, and tables split into several files that hold the
 * whole table's rows and are queried in place.
 */
class TpchFilesTest {
  @Test
  void writesTheNamedTablesAndKeepsThoseWritten(@TempDir Path dir) throws Exception {
    TpchFiles.write(0.001, dir, Set.of("nation", "region"), log());
    assertTrue(Files.exists(dir.resolve("nation.parquet")));
    assertTrue(Files.exists(dir.resolve("region.parquet")));
    assertFalse(Files.exists(dir.resolve("supplier.parquet")));
    FileTime written = Files.getLastModifiedTime(dir.resolve("nation.parquet"));
    // a call cut short while writing supplier left its .part
    Files.writeString(dir.resolve("supplier.parquet.part"), "cut short");
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    TpchFiles.write(0.001, dir, Set.of("nation", "supplier"), new PrintStream(said, true, StandardCharsets.UTF_8));
    assertEquals(written, Files.getLastModifiedTime(dir.resolve("nation.parquet")));
    assertTrue(said.toString(StandardCharsets.UTF_8).contains("nation.parquet: kept"), said.toString(StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("supplier.parquet.part")));
    assertEquals(25, rows(dir.resolve("nation.parquet")));
    assertEquals(10, rows(dir.resolve("supplier.parquet")));
  }

  @Test
  void anUnknownTableIsRefusedBeforeAnythingIsWritten(@TempDir Path dir) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TpchFiles.write(0.001, dir, Set.of("nation", "lineitems"), log()));
    assertTrue(e.getMessage().contains("[lineitems]"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("nation.parquet")));
  }

  @Test
  void aTableSplitIntoFilesHoldsTheRowsOfTheWholeOne(@TempDir Path dir) throws Exception {
    Path whole = dir.resolve("whole");
    Path split = dir.resolve("split");
    TpchFiles.write(0.01, whole, Set.of("orders", "nation"), log());
    TpchFiles.write(0.01, split, Set.of("orders", "nation"), 3, log());
    // NATION has no parts to split
    assertTrue(Files.exists(split.resolve("nation.parquet")));
    for (int k = 1; k <= 3; k++) {
      assertTrue(rows(split.resolve("orders/part-00" + k + "-of-003.parquet")) > 0, "file " + k);
    }
    // the same rows, each once: count, keys and a digest of every column agree with the whole file's
    String digest = "SELECT COUNT(*), COUNT(DISTINCT o_orderkey), SUM(hash(o_orderkey, o_custkey, o_orderstatus, o_totalprice,"
        + " o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment)) FROM read_parquet('%s')";
    assertEquals(query(String.format(digest, whole.resolve("orders.parquet"))),
        query(String.format(digest, split.resolve("orders/*.parquet"))));
    // written again: every file kept
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    TpchFiles.write(0.01, split, Set.of("orders"), 3, new PrintStream(said, true, StandardCharsets.UTF_8));
    assertEquals(3, said.toString(StandardCharsets.UTF_8).split(": kept", -1).length - 1, said.toString(StandardCharsets.UTF_8));
  }

  @Test
  void tablesSplitIntoFilesAreQueriedInPlace(@TempDir Path dir) throws Exception {
    Path data = dir.resolve("data");
    TpchFiles.write(0.01, data, null, 2, log());
    TpchReport report = TpchBenchmark.run(TpchBenchmark.Settings.parse(new String[] {"--sf", "0.01", "--reps", "1",
        "--engines", "cpu,duckdb", "--queries", "q3,q18", "--data", data.toString(), "--in-place", "--out", dir.toString()}));
    String text = Files.readString(report.write(dir));
    assertTrue(report.answersAgree(), text);
    assertTrue(text.contains("2 agree, 0 DIFFER"), text);
  }

  private static String query(String sql) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet r = st.executeQuery(sql)) {
      r.next();
      return r.getString(1) + " " + r.getString(2) + " " + r.getString(3);
    }
  }

  private static PrintStream log() {
    return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
  }

  /** The rows of a Parquet file, as DuckDB reads it. */
  private static long rows(Path file) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet r = st.executeQuery("SELECT COUNT(*) FROM read_parquet('" + file.toString().replace("'", "''") + "')")) {
      r.next();
      return r.getLong(1);
    }
  }
}
