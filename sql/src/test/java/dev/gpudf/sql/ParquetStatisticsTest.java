package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chunks of a Parquet file skipped by its row groups' statistics: a file written by DuckDB in 8
 * row groups of 4,096 rows (a sorted BIGINT, an INTEGER with NULLs spread through it, a sorted
 * DATE whose row groups share their boundary days, a VARCHAR that is all NULL in two row groups,
 * ASCII in two and non-ASCII in the rest, a DOUBLE, which has no usable order), opened in chunks of
 * one row group. Every filter, at and around each boundary, answers exactly as the same rows held
 * resident do, so a wrong skip fails here; the plans scan only the chunks that can match.
 */
class ParquetStatisticsTest {
  @Test
  void filtersSkipRowGroupsTheirStatisticsRuleOutAndAnswerAsTheWholeTable(@TempDir Path dir) throws Exception {
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("CREATE TABLE t AS SELECT i AS k, CASE WHEN i % 7 = 0 THEN NULL ELSE CAST((i * 37) % 1000 - 500 AS INTEGER) END AS v,"
          + " CAST(DATE '2024-01-01' + CAST(i // 100 AS INTEGER) AS DATE) AS d,"
          + " CASE WHEN i < 8192 THEN NULL WHEN i < 16384 THEN 'a' || (i % 50) ELSE (CASE WHEN i % 2 = 0 THEN 'é' ELSE '日本' END) || (i % 30) END AS s,"
          + " CAST(i AS DOUBLE) / 3 AS f FROM range(32768) r(i) ORDER BY i");
      st.execute("COPY t TO '" + dir.resolve("t.parquet") + "' (FORMAT parquet, ROW_GROUP_SIZE 4096)");
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(s.catalog(), dir, allocator, 4096);
      assertEquals(8, s.catalog().shape("t").chunks(), "one chunk a row group");
      s.update("CREATE TABLE resident AS SELECT * FROM t");
      List<String> filters = List.of("k = 4095", "k = 4096", "k < 4096", "k <= 4096", "k > 28671", "k >= 28672", "k > 32767",
          "k BETWEEN 8000 AND 8200", "k IN (1, 30000)", "k < 0", "4096 > k", "k <> 5", "v = -500", "v = 499", "v > 490",
          "v < -499", "v IS NULL", "v IS NOT NULL", "d = DATE '2024-01-01'", "d = DATE '2024-02-10'",
          "d < DATE '2024-01-05'", "d > DATE '2024-11-20'", "d BETWEEN DATE '2024-03-01' AND DATE '2024-03-02'",
          "s IS NULL", "s IS NOT NULL", "s = 'a7'", "s > 'a'", "s < 'b'", "s >= 'é'", "s = 'é4'", "s = '日本5'", "s > '日本'",
          "s < 'a0'", "s = ''", "f < 10", "f > 10000", "k < 4096 OR s = 'a7'", "k < 4096 AND s IS NOT NULL",
          "NOT (k < 30000)", "k + 1 = 4096", "COALESCE(s, 'x') = 'x'");
      SkipChecks.sameAsResident(s, "SELECT COUNT(*), SUM(k), MIN(v), MAX(d), MIN(s), MAX(s), SUM(f) FROM $t", "t", "resident",
          filters);
      assertEquals(1, scans(s, "k < 4096"));
      assertEquals(2, scans(s, "k BETWEEN 8000 AND 8200"));
      assertEquals(2, scans(s, "k IN (1, 30000)"));
      assertEquals(0, scans(s, "k > 32767"));
      assertEquals(8, scans(s, "v = -500"), "every row group holds every value of v");
      assertEquals(0, scans(s, "v > 499"));
      assertEquals(2, scans(s, "d = DATE '2024-02-10'"), "day 40 is in row groups 0 and 1");
      assertEquals(2, scans(s, "s IS NULL"));
      assertEquals(6, scans(s, "s IS NOT NULL"));
      assertEquals(2, scans(s, "s = 'a7'"));
      assertEquals(4, scans(s, "s >= 'é'"));
      assertEquals(8, scans(s, "f > 10000"), "no order is taken from DOUBLE statistics");
      assertEquals(3, scans(s, "k < 4096 OR s = 'a7'"));
    }
  }

  /**
   * Row groups larger than a scanner batch (204,800 rows; batches of a 16th of a chunk, 21,250 rows:
   * nine of them and one of 13,550 a group) opened in chunks of at most 340,000 rows: chunk 0 holds
   * row group 0 and six batches of row group 1, so its range must cover both; filters on the rows
   * either side of each batch, chunk and row-group boundary answer as the resident rows. (Its
   * boolean column keeps the file on Arrow's reader, whose chunks are batches: a file of the
   * columns gpudf's decoder takes opens in chunks of whole row groups.)
   */
  @Test
  void aChunkThatSpansRowGroupsTakesTheRangesOfBoth(@TempDir Path dir) throws Exception {
    int group = 204_800;
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT i AS k, i % 2 = 0 AS b FROM range(" + 3 * group + ") r(i) ORDER BY i) TO '" + dir.resolve("big.parquet")
          + "' (FORMAT parquet, ROW_GROUP_SIZE " + group + ")");
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(s.catalog(), dir, allocator, 340_000);
      int batch = 340_000 / 16;
      int first = group + 6 * batch;
      assertEquals(List.of(first, 3 * group - first), s.catalog().shape("big").chunkRows());
      s.update("CREATE TABLE resident AS SELECT * FROM big");
      List<String> filters = new java.util.ArrayList<>();
      for (long k : new long[] {0, batch - 1, batch, group - 1, group, first - 1, first, 2L * group - 1, 2L * group,
          3L * group - 1}) {
        filters.addAll(List.of("k = " + k, "k < " + k, "k > " + k));
      }
      SkipChecks.sameAsResident(s, "SELECT COUNT(*), SUM(k), MIN(k), MAX(k) FROM $t", "big", "resident", filters);
      assertEquals(1, SkipChecks.scans(s, "big", "k", "k = " + (group - 1)), "row group 0 is in chunk 0 only");
      assertEquals(2, SkipChecks.scans(s, "big", "k", "k = " + group), "row group 1 is in chunks 0 and 1");
    }
  }

  private static int scans(GpuSession s, String filter) {
    return SkipChecks.scans(s, "t", "k", filter);
  }
}
