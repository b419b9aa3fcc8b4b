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
 * An aggregate runs in partitions only where its groups could be many ({@link DistinctBounds}),
 * and an aggregate or a join only where the rows its scans' filters keep by the files' ranges
 * could be many ({@link ChunkPruning#passing}):
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
      new Case("SELECT g, s, COUNT(*) FROM $t GROUP BY g, s", true),
      // filters count the rows they keep of each file's range of k (0-49, 50-99, ...): 10 rows of
      // 16 bytes in two files stay under the bound, where the 100 of the two files read would not
      new Case("SELECT k, COUNT(*) FROM $t WHERE k BETWEEN 45 AND 54 GROUP BY k", false),
      new Case("SELECT k, COUNT(*) FROM $t WHERE k >= 195 OR k <= 2 GROUP BY k", false),
      // a disjunction keeps the sum of its parts: 6 + 6 + 1 rows
      new Case("SELECT k, COUNT(*) FROM $t WHERE k <= 5 OR k BETWEEN 40 AND 45 OR k = 50 GROUP BY k", true),
      new Case("SELECT k, COUNT(*) FROM $t WHERE k > 40 AND k < 60 AND k <> 50 GROUP BY k", true),
      new Case("SELECT k, COUNT(*) FROM $t WHERE k >= 30 AND k < 70 GROUP BY k", true),
      // a conjunction keeps at most its narrowest part: 30 rows of k, however few of them g and h
      // keep (a product of the parts, 30 / 4 / 5, would take them as independent)
      new Case("SELECT k, COUNT(*) FROM $t WHERE k BETWEEN 40 AND 69 AND g < 1 AND h < 1 GROUP BY k", true),
      new Case("SELECT k, COUNT(*) FROM $t WHERE k BETWEEN 45 AND 54 AND g < 3 AND d = DATE '2024-03-01' GROUP BY k", false),
      // what the ranges cannot judge keeps every row
      new Case("SELECT k, COUNT(*) FROM $t WHERE s <> 'v3' GROUP BY k", true),
      new Case("SELECT k, COUNT(*) FROM $t WHERE k * 2 < 100 GROUP BY k", true),
      // a join's input read whole by each chunk of the other counts the same way
      new Case("SELECT a.k, b.h FROM $t AS a JOIN $t AS b ON a.k = b.k WHERE b.k BETWEEN 45 AND 54", false),
      new Case("SELECT a.k, b.h FROM $t AS a JOIN $t AS b ON a.k = b.k WHERE b.k >= 20", true),
      // an aggregate read whole keeps at most its groups: 4 of g, not the 200 rows it reads
      new Case("SELECT a.k, b.c FROM $t AS a JOIN (SELECT g, COUNT(*) AS c FROM $t GROUP BY g) AS b ON a.g = b.g", false),
      new Case("SELECT a.k, b.c FROM $t AS a JOIN (SELECT k, COUNT(*) AS c FROM $t GROUP BY k) AS b ON a.k = b.k", true),
      // r holds 5 rows of t (k 0-4): a join key's values are among the other side's (t's k, 200
      // values, as r's 5), and r's columns together take at most r's 5 rows' values (not 5 x 5 x 4):
      // 5 groups of 32 bytes
      new Case("SELECT a.k, b.h, b.g, COUNT(*) FROM $t AS a JOIN r AS b ON a.k = b.k GROUP BY a.k, b.h, b.g", false),
      // r on both sides of a join pairs its rows: up to 5 x 5 groups of 24 bytes pass 250
      new Case("SELECT a.k, b.k, COUNT(*) FROM $t AS c JOIN r AS a ON c.k = a.k JOIN r AS b ON c.g = b.g GROUP BY a.k, b.k",
          250, true));

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
      s.update("CREATE TABLE r AS SELECT * FROM t WHERE k < 5");
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
