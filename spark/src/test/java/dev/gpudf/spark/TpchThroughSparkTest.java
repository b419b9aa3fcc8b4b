package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.TpchTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The 22 TPC-H queries through Spark SQL over Parquet (SF0.01, generated here), with gpudf's rule
 * on and off in one Spark {@code local[2]}: every answer the same, and the plans show how many
 * operators gpudf ran (a rule that replaced nothing fails the test).
 */
class TpchThroughSparkTest {
  /** TPC-H's scale: 0.01 unless {@code -Dgpudf.spark.tpchScale} says (a larger one for figures, off CI). */
  private static final double SCALE = Double.parseDouble(System.getProperty("gpudf.spark.tpchScale", "0.01"));
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TpchSpark.local("gpudf-tpch", "cpu", dir, SCALE);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void everyQueryAnswersAsSparkAloneDoes() {
    Counts c = runAll(spark, "shuffled joins");
    assertTrue(c.joins >= 20, c.joins + " joins on gpudf");
    assertTrue(c.sorts >= 20, c.sorts + " sorts on gpudf");
    // q2, q3, q10, q18 and q21 end in ORDER BY ... LIMIT
    assertEquals(5, c.topNs, "top-Ns on gpudf");
    // every hash and single-partition shuffle above a gpudf operator (a global sort's range
    // partitioning stays Spark's)
    assertTrue(c.exchanges >= 100, c.exchanges + " shuffles on gpudf");
    assertTrue(c.aggregates >= 10, c.aggregates + " aggregates on gpudf");
    assertTrue(c.finals >= 10, c.finals + " final aggregates on gpudf");
    assertTrue(c.withGpudf.size() >= 15, "gpudf operators ran in " + c.withGpudf);
  }

