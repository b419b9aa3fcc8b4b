package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import io.trino.tpch.TpchTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parquet files as tables kept in their files ({@link dev.gpudf.sql.files.ParquetSource}): TPC-H
 * at scale 0.01 written by DuckDB in row groups of 4096 rows, opened in chunks of about 12,000
 * rows, so every scan of lineitem and orders is split into chunks read one after another; every
 * answer is held to DuckDB's over the same files.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ParquetTablesTest {
  private static final int CHUNK_ROWS = 12_000;

  @TempDir
  static Path dir;
  private RootAllocator allocator;
  private Connection duck;

  @BeforeAll
  void write() throws Exception {
    allocator = new RootAllocator();
    try (Connection gen = DriverManager.getConnection("jdbc:duckdb:"); Statement st = gen.createStatement()) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        TpchData.duckdb(gen, t, 0.01);
        st.execute("COPY " + t.getTableName() + " TO '" + dir.resolve(t.getTableName() + ".parquet")
            + "' (FORMAT parquet, ROW_GROUP_SIZE 4096)");
      }
    }
    duck = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement st = duck.createStatement()) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        st.execute("CREATE VIEW " + t.getTableName() + " AS SELECT * FROM read_parquet('"
            + dir.resolve(t.getTableName() + ".parquet") + "')");
      }
    }
  }

  @AfterAll
  void close() throws Exception {
    duck.close();
    allocator.close();
  }

  private GpuSession open() {
    GpuSession s = GpuSession.cpu(allocator);
    try {
      FileTables.loadDirectory(s.catalog(), dir, allocator, CHUNK_ROWS);
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
    return s;
  }

  @Test
  void openingReadsFootersOnlyAndScansAreSplitIntoChunks() {
    try (GpuSession s = open()) {
      assertEquals(0, allocator.getAllocatedMemory(), "no rows are read before a query");
      Catalog.Shape lineitem = s.catalog().shape("lineitem");
      assertTrue(lineitem.chunks() >= 4, "chunks: " + lineitem.chunkRows());
      assertEquals(60_175, lineitem.rows());
      String plan = s.explain("SELECT SUM(l_quantity) FROM lineitem WHERE l_discount > 0.05");
      assertTrue(plan.contains("[lineitem, chunk 3, columns: l_quantity, l_discount]"), plan);
      assertTrue(s.catalog().inFiles("lineitem"));
    }
  }

  /**
   * A distinct count never reads a file while planning: an integer column's distinct count is
   * bounded by its footers' smallest and largest values (and the rows), which for TPC-H's dense
   * keys is the count itself; a column without such a range gives none. Without the bound q5 at
   * SF10 joined customer to supplier on their nation first, 1.2 billion rows.
   */
  @Test
  void distinctCountsOfFileColumnsComeFromTheirFootersRanges() throws Exception {
    try (GpuSession s = open()) {
      ColumnStats stats = new ColumnStats(s.catalog(), () -> {
        throw new AssertionError("a file table was read while planning");
      }, table -> null);
      for (String[] c : new String[][] {{"customer", "c_nationkey"}, {"lineitem", "l_orderkey"},
          {"orders", "o_custkey"}, {"lineitem", "l_suppkey"}}) {
        long want;
        try (Statement st = duck.createStatement();
            ResultSet rs = st.executeQuery("SELECT LEAST(COUNT(*), MAX(" + c[1] + ") - MIN(" + c[1] + ") + 1) FROM " + c[0])) {
          rs.next();
          want = rs.getLong(1);
        }
        int column = s.catalog().shape(c[0]).names().indexOf(c[1]);
        assertEquals(java.util.OptionalDouble.of(want), stats.distinct(c[0], column), c[0] + "." + c[1]);
      }
      assertEquals(java.util.OptionalDouble.of(25), stats.distinct("customer", s.catalog().shape("customer").names().indexOf("c_nationkey")));
      int comment = s.catalog().shape("lineitem").names().indexOf("l_comment");
      assertEquals(java.util.OptionalDouble.empty(), stats.distinct("lineitem", comment), "strings are not bounded");
      assertEquals(0, allocator.getAllocatedMemory(), "nothing was read");
    }
  }

  @Test
  void all22QueriesAgreeWithDuckDbOverTheSameFiles() throws Exception {
    try (GpuSession s = open()) {
      for (Map.Entry<String, String> q : TpchTables.queries().entrySet()) {
        List<Object[]> want;
        try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(q.getValue())) {
          want = TpchAnswers.rows(rs);
        }
        try (VectorSchemaRoot got = s.query(q.getValue())) {
          assertNull(TpchAnswers.difference(want, TpchAnswers.rows(got)), q.getKey());
        }
      }
    }
  }

  /**
   * Strings from a Parquet dictionary stay codes on the CPU until read ({@code HostColumn.encoded}):
   * filters, groupings, joins, sorts and outputs over them agree with DuckDB, with NULLs, empty and
   * non-ASCII strings, in chunks of several row groups each with its own dictionary.
   */
  @Test
  void stringsKeptAsDictionaryCodesAgreeWithDuckDb(@TempDir Path other) throws Exception {
    Path file = other.resolve("s.parquet");
    try (Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE ['AIR', 'b', '', 'naïve café', 'REG AIR', '日本', 'x']"
          + "[(i * 7 + i // 4096) % 7 + 1] END AS s, i % 5 AS k, i FROM range(30000) t(i)) TO '" + file
          + "' (FORMAT parquet, ROW_GROUP_SIZE 4096)");
      st.execute("CREATE VIEW s AS SELECT * FROM read_parquet('" + file + "')");
    }
    List<String> queries = List.of(
        "SELECT s, COUNT(*), SUM(i) FROM s GROUP BY s ORDER BY s NULLS LAST",
        "SELECT s, k, COUNT(*) FROM s WHERE s <> 'b' GROUP BY s, k ORDER BY s NULLS LAST, k",
        "SELECT COUNT(*), SUM(i) FROM s WHERE s IN ('AIR', 'REG AIR') AND k > 1",
        "SELECT COUNT(*) FROM s WHERE s LIKE '%a%' OR s IS NULL",
        "SELECT COUNT(*) FROM s WHERE s = '' AND i < 20000",
        "SELECT s, i FROM s WHERE i % 997 = 3 ORDER BY i",
        "SELECT MIN(s), MAX(s), COUNT(DISTINCT s) FROM s WHERE k = 2",
        "SELECT a.s, COUNT(*) FROM (SELECT DISTINCT s FROM s) a JOIN s b ON a.s = b.s GROUP BY a.s ORDER BY a.s",
        "SELECT k, MIN(s), MAX(s) FROM s WHERE s > 'b' GROUP BY k ORDER BY k");
    try (GpuSession s = open()) {
      // chunks of two whole row groups: gpudf's decoder takes them (Arrow's reader, chunks that cut one)
      FileTables.loadDirectory(s.catalog(), other, allocator, 8192);
      for (String q : queries) {
        List<Object[]> want;
        try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(q)) {
          want = TpchAnswers.rows(rs);
        }
        try (VectorSchemaRoot got = s.query(q)) {
          assertNull(TpchAnswers.difference(want, TpchAnswers.rows(got)), q);
        }
      }
    } finally {
      try (Statement st = duck.createStatement()) {
        st.execute("DROP VIEW s");
      }
    }
  }

  @Test
  void scansOfOneTableWithOtherColumnsOrChunksOutOfOrderAgree() throws Exception {
    // the same table read twice with other columns (two scans at once), COUNT(*) reading no
    // column, and a second query that reads chunk 0 again after a first that read them all
    String sql = "SELECT COUNT(*), SUM(a.l_quantity), MIN(b.l_comment) FROM lineitem a JOIN lineitem b"
        + " ON a.l_orderkey = b.l_orderkey AND a.l_linenumber = b.l_linenumber + 1";
    try (GpuSession s = open()) {
      for (String q : List.of(sql, "SELECT COUNT(*) FROM lineitem", sql)) {
        List<Object[]> want;
        try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(q)) {
          want = TpchAnswers.rows(rs);
        }
        try (VectorSchemaRoot got = s.query(q)) {
          assertNull(TpchAnswers.difference(want, TpchAnswers.rows(got)), q);
        }
      }
    }
  }

  @Test
  void aFileChangedAfterOpeningIsAnErrorNamingIt(@TempDir Path other) throws Exception {
    Files.copy(dir.resolve("nation.parquet"), other.resolve("nation.parquet"));
    try (GpuSession s = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(s.catalog(), other, allocator, CHUNK_ROWS);
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*) FROM nation")) {
        assertEquals(25L, ((Number) r.getVector(0).getObject(0)).longValue());
      }
      Files.copy(dir.resolve("region.parquet"), other.resolve("nation.parquet"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      UserException e = assertThrows(UserException.class, () -> s.query("SELECT MAX(n_name) FROM nation").close());
      assertTrue(e.getMessage().contains("nation.parquet") && e.getMessage().contains("changed"), e.getMessage());
    }
  }

  @Test
  void rowsInsertedIntoAFileTableMakeItResidentAndLeaveTheFile(@TempDir Path other) throws Exception {
    Files.copy(dir.resolve("nation.parquet"), other.resolve("nation.parquet"));
    Files.createDirectories(other.resolve(".superseded"));
    Files.copy(dir.resolve("region.parquet"), other.resolve(".superseded/region.parquet"));
    byte[] before = Files.readAllBytes(other.resolve("nation.parquet"));
    try (GpuSession s = GpuSession.cpu(allocator)) {
      assertEquals(List.of("nation"), FileTables.loadDirectory(s.catalog(), other, allocator), "hidden entries are no tables");
      assertEquals(2, s.update("INSERT INTO nation SELECT * FROM nation WHERE n_nationkey < 2"));
      assertTrue(!s.catalog().inFiles("nation"));
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*), COUNT(DISTINCT n_nationkey) FROM nation")) {
        assertEquals(27L, ((Number) r.getVector(0).getObject(0)).longValue());
        assertEquals(25L, ((Number) r.getVector(1).getObject(0)).longValue());
      }
    }
    assertTrue(java.util.Arrays.equals(before, Files.readAllBytes(other.resolve("nation.parquet"))), "the file is not written");
  }

  @Test
  void corruptOrTruncatedFilesAreErrorsNamingThem(@TempDir Path other) throws Exception {
    byte[] whole = Files.readAllBytes(dir.resolve("orders.parquet"));
    // good files beside the bad one, opened with it at once: none becomes a table
    Files.copy(dir.resolve("nation.parquet"), other.resolve("nation.parquet"));
    Files.copy(dir.resolve("region.parquet"), other.resolve("region.parquet"));
    for (byte[] bytes : List.of("not parquet".getBytes(), java.util.Arrays.copyOf(whole, whole.length / 2))) {
      Files.write(other.resolve("orders.parquet"), bytes);
      try (GpuSession s = GpuSession.cpu(allocator)) {
        UserException e = assertThrows(UserException.class, () -> FileTables.loadDirectory(s.catalog(), other, allocator));
        assertTrue(e.getMessage().contains("orders.parquet"), e.getMessage());
        assertTrue(s.catalog().names().isEmpty(), "no partial table");
      }
    }
  }
}
