package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark {@code local[2]} with the plugin and the extensions, gpudf's CPU backend: queries over a
 * Parquet table answer as Spark alone does (the same session with the rule turned off), the plan
 * shows which operators gpudf ran, and the ones it must not take stay Spark's.
 */
class GpudfExtensionsTest {
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSpark.start("gpudf-test");
    // 10,000 rows over 3 files: NULLs in v and name, dates, decimals, non-ASCII strings, and LIKE's
    // wildcards in some strings (so that Parquet's dictionary filter keeps the row groups a test of them reads)
    spark.range(0, 10_000, 1, 3).selectExpr("id", "CAST(id % 97 AS INT) AS k",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id * 0.5 AS DOUBLE) END AS v",
        "CASE WHEN id % 13 = 0 THEN NULL WHEN id % 17 = 0 THEN concat('a_', CAST(id % 5 AS STRING), '%')"
            + " ELSE concat(IF(id % 2 = 0, 'né', 'n'), CAST(id % 50 AS STRING)) END AS name",
        "date_add(DATE '2024-01-01', CAST(id % 400 AS INT)) AS d",
        "CAST((id % 1000) * 0.25 AS DECIMAL(12, 2)) AS price", "CAST(id % 7 AS INT) AS g",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 100 AS DECIMAL(12, 1)) END AS q")
        .write().parquet(dir.resolve("t").toString());
    spark.read().parquet(dir.resolve("t").toString()).createOrReplaceTempView("t");
    // a second table to join: (k, name) pairs with their counts, NULL names among them
    spark.sql("SELECT k AS uk, name AS un, COUNT(*) AS c FROM t WHERE id % 3 <> 0 GROUP BY k, name").write()
        .parquet(dir.resolve("u").toString());
    spark.read().parquet(dir.resolve("u").toString()).createOrReplaceTempView("u");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  /** The rows of {@code sql} with gpudf's rule on or off, as sorted strings, and whether gpudf ran {@code node}. */
  private static List<String> rows(String sql, boolean gpudf) {
    return LocalSpark.rows(spark, sql, gpudf);
  }

  private static String plan(String sql) {
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    return spark.sql(sql).queryExecution().executedPlan().toString();
  }

  private static void sameAnswer(String sql, String... gpudfNodes) {
    List<String> want = rows(sql, false);
    List<String> got = rows(sql, true);
    assertEquals(want, got, sql);
    String plan = plan(sql);
    for (String node : gpudfNodes) {
      assertTrue(plan.contains(node), sql + " runs " + node + " on gpudf:\n" + plan);
    }
  }

  @Test
  void filtersAndProjectionsAnswerAsSparkDoes() {
    sameAnswer("SELECT id, k, v, name, d, price FROM t WHERE v > 100 AND name <> 'né4'", "GpudfFilter");
    sameAnswer("SELECT id, name FROM t WHERE name IS NULL OR d >= DATE '2024-12-01'", "GpudfFilter");
    sameAnswer("SELECT id, price FROM t WHERE price < 10.5 AND price > 2", "GpudfFilter");
    sameAnswer("SELECT id FROM t WHERE NOT (k = 3) AND v IS NOT NULL AND k <= 5", "GpudfFilter");
    // projections: comparisons, IS NULL, floating-point arithmetic, integer arithmetic (Spark 4 runs ANSI mode)
    sameAnswer("SELECT id, v * 2.0 + 1.5 AS w, k > 50 AS big, name IS NULL AS anon, k + 1 AS k1 FROM t WHERE id < 500",
        "GpudfProject", "GpudfFilter");
    sameAnswer("SELECT COUNT(*), SUM(v), MIN(name), MAX(d) FROM t WHERE k < 20", "GpudfFilter");
    // IN lists (short, and long ones the optimizer makes a set), LIKE and its shorthands, year()
    sameAnswer("SELECT id FROM t WHERE k IN (1, 5, 7) OR name IN ('né2', 'n3')", "GpudfFilter");
    sameAnswer("SELECT id FROM t WHERE k IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)",
        "GpudfFilter");
    sameAnswer("SELECT id, name FROM t WHERE name LIKE 'n_1%' OR name LIKE '%é4'", "GpudfFilter");
    sameAnswer("SELECT id FROM t WHERE startswith(name, 'né1') OR endswith(name, '9') OR contains(name, 'é3')", "GpudfFilter");
    // wildcards in the text of startswith/contains are matched as themselves
    sameAnswer("SELECT id FROM t WHERE contains(name, '_') OR startswith(name, '%') OR endswith(name, 'n%')", "GpudfFilter");
    sameAnswer("SELECT id, year(d) AS y FROM t WHERE year(d) = 2025", "GpudfProject", "GpudfFilter");
    // CASE WHEN: NULL conditions not taken, no ELSE (NULL), strings, decimals, nested, in a filter
    sameAnswer("SELECT id, CASE WHEN v > 500 THEN 1 WHEN name IS NULL THEN 2 ELSE 0 END AS c,"
        + " CASE WHEN k < 10 THEN name END AS n, CASE WHEN d >= DATE '2024-12-01' THEN price ELSE 0 END AS p,"
        + " CASE WHEN v IS NULL THEN 'none' WHEN v > 100 THEN CASE WHEN k > 50 THEN 'big' ELSE 'mid' END ELSE 'low' END AS s"
        + " FROM t WHERE id < 700", "GpudfProject", "GpudfFilter");
    sameAnswer("SELECT id FROM t WHERE CASE WHEN name LIKE 'n%' THEN k ELSE v END > 40", "GpudfFilter");
    sameAnswer("SELECT g, SUM(CASE WHEN name LIKE 'né%' THEN 1 ELSE 0 END) AS accented FROM t GROUP BY g",
        "GpudfHashAggregate");
    // substring by characters (non-ASCII names), past the end, NULLs; a start of 0 or below stays Spark's
    sameAnswer("SELECT id, substring(name, 1, 2) AS a, substring(name, 3, 10) AS b, substr(name, 2) AS c FROM t"
        + " WHERE substring(name, 1, 2) IN ('né', 'n1')", "GpudfProject", "GpudfFilter");
    String fromEnd = "SELECT id, substring(name, -2, 2) AS e, substring(name, 0, 2) AS z FROM t WHERE id < 50";
    assertEquals(rows(fromEnd, false), rows(fromEnd, true));
    assertFalse(plan(fromEnd).contains("GpudfProject"), plan(fromEnd));
    // casts to a decimal that holds every value exactly; one that could round or overflow stays Spark's
    sameAnswer("SELECT id, CAST(k AS DECIMAL(12, 1)) AS kd, CAST(price AS DECIMAL(16, 4)) AS p4 FROM t"
        + " WHERE CAST(k AS DECIMAL(10, 0)) > 40", "GpudfProject", "GpudfFilter");
    String rounding = "SELECT id, CAST(price AS DECIMAL(5, 1)) AS p1 FROM t WHERE id < 60";
    assertEquals(rows(rounding, false), rows(rounding, true));
    assertFalse(plan(rounding).contains("GpudfProject"), plan(rounding));
    // decimal arithmetic where Spark's result keeps the exact scale
    sameAnswer("SELECT id, price * (1 - price / 1000) AS p FROM t WHERE price * 2 > 300", "GpudfFilter");
  }

  /**
   * The merge of a DISTINCT's groups after the shuffle runs on its partition's whole input: here
   * that input comes in batches of 7 rows gathered 10 at a time, and a key in two of them still
   * comes out once (before, once per gathered batch: COUNT(DISTINCT) counted it again).
   */
  @Test
  void aDistinctsMergeTakesItsWholePartition() {
    inSmallBatches(() -> {
      sameAnswer("SELECT k, COUNT(*) AS c FROM (SELECT DISTINCT k FROM t) GROUP BY k", "GpudfHashAggregate");
      sameAnswer("SELECT g, COUNT(DISTINCT k) FROM t GROUP BY g", "GpudfHashAggregate");
      sameAnswer("SELECT DISTINCT g, k FROM t WHERE id < 5000", "GpudfHashAggregate");
    });
  }

  /** {@code test} with a partition's input in batches of 7 rows gathered 10 at a time, over 2 shuffle partitions. */
  private static void inSmallBatches(Runnable test) {
    String partitions = spark.conf().get("spark.sql.shuffle.partitions");
    spark.conf().set("spark.sql.inMemoryColumnarStorage.batchSize", "7");
    spark.conf().set(GpudfExec.BATCH_ROWS, "10");
    spark.conf().set("spark.sql.shuffle.partitions", "2");
    try {
      test.run();
    } finally {
      spark.conf().unset("spark.sql.inMemoryColumnarStorage.batchSize");
      spark.conf().unset(GpudfExec.BATCH_ROWS);
      spark.conf().set("spark.sql.shuffle.partitions", partitions);
    }
  }

  @Test
  void partialAggregatesRunOnGpudfAndSparkMergesThem() {
    sameAnswer("SELECT k, COUNT(*), COUNT(name), MIN(name), MAX(d), SUM(id), SUM(k), SUM(price), AVG(price) FROM t GROUP BY k",
        "GpudfHashAggregate");
    // no keys; a group whose values are all NULL; an empty input
    sameAnswer("SELECT COUNT(*), SUM(price), AVG(price), MIN(v), MAX(name) FROM t WHERE k < 20", "GpudfHashAggregate");
    sameAnswer("SELECT name, SUM(price), AVG(price), COUNT(v) FROM t WHERE id % 13 = 0 OR id < 30 GROUP BY name",
        "GpudfHashAggregate");
    sameAnswer("SELECT k, SUM(price), COUNT(*) FROM t WHERE k > 1000 GROUP BY k", "GpudfHashAggregate");
    // group g = 0 holds only NULLs of q: SUM and AVG are NULL there, COUNT 0 (q is wide enough that Spark keeps
    // its sums decimal rather than summing unscaled longs)
    sameAnswer("SELECT g, SUM(q), AVG(q), COUNT(q), MIN(q) FROM t GROUP BY g", "GpudfHashAggregate");
    sameAnswer("SELECT SUM(price * 3), COUNT(*) FROM t WHERE k > 1000", "GpudfHashAggregate");
  }

  /**
   * COUNT, MIN, MAX and SUM merged after the shuffle on gpudf too, over their partition's whole
   * input in batches of 7 rows gathered 10 at a time: groups all NULL, result expressions over the
   * aggregates, no group at all. AVG's final, a final with no keys and a final sort aggregate stay
   * Spark's.
   */
  @Test
  void finalAggregatesWithKeysRunOnGpudf() {
    inSmallBatches(() -> {
      for (String sql : List.of(
          "SELECT k, COUNT(*), COUNT(name), MIN(d), MAX(id), SUM(id), SUM(k), SUM(price) FROM t GROUP BY k",
          "SELECT g, SUM(q), COUNT(q), MIN(q), MAX(q) FROM t GROUP BY g",
          "SELECT name, SUM(price) * 2 AS p2, COUNT(*) + 1 AS c1, g FROM t WHERE id % 13 = 0 OR id < 30 GROUP BY name, g",
          "SELECT k, SUM(price), COUNT(*) FROM t WHERE k > 1000 GROUP BY k")) {
        sameAnswer(sql, "GpudfHashAggregate");
        assertEquals(2, plan(sql).split("GpudfHashAggregate", -1).length - 1, plan(sql));
      }
      // Spark merges a string's MIN in a sort aggregate, whose output keeps its keys' order: Spark's too
      for (String sql : List.of("SELECT k, AVG(price) FROM t GROUP BY k", "SELECT SUM(price), COUNT(*) FROM t",
          "SELECT k, MIN(name) FROM t GROUP BY k")) {
        sameAnswer(sql, "GpudfHashAggregate");
        assertEquals(1, plan(sql).split("GpudfHashAggregate", -1).length - 1, plan(sql));
      }
    });
  }

  /**
   * A decimal sum that overflowed in a partial aggregate of Spark's (a float's remainder keeps it
   * there) reaches the final as NULL and not empty: Spark's ANSI mode fails there, and so does the
   * final on gpudf, rather than summing the other partials.
   */
  @Test
  void aPartialSumThatOverflowedFailsTheFinalOnGpudf() {
    // a sum that does not overflow first: the final checks every decimal sum, not only its first
    String sql = "SELECT k, SUM(price) AS p, SUM(CAST(v % 3 + 5e36 AS DECIMAL(38, 0))) AS s FROM t GROUP BY k";
    for (boolean gpudf : new boolean[] {false, true}) {
      Exception e = assertThrows(Exception.class, () -> rows(sql, gpudf));
      assertTrue(String.valueOf(e).contains("OVERFLOW") || String.valueOf(e.getCause()).contains("OVERFLOW"), e.toString());
    }
    assertEquals(1, plan(sql).split("GpudfHashAggregate", -1).length - 1, plan(sql));
  }

  @Test
  void shuffledJoinsRunOnGpudf() {
    sameAnswer("SELECT t.id, u.c FROM t JOIN u ON t.k = u.uk AND t.name = u.un", "GpudfShuffledHashJoin");
    // NULL names never match; a residual condition; rows of t without a match keep NULLs
    sameAnswer("SELECT t.id, u.c, u.un FROM t LEFT JOIN u ON t.k = u.uk AND t.name = u.un AND u.c > 20 AND t.v > 100",
        "GpudfShuffledHashJoin");
    sameAnswer("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.uk = t.k AND u.un = t.name AND u.c < 30)",
        "GpudfShuffledHashJoin");
    sameAnswer("SELECT id, name FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.uk = t.k AND u.un = t.name)",
        "GpudfShuffledHashJoin");
    // grouped by the join's key: Spark plans the partial and the final sort aggregate with no shuffle
    // or sort between them, so the partial one stays Spark's (it promises its parent sorted groups;
    // gpudf's come out in first-row order, sorted here only because the join keeps its sorted input)
    sameAnswer("SELECT t.k, MIN(t.name), MAX(u.un), COUNT(*) FROM t JOIN u ON t.k = u.uk GROUP BY t.k",
        "GpudfShuffledHashJoin");
    // an empty build side
    sameAnswer("SELECT t.id FROM t JOIN (SELECT * FROM u WHERE c < 0) x ON t.k = x.uk", "GpudfShuffledHashJoin");
  }

  /** With broadcasts on (u is small), the same joins as broadcast hash joins on gpudf: Spark broadcasts, gpudf joins. */
  @Test
  void broadcastJoinsRunOnGpudf() {
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "10MB");
    try {
      sameAnswer("SELECT t.id, u.c FROM t JOIN u ON t.k = u.uk AND t.name = u.un", "GpudfBroadcastHashJoin");
      // a single integer key (Spark's LongHashedRelation) and NULL names on both sides
      sameAnswer("SELECT t.id, u.un, u.c FROM t JOIN u ON t.k = u.uk WHERE t.id < 700", "GpudfBroadcastHashJoin");
      sameAnswer("SELECT t.id, u.c, u.un FROM t LEFT JOIN u ON t.k = u.uk AND t.name = u.un AND u.c > 20 AND t.v > 100",
          "GpudfBroadcastHashJoin");
      sameAnswer("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.uk = t.k AND u.un = t.name AND u.c < 30)",
          "GpudfBroadcastHashJoin");
      sameAnswer("SELECT id, name FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.uk = t.k AND u.un = t.name)",
          "GpudfBroadcastHashJoin");
      // an empty build side; every build row twice (several rows under one key of two columns)
      sameAnswer("SELECT t.id FROM t JOIN (SELECT * FROM u WHERE c < 0) x ON t.k = x.uk", "GpudfBroadcastHashJoin");
      sameAnswer("SELECT t.id, x.c FROM t JOIN (SELECT * FROM u UNION ALL SELECT * FROM u) x ON t.k = x.uk AND t.name = x.un",
          "GpudfBroadcastHashJoin");
      // built on the left (u broadcast on the left of an inner and a right outer join): the right side
      // probes, and the columns come back in Spark's order, left then right
      sameAnswer("SELECT /*+ BROADCAST(u) */ t.id, u.c, t.name FROM u JOIN t ON t.k = u.uk AND t.name = u.un",
          "GpudfBroadcastHashJoin");
      sameAnswer("SELECT /*+ BROADCAST(u) */ u.un, u.c, t.id, t.v FROM u RIGHT JOIN t ON t.k = u.uk AND t.name = u.un"
          + " AND u.c > 20 AND t.v > 100", "GpudfBroadcastHashJoin");
      String leftBuilt = "SELECT /*+ BROADCAST(u) */ u.*, t.* FROM u JOIN t ON t.k = u.uk";
      sameAnswer(leftBuilt, "GpudfBroadcastHashJoin");
      assertTrue(plan(leftBuilt).contains("BROADCAST_LEFT"), plan(leftBuilt));
      // NOT IN is NULL-aware: it stays on Spark, with the same answer
      String notIn = "SELECT id FROM t WHERE k NOT IN (SELECT uk FROM u WHERE c > 25)";
      assertEquals(rows(notIn, false), rows(notIn, true));
      assertFalse(plan(notIn).contains("GpudfBroadcastHashJoin"), plan(notIn));
    } finally {
      spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    }
  }

  /** The rows of {@code sql} with gpudf's rule off and on, in the order they come. */
  private static void sameRowsInOrder(String sql) {
    spark.conf().set(GpudfOverrides.ENABLED, "false");
    List<String> want = spark.sql(sql).collectAsList().stream().map(Row::toString).toList();
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    List<String> got = spark.sql(sql).collectAsList().stream().map(Row::toString).toList();
    assertEquals(want, got, sql);
  }

  /** Sorts compared in order (ties broken by a unique key): NULLs first or last as asked, NaN, -0.0, non-ASCII strings. */
  @Test
  void sortsRunOnGpudfInSparksOrder() {
    spark.range(0, 2_000, 1, 3).selectExpr("id",
        "CASE WHEN id % 9 = 0 THEN NULL WHEN id % 10 = 1 THEN CAST('NaN' AS DOUBLE) WHEN id % 10 = 2 THEN -0.0D"
            + " WHEN id % 10 = 3 THEN 0.0D WHEN id % 10 = 4 THEN CAST('-Infinity' AS DOUBLE) ELSE (id % 37) - 18.5 END AS x",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE concat(IF(id % 2 = 0, 'é', 'e'), CAST(id % 23 AS STRING)) END AS s",
        "CAST(id % 5 AS INT) AS g").createOrReplaceTempView("sorted_input");
    for (String order : List.of("x ASC NULLS FIRST, id", "x DESC NULLS LAST, id DESC", "s DESC NULLS FIRST, x, id",
        "g, s ASC NULLS LAST, id")) {
      String sql = "SELECT id, x, s, g FROM sorted_input ORDER BY " + order;
      sameRowsInOrder(sql);
      assertTrue(plan(sql).contains("GpudfSort"), sql + " sorts on gpudf:\n" + plan(sql));
    }
  }

  /** ORDER BY ... LIMIT: each partition cut to its first rows on gpudf, the same rows as Spark alone (ties broken by a unique key). */
  @Test
  void topNsRunOnGpudfInSparksOrder() {
    spark.range(0, 3_000, 1, 4).selectExpr("id",
        "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 13 = 1 THEN CAST('NaN' AS DOUBLE) WHEN id % 13 = 2 THEN -0.0D"
            + " ELSE (id % 41) - 20.5 END AS x",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE concat(IF(id % 2 = 0, 'ü', 'u'), CAST(id % 29 AS STRING)) END AS s")
        .createOrReplaceTempView("top_input");
    for (String tail : List.of("x DESC NULLS FIRST, id LIMIT 10", "x ASC NULLS LAST, id LIMIT 1", "s, id DESC LIMIT 37",
        "x, id LIMIT 5000", "s DESC, id LIMIT 0")) {
      String sql = "SELECT id, x, s FROM top_input ORDER BY " + tail;
      sameRowsInOrder(sql);
      if (!tail.endsWith("LIMIT 5000") && !tail.endsWith("LIMIT 0")) {
        assertTrue(plan(sql).contains("GpudfTopN"), sql + " cuts partitions on gpudf:\n" + plan(sql));
      }
    }
  }

  @Test
  void whatGpudfMustNotTakeStaysOnSpark() {
    // a float's remainder stays Spark's (by zero: Spark's error, IEEE's NaN); an integer's goes to
    // gpudf in ANSI mode (negative dividends and divisors keep the dividend's sign in both)
    sameAnswer("SELECT id, (k - 50) % 7 AS m, id % (k - 48) AS n FROM t WHERE id % 7 = 1 AND k <> 48",
        "GpudfFilter", "GpudfProject");
    String floatModulo = "SELECT id FROM t WHERE v % 3 = 0";
    assertEquals(rows(floatModulo, false), rows(floatModulo, true));
    assertFalse(plan(floatModulo).contains("GpudfFilter"), plan(floatModulo));
    // legacy (non-ANSI) integer arithmetic wraps in Spark, and its remainder by zero is NULL
    spark.conf().set("spark.sql.ansi.enabled", "false");
    try {
      String wrapping = "SELECT k * 1000000000 AS big FROM t WHERE k > 90";
      assertEquals(rows(wrapping, false), rows(wrapping, true));
      assertFalse(plan(wrapping).contains("GpudfProject"), plan(wrapping));
      String modulo = "SELECT id FROM t WHERE id % 7 = 1";
      assertEquals(rows(modulo, false), rows(modulo, true));
      assertFalse(plan(modulo).contains("GpudfFilter"), plan(modulo));
    } finally {
      spark.conf().set("spark.sql.ansi.enabled", "true");
    }
  }

  @Test
  void tasksLeaveNoMemoryBehind() {
    rows("SELECT id, v * 2.0 AS w FROM t WHERE v > 3", true);
    // a LIMIT stops reading before the end: the task's completion frees what it held
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    assertEquals(5, spark.sql("SELECT id FROM t WHERE v > 3 LIMIT 5").collectAsList().size());
    assertEquals(0, GpudfBackend.get().allocatedBytes(), "bytes held after every task completed");
  }
}