  /** With Spark's broadcasts on (its default threshold: every dimension table of SF0.01 is broadcast), joins broadcast on gpudf. */
  @Test
  void everyQueryAnswersAsSparkAloneDoesWithBroadcastJoins() {
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "10MB");
    try {
      Counts c = runAll(spark, "broadcast joins");
      assertTrue(c.broadcastJoins >= 20, c.broadcastJoins + " broadcast joins on gpudf");
      assertTrue(c.withGpudf.size() >= 15, "gpudf operators ran in " + c.withGpudf);
    } finally {
      spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    }
  }

  /**
   * Spark's Parquet reader at 100 rows a batch, rows turned into batches of 50 (a shuffle's output,
   * read by gpudf's operators above it) and gpudf gathering 250 rows at a time: each operator's
   * input comes in many gathered tables a task (the default gathers all of SF0.01's batches into
   * one), and every answer is still Spark's.
   */
  @Test
  void everyQueryAnswersAsSparkAloneDoesWithSmallBatchesGathered() {
    spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", "100");
    spark.conf().set("spark.sql.inMemoryColumnarStorage.batchSize", "50");
    spark.conf().set(GpudfExec.BATCH_ROWS, "250");
    // Spark's reader, whose small batches the operators gather (gpudf's scan gives a row group a batch)
    spark.conf().set(GpudfParquetScanExec.ENABLED, "false");
    try {
      Counts c = runAll(spark, "small batches");
      assertTrue(c.withGpudf.size() >= 15, "gpudf operators ran in " + c.withGpudf);
      assertEquals(0, c.scans, "Parquet scans on gpudf");
    } finally {
      spark.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
      spark.conf().unset("spark.sql.inMemoryColumnarStorage.batchSize");
      spark.conf().unset(GpudfExec.BATCH_ROWS);
      spark.conf().unset(GpudfParquetScanExec.ENABLED);
    }
  }

  /**
   * Spark's defaults for plans: adaptive execution (each stage planned as the one before it ends,
   * gpudf's rule run on each) and broadcasts at their default threshold. Every answer is Spark's,
   * and the final plans hold gpudf's operators.
   */
  @Test
  void everyQueryAnswersAsSparkAloneDoesWithAdaptiveExecution() {
    spark.conf().set("spark.sql.adaptive.enabled", "true");
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "10MB");
    try {
      Counts c = runAll(spark, "adaptive execution");
      assertTrue(c.withGpudf.size() >= 15, "gpudf operators ran in " + c.withGpudf);
    } finally {
      spark.conf().set("spark.sql.adaptive.enabled", "false");
      spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    }
  }

  /** A batch size that is not a positive number of rows is the user's error, named. */
  @Test
  void aBadBatchSizeIsNamed() {
    spark.conf().set(GpudfExec.BATCH_ROWS, "0");
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    try {
      Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
          () -> spark.sql("SELECT l_orderkey FROM lineitem WHERE l_quantity > 10").collectAsList());
      assertTrue(String.valueOf(e.getMessage()).contains(GpudfExec.BATCH_ROWS + "=0 must be at least 1"), e.getMessage());
    } finally {
      spark.conf().unset(GpudfExec.BATCH_ROWS);
    }
  }

  /** What the gpudf plans of the 22 queries held. */
  static final class Counts {
    int filters;
    int projects;
    int aggregates;
    int finals;
    int joins;
    int broadcastJoins;
    int sorts;
    int topNs;
    int scans;
    int exchanges;
    final List<String> withGpudf = new ArrayList<>();
  }

  /** The 22 queries with gpudf's rule off, then on: each answer the same; what gpudf ran, counted and printed. */
  static Counts runAll(SparkSession spark, String what) {
    Counts c = new Counts();
    long splitsToSpark = GpudfBackend.get().splitsLeftToSpark();
    double sparkMs = 0;
    double gpudfMs = 0;
    for (Map.Entry<String, String> q : TpchTables.queries(SCALE).entrySet()) {
      long t0 = System.nanoTime();
      List<String> want = rows(spark, q.getValue(), false);
      long t1 = System.nanoTime();
      spark.conf().set(GpudfOverrides.ENABLED, "true");
      org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> ran = spark.sql(q.getValue());
      List<String> got = ran.collectAsList().stream().map(org.apache.spark.sql.Row::toString).sorted().toList();
      long t2 = System.nanoTime();
      sparkMs += (t1 - t0) / 1e6;
      gpudfMs += (t2 - t1) / 1e6;
      System.out.printf("TPC-H %s through Spark (%s): %.0f ms alone, %.0f ms with gpudf%n", q.getKey(), what,
          (t1 - t0) / 1e6, (t2 - t1) / 1e6);
      assertEquals(want, got, q.getKey());
      assertTrue(!want.isEmpty() || q.getKey().equals("q15") || q.getKey().equals("q19"), q.getKey() + " answers rows");
      // the plan that ran (with adaptive execution, its final one, made stage by stage as it ran)
      String plan = ran.queryExecution().executedPlan().toString();
      int f = count(plan, "GpudfFilter");
      int p = count(plan, "GpudfProject");
      int a = count(plan, "GpudfHashAggregate");
      c.joins += count(plan, "GpudfShuffledHashJoin");
      c.broadcastJoins += count(plan, "GpudfBroadcastHashJoin");
      c.sorts += count(plan, "GpudfSort");
      c.topNs += count(plan, "GpudfTopN");
      c.scans += count(plan, "GpudfParquetScan");
      c.exchanges += count(plan, "GpudfShuffleExchange");
      c.filters += f;
      c.projects += p;
      c.aggregates += a;
      c.finals += finals(plan);
      if (f + p + a > 0) {
        c.withGpudf.add(q.getKey());
      }
    }
    System.out.printf("TPC-H SF%s through Spark (%s): 22 answers agree; gpudf ran %d Parquet scans, %d filters, %d"
        + " projections, %d aggregates (%d of them final), %d shuffled joins, %d broadcast joins, %d sorts, %d top-Ns and %d"
        + " shuffles, in %s;"
        + " all 22"
        + " (each planned and run once, Spark alone first): %.0f ms alone, %.0f ms with gpudf%n", SCALE, what, c.scans,
        c.filters, c.projects, c.aggregates, c.finals, c.joins, c.broadcastJoins, c.sorts, c.topNs, c.exchanges, c.withGpudf, sparkMs,
        gpudfMs);
    // every table scan of the 22 (Spark-written files: gpudf's reader takes every split of them)
    assertTrue(c.scans >= 80 || "false".equals(spark.conf().get(GpudfParquetScanExec.ENABLED, "true")),
        c.scans + " Parquet scans on gpudf");
    if (spark.sparkContext().isLocal()) {
      // the tasks ran in this JVM (a cluster's executors are checked by their own test)
      assertEquals(0, GpudfBackend.get().allocatedBytes(), "bytes held after every task completed");
      assertEquals(splitsToSpark, GpudfBackend.get().splitsLeftToSpark(), "splits left to Spark's Parquet reader");
    }
    return c;
  }

  /** The final aggregates gpudf ran: a GpudfHashAggregate node whose functions are there and not partial ones. */
  private static int finals(String plan) {
    return (int) plan.lines().filter(l -> l.matches(".*GpudfHashAggregate \\[[^]]*], \\[(?!partial_)[a-z].*")).count();
  }

  private static int count(String text, String word) {
    return text.split(word, -1).length - 1;
  }

  private static List<String> rows(SparkSession spark, String sql, boolean gpudf) {
    return LocalSpark.rows(spark, sql, gpudf);
  }
}
