package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Join order from measured statistics: a small table's filter is counted, not guessed. */
class JoinOrderTest {
  private static String rows(int n, java.util.function.IntFunction<String> row) {
    return IntStream.range(0, n).mapToObj(row).collect(Collectors.joining(", "));
  }

  /**
   * A range that keeps 2 of d1's 100 rows against a point filter that keeps 10 of d2's: counted,
   * d1's join keeps fewer fact rows and runs first; guessed (a quarter or more of d1), d2's would.
   */
  @Test
  void aCountedRangeFilterJoinsBeforeAGuessedOne() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      create(session);
      assertD1JoinsFirst(session);
    }
  }

  /** The same tables kept in Parquet files: d1's filter is counted by reading d1, as on resident tables. */
  @Test
  void aFileTablesFilterIsCountedToo(@TempDir Path dir) throws Exception {
    try (RootAllocator allocator = new RootAllocator()) {
      writeFiles(dir, allocator);
      try (GpuSession session = GpuSession.cpu(allocator)) {
        FileTables.loadDirectory(session.catalog(), dir, allocator);
        assertTrue(session.catalog().inFiles("d1"));
        assertD1JoinsFirst(session);
      }
    }
  }

  /**
   * On the GPU the count takes the read of d1 that the statement started early, and the catalog
   * keeps it for the scan: each column of the three tables is read once (were d1 read again for the
   * count, its columns would be read twice), and every early read is taken.
   */
  @RequiresGpu
  @Test
  void aGpuCountTakesTheEarlyRead(@TempDir Path dir) throws Exception {
    try (RootAllocator allocator = new RootAllocator()) {
      writeFiles(dir, allocator);
      try (Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); GpuSession session = GpuSession.gpu(gpu, allocator)) {
        FileTables.loadDirectory(session.catalog(), dir, allocator);
        try (org.apache.arrow.vector.VectorSchemaRoot result = session.query(SQL)) {
          assertEquals(10L, ((Number) result.getVector(0).getObject(0)).longValue());
        }
        Catalog.FileReads reads = session.catalog().fileReads();
        assertEquals(6, reads.columnChunks(), reads.toString());
        Catalog.ReadsAhead ahead = session.catalog().readsAhead();
        assertEquals(ahead.started(), ahead.taken(), ahead.toString());
        assertD1JoinsFirst(session);
      }
    }
  }

  /**
   * d1 in two Hive partitions, the filter keeping rows of the first only: the count reads no
   * chunk that the files' metadata rules out, as the query's scan reads none. The second
   * partition's file changes after the table is opened, so a read of it would fail (and the
   * count, failing, would guess, and d2 would join first).
   */
  @Test
  void aCountReadsNoChunkTheFilesRuleOut(@TempDir Path dir) throws Exception {
    try (RootAllocator allocator = new RootAllocator()) {
      try (GpuSession session = GpuSession.cpu(allocator)) {
        FileTables.loadDirectory(session.catalog(), dir, allocator);
        create(session);
        for (String t : List.of("f", "d2")) {
          session.update("COPY (SELECT * FROM " + t + ") TO '" + t + ".parquet' (FORMAT parquet)");
        }
        for (int g = 0; g < 2; g++) {
          java.nio.file.Files.createDirectories(dir.resolve("d1/grp=" + g));
          session.update("COPY (SELECT * FROM d1 WHERE k " + (g == 0 ? "<" : ">=") + " 50) TO 'd1/grp=" + g
              + "/part.parquet' (FORMAT parquet)");
        }
      }
      try (GpuSession session = GpuSession.cpu(allocator)) {
        FileTables.loadDirectory(session.catalog(), dir, allocator);
        assertEquals(2, session.catalog().shape("d1").chunks());
        java.nio.file.Files.writeString(dir.resolve("d1/grp=1/part.parquet"), "changed since the table was opened");
        assertD1JoinsFirst(session, SQL + " AND d1.grp = 0");
      }
    }
  }

  /** The three tables as Parquet files in {@code dir}, one a table. */
  private static void writeFiles(Path dir, RootAllocator allocator) {
    try (GpuSession session = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(session.catalog(), dir, allocator);
      create(session);
      for (String t : List.of("f", "d1", "d2")) {
        session.update("COPY (SELECT * FROM " + t + ") TO '" + t + ".parquet' (FORMAT parquet)");
      }
    }
  }

  private static void create(GpuSession session) {
    session.update("CREATE TABLE f (a INTEGER, b INTEGER)");
    session.update("INSERT INTO f VALUES " + rows(1000, i -> "(" + i % 100 + ", " + i % 100 + ")"));
    session.update("CREATE TABLE d1 (k INTEGER, v INTEGER)");
    session.update("INSERT INTO d1 VALUES " + rows(100, i -> "(" + i + ", " + i + ")"));
    session.update("CREATE TABLE d2 (k INTEGER, c INTEGER)");
    session.update("INSERT INTO d2 VALUES " + rows(100, i -> "(" + i + ", " + i % 10 + ")"));
  }

  private static final String SQL = "SELECT count(*) FROM f, d1, d2 WHERE f.a = d1.k AND f.b = d2.k AND d1.v BETWEEN 10"
      + " AND 11 AND d2.c = 0";

  private static void assertD1JoinsFirst(GpuSession session) {
    assertD1JoinsFirst(session, SQL);
  }

  private static void assertD1JoinsFirst(GpuSession session, String sql) {
    String plan = session.explain(sql);
    int d1 = plan.indexOf("[[d1");
    int d2 = plan.indexOf("[[d2");
    assertTrue(d1 >= 0 && d2 >= 0, plan);
    // the deepest join is printed first: d1's scan comes before d2's
    assertTrue(d1 < d2, plan);
    // f's rows with a = b in {10, 11}, of which d2 keeps b = 10
    try (org.apache.arrow.vector.VectorSchemaRoot result = session.query(sql)) {
      assertEquals(10L, ((Number) result.getVector(0).getObject(0)).longValue());
    }
  }
}
