package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An aggregate runs in partitions only where its groups could be many ({@link DistinctBounds}):
 * over a table of four Parquet files (four chunks), a group key whose files' ranges hold few values
 * (a small integer, a date, an expression of them) stays whole even where its rows would pass the
 * bound, and even where the sum of the four chunks' ranges would (the union of the chunk branches
 * counts the table's column once); a key of many values partitions, unless the partitions would
 * each read all the rows. Every answer is the same as the resident copy's, aggregated whole.
 */
class DistinctBoundsTest {
  /** A query over $t, the partition bound in bytes, and whether its aggregate partitions. */
  private record Case(String sql, long bound, boolean partitions) {
    /** 200 rows of 16 bytes or more pass 200 bytes, where 4 groups (64 bytes) do not, nor the 16 that g's four chunks would give if summed. */
    Case(String sql, boolean partitions) {
      this(sql, 200, partitions);
    }
  }

  private static final List<Case> CASES = List.of(
      new Case("SELECT g, COUNT(*), SUM(k) FROM $t GROUP BY g", false),
      new Case("SELECT g + 1, COUNT(*) FROM $t GROUP BY g + 1", false),
      new Case("SELECT EXTRACT(YEAR FROM d), MIN(k) FROM $t GROUP BY EXTRACT(YEAR FROM d)", false),
      new Case("SELECT d, g, COUNT(*) FROM $t WHERE k > 3 GROUP BY d, g", false),
      new Case("SELECT k, COUNT(*) FROM $t GROUP BY k", true),
      new Case("SELECT g, k, COUNT(*) FROM $t GROUP BY g, k", true),
      // 4 x 5 combinations: 20 groups of 24 bytes pass the bound, where either key's values alone would not
      new Case("SELECT g, h, COUNT(*) FROM $t GROUP BY g, h", true),
      // g and g * 10 + h: 4 x 20 groups of 24 bytes (1,920) pass 1,000, where 4 x 5 would not
      new Case("SELECT g, g * 10 + h, COUNT(*) FROM $t GROUP BY g, g * 10 + h", 1000, true),
      // many groups, but of an expression: partitions would filter the rows after reading them all,
      // each partition joining and grouping as much as the whole does
      new Case("SELECT k + g, COUNT(*) FROM $t GROUP BY k + g", false),
      // s is a string, of unknown values in the files: as many as the rows, so g partitions
      new Case("SELECT g, s, COUNT(*) FROM $t GROUP BY g, s", true));

  @Test
  void aggregatesOfFewGroupsStayWhole(@TempDir Path dir) throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(s.catalog(), dir, allocator);
      Files.createDirectories(dir.resolve("t"));
      String fifty = String.join(", ", java.util.stream.IntStream.range(0, 50).mapToObj(n -> "(" + n + ")").toList());
      for (int f = 0; f < 4; f++) {
        // k 0..199 over the files; g 0..3, h 0..4 and d two days in each file, the same in all
        s.update("COPY (SELECT CAST(x AS BIGINT) AS k, CAST(MOD(x, 4) AS BIGINT) AS g,"
            + " CAST(MOD(x, 5) AS BIGINT) AS h, CASE WHEN MOD(x, 2) = 0 THEN DATE '2024-03-01' ELSE DATE '2024-03-02' END AS d, 'v' || CAST(x AS VARCHAR) AS s"
            + " FROM (SELECT " + (50 * f) + " + n AS x FROM (VALUES " + fifty + ") AS u(n)) AS v)"
            + " TO 't/part-" + f + ".parquet' (FORMAT parquet)");
      }
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      assertTrue(FileTables.loadDirectory(s.catalog(), dir, allocator).contains("t"));
      s.update("CREATE TABLE resident AS SELECT * FROM t");
      assertEquals(4, s.catalog().shape("t").chunks());
      List<String> failures = new ArrayList<>();
      for (Case c : CASES) {
        s.catalog().partitionBytes(c.bound());
        long before = s.catalog().chunkScans().partitioned();
        List<Object[]> got = rows(s, c.sql().replace("$t", "t"));
        boolean partitioned = s.catalog().chunkScans().partitioned() > before;
        s.catalog().partitionBytes(Long.MAX_VALUE);
        String difference = TpchAnswers.differenceUpToTies(rows(s, c.sql().replace("$t", "resident")), got);
        if (difference != null || partitioned != c.partitions()) {
          failures.add(c.sql() + ": " + (difference != null ? difference : "partitioned " + partitioned));
        }
      }
      assertEquals(List.of(), failures);
    }
  }

  private static List<Object[]> rows(GpuSession s, String sql) throws Exception {
    try (VectorSchemaRoot r = s.query(sql)) {
      return TpchAnswers.rows(r);
    }
  }
}
