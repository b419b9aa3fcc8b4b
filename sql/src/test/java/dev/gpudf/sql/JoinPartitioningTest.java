package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Joins and aggregates planned in partitions ({@link JoinPartitioning}) answer as DuckDB does
 * on the same rows: chunked tables whose keys hold nulls, negative values, duplicates and keys
 * found on one side only, under inner, left, right, semi, anti (NOT EXISTS, NOT IN) and chained
 * joins and grouped aggregates, with a partition bound small enough that each partitions (the
 * catalog's count is checked); full joins, null-safe equalities, global aggregates and ROLLUP
 * stay whole and still agree. A row put in the wrong
 * partition, or lost from all of them, fails here.
 */
class JoinPartitioningTest {
  /** A query, and whether its plan partitions a join. */
  private record Case(String sql, boolean partitions) {}

  private static final List<Case> CASES = List.of(
      new Case("SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k", true),
      new Case("SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k", true),
      new Case("SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND b.w > a.v", true),
      new Case("SELECT a.k, a.v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.w > a.v)", true),
      new Case("SELECT a.k, a.v FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)", true),
      new Case("SELECT a.k, a.v FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.w <> a.v)", true),
      new Case("SELECT a.k, a.v FROM a WHERE a.k IN (SELECT k FROM b)", true),
      new Case("SELECT a.k, a.v FROM a WHERE a.k NOT IN (SELECT k FROM b WHERE k IS NOT NULL)", true),
      new Case("SELECT a.k, a.v FROM a WHERE a.k NOT IN (SELECT k FROM b)", true),
      // a null-safe equality is no equi-key to Calcite: left whole
      new Case("SELECT a.k, a.v, b.w FROM a JOIN b ON a.k IS NOT DISTINCT FROM b.k", false),
      new Case("SELECT a.k, COUNT(*), SUM(b.w) FROM a JOIN b ON a.k = b.k GROUP BY a.k", true),
      new Case("SELECT a.k, a.v, b.w, c.x FROM a JOIN b ON a.k = b.k JOIN c ON c.k = b.k", true),
      new Case("SELECT a.k, COUNT(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)"
          + " AND NOT EXISTS (SELECT 1 FROM c WHERE c.k = a.k AND c.x > a.v) GROUP BY a.k", true),
      // b already in one partition of five: the other partitions join a's rows with none of b's
      new Case("SELECT a.k, a.v FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND ABS(MOD(b.k, 5)) = 2)", true),
      new Case("SELECT a.k, a.v, b.w FROM a LEFT JOIN (SELECT * FROM b WHERE ABS(MOD(k, 5)) = 2) AS b ON a.k = b.k", true),
      new Case("SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k AND a.v = b.w", true),
      new Case("SELECT a.k, a.v, b.w FROM a JOIN b ON a.v = b.w", true),
      new Case("SELECT a.k, a.v, b.w FROM a RIGHT JOIN b ON a.k = b.k", true),
      // aggregates of partitions: each group in one partition
      new Case("SELECT k, COUNT(*), SUM(v), MIN(v), AVG(v) FROM a GROUP BY k", true),
      new Case("SELECT v, k, COUNT(*) FROM a GROUP BY k, v", true),
      new Case("SELECT k FROM a GROUP BY k HAVING COUNT(*) > 1", true),
      new Case("SELECT v, SUM(k), COUNT(k) FROM a GROUP BY v", true),
      new Case("SELECT w, MAX(k), MIN(k) FROM b GROUP BY w", true),
      new Case("SELECT COUNT(DISTINCT k), COUNT(*) FROM a", true),
      new Case("SELECT a.k, SUM(b.w) FROM a JOIN b ON a.k = b.k GROUP BY a.k HAVING SUM(b.w) > 5", true),
      new Case("SELECT b.w, COUNT(*) FROM a JOIN b ON a.k = b.k GROUP BY b.w", true),
      new Case("SELECT k, COUNT(*) FROM a GROUP BY ROLLUP(k)", false),
      new Case("SELECT COUNT(*), SUM(v) FROM a", false),
      new Case("SELECT a.k, a.v, b.w FROM a FULL JOIN b ON a.k = b.k", false));

  /** The same rows into gpudf (chunks of at most 7 rows) and DuckDB, in several inserts each. */
  private static void load(GpuSession s, Connection duck) throws Exception {
    s.catalog().maxChunkRows(7);
    Random random = new Random(20261206);
    String[][] tables = {{"a", "k BIGINT, v INTEGER", "60"}, {"b", "k BIGINT, w INTEGER", "45"}, {"c", "k INTEGER, x INTEGER", "30"}};
    try (Statement d = duck.createStatement()) {
      for (String[] t : tables) {
        s.update("CREATE TABLE " + t[0] + " (" + t[1] + ")");
        d.execute("CREATE TABLE " + t[0] + " (" + t[1] + ")");
        int rows = Integer.parseInt(t[2]);
        for (int from = 0; from < rows; from += 5) {
          List<String> values = new ArrayList<>();
          for (int r = from; r < Math.min(rows, from + 5); r++) {
            String key = random.nextInt(8) == 0 ? "NULL" : Integer.toString(random.nextInt(41) - 20);
            values.add("(" + key + ", " + random.nextInt(10) + ")");
          }
          String insert = "INSERT INTO " + t[0] + " VALUES " + String.join(", ", values);
          s.update(insert);
          d.execute(insert);
        }
      }
    }
  }

  private static void run(GpuSession s) throws Exception {
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
      load(s, duck);
      assertTrue(s.catalog().shape("a").chunks() > 3, "a is chunked");
      // b's 45 rows of 16 bytes by the estimate, against a bound of 200: several partitions
      s.catalog().partitionBytes(200);
      List<String> failures = new ArrayList<>();
      for (Case c : CASES) {
        long before = s.catalog().chunkScans().partitioned();
        List<Object[]> got;
        try (VectorSchemaRoot r = s.query(c.sql())) {
          got = TpchAnswers.rows(r);
        }
        boolean partitioned = s.catalog().chunkScans().partitioned() > before;
        try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(c.sql())) {
          String difference = TpchAnswers.differenceUpToTies(TpchAnswers.rows(rs), got);
          if (difference != null || partitioned != c.partitions()) {
            failures.add(c.sql() + ": " + (difference != null ? difference : "partitioned " + partitioned));
          }
        }
      }
      assertEquals(List.of(), failures);
      // the chained join on one key keeps a's partitions: each chunk of a is read once in each partition,
      // not once per pair of partitions of the two joins
      String plan = s.explain("SELECT a.k, a.v, b.w, c.x FROM a JOIN b ON a.k = b.k JOIN c ON c.k = a.k");
      Matcher scansOfA = Pattern.compile("table=\\[\\[a, chunk (\\d+), part (\\d+) of (\\d+)").matcher(plan);
      java.util.Set<String> read = new java.util.HashSet<>();
      java.util.Set<String> counts = new java.util.HashSet<>();
      int scans = 0;
      while (scansOfA.find()) {
        scans++;
        read.add(scansOfA.group(1) + "/" + scansOfA.group(2));
        counts.add(scansOfA.group(3));
      }
      assertEquals(1, counts.size(), plan);
      int parts = Integer.parseInt(counts.iterator().next());
      assertTrue(parts > 1, plan);
      assertEquals(parts * s.catalog().shape("a").chunks(), read.size(), plan);
      assertEquals(read.size(), scans, plan);
      // without a bound small enough nothing partitions, and the answers are the same
      s.catalog().partitionBytes(Long.MAX_VALUE);
      long before = s.catalog().chunkScans().partitioned();
      try (VectorSchemaRoot r = s.query(CASES.get(1).sql())) {
        assertTrue(r.getRowCount() > 60, "a left join keeps every row of a, and repeats those with several matches");
      }
      assertEquals(before, s.catalog().chunkScans().partitioned());
    }
  }

  @Test
  void partitionedJoinsOnTheCpuAgreeWithDuckDb() throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      run(s);
    }
  }

  @RequiresGpu
  @Test
  void partitionedJoinsOnTheGpuAgreeWithDuckDb() throws Exception {
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
        GpuSession s = GpuSession.gpu(gpu, allocator)) {
      run(s);
    }
  }

  @Test
  void partitionCountsArePrimesUpToTheCap() {
    assertEquals(2, JoinPartitioning.parts(0.5));
    assertEquals(2, JoinPartitioning.parts(2));
    assertEquals(5, JoinPartitioning.parts(4.2));
    assertEquals(61, JoinPartitioning.parts(60.5));
    assertEquals(JoinPartitioning.MAX_PARTS, JoinPartitioning.parts(1e9));
  }
}
