package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.testing.RequiresGpu;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TpchThroughSparkTest} on gpudf's GPU backend ({@code spark.gpudf.backend=gpu}): the 22
 * TPC-H queries through Spark (SF0.01) with the rule off and on answer alike, and the operators'
 * batches went to the device (a backend that quietly stayed on the CPU fails).
 */
@RequiresGpu
class GpuTpchThroughSparkTest {
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TpchSpark.local("gpudf-tpch-gpu", "gpu", dir, 0.01);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void everyQueryAnswersAsSparkAloneDoesOnTheDevice() {
    long before = GpudfBackend.get().deviceBatches();
    long bytesBefore = GpudfBackend.get().bytesToDevice();
    long keptBefore = GpudfBackend.get().batchesKeptOnDevice();
    TpchThroughSparkTest.Counts c = TpchThroughSparkTest.runAll(spark, "gpu backend");
    assertEquals("gpu", GpudfBackend.get().name());
    long batches = GpudfBackend.get().deviceBatches() - before;
    assertTrue(GpudfBackend.get().bytesToDevice() > bytesBefore, "bytes counted to the device");
    long kept = GpudfBackend.get().batchesKeptOnDevice() - keptBefore;
    System.out.println("TPC-H SF0.01 through Spark on gpudf's GPU backend: " + batches + " batches went to the device, "
        + kept + " passed from one gpudf operator to the next there");
    assertTrue(batches >= 100, batches + " batches on the device");
    // a filter under a projection under a partial aggregate, in each of the 22
    assertTrue(kept >= 50, kept + " batches passed on the device");
    assertTrue(c.joins >= 20, c.joins + " joins on gpudf");
    assertEquals(5, c.topNs, "top-Ns on gpudf");
  }

  /**
   * gpudf's Parquet scan on the device: a partitioned table (int, string and date partition columns,
   * a NULL value among them) in small row groups, read in 64 KB splits that cut its files: every
   * row, its partition values, aggregates over it and filters that skip row groups answer as Spark
   * alone; the decoded batches went to the device, and no split was left to Spark's reader.
   */
  @Test
  void parquetScansOnTheDevice() {
    Path parted = dir.resolve("parted");
    spark.sql("SELECT id, CAST(id % 11 AS INT) AS k, IF(id % 9 = 0, NULL, concat('v', CAST(id % 13 AS STRING))) AS s,"
        + " CAST(id % 1000 AS DECIMAL(15, 2)) AS m, CAST(id % 3 AS INT) AS p,"
        + " CASE WHEN id % 4 = 0 THEN NULL ELSE concat('é', CAST(id % 4 AS STRING)) END AS q,"
        + " date_add(DATE '2020-01-01', CAST(id % 2 AS INT)) AS day FROM range(0, 200000, 1, 2)")
        .write().option("parquet.block.size", "32768").partitionBy("p", "q", "day").parquet(parted.toString());
    spark.read().parquet(parted.toString()).createOrReplaceTempView("parted");
    spark.conf().set("spark.sql.files.maxPartitionBytes", "65536");
    spark.conf().set("spark.sql.files.openCostInBytes", "0");
    long toSpark = GpudfBackend.get().splitsLeftToSpark();
    long before = GpudfBackend.get().deviceBatches();
    long skipped = GpudfBackend.get().rowGroupsSkipped();
    try {
      for (String sql : java.util.List.of("SELECT * FROM parted",
          "SELECT p, q, day, COUNT(*), SUM(id), MAX(s), SUM(m) FROM parted GROUP BY p, q, day",
          "SELECT id, q, s FROM parted WHERE p = 1 AND q IS NULL AND id BETWEEN 1000 AND 1200",
          "SELECT k, COUNT(*) FROM parted WHERE id >= 150000 OR id < 10 GROUP BY k")) {
        spark.conf().set(GpudfOverrides.ENABLED, "false");
        java.util.List<String> want = rows(sql);
        spark.conf().set(GpudfOverrides.ENABLED, "true");
        assertEquals(want, rows(sql), sql);
        assertTrue(spark.sql(sql).queryExecution().executedPlan().toString().contains("GpudfParquetScan"), sql);
      }
    } finally {
      spark.conf().unset("spark.sql.files.maxPartitionBytes");
      spark.conf().unset("spark.sql.files.openCostInBytes");
    }
    assertEquals(toSpark, GpudfBackend.get().splitsLeftToSpark(), "splits left to Spark's reader");
    assertTrue(GpudfBackend.get().deviceBatches() > before, "the scans' batches went to the device");
    assertTrue(GpudfBackend.get().rowGroupsSkipped() > skipped, "row groups skipped");
    System.out.println("gpudf's Parquet scan on the device: " + (GpudfBackend.get().deviceBatches() - before)
        + " batches went to the device, " + (GpudfBackend.get().rowGroupsSkipped() - skipped) + " row groups skipped");
  }

  /**
   * A batch the device has no memory for (the pool's injected failure, at several points of q1's
   * and q6's work: uploads, kernels' buffers, results; and of q3's and q14's shuffled joins: a build
   * side's upload, a probe) runs on the CPU: the answer is Spark's, and the batch is counted.
   * Without the fallback the task, and so the query, fails. Each query runs with gpudf's Parquet scan
   * (whose decoding takes the first allocations, so the failures fall there) and with Spark's (so
   * they fall in the other operators).
   */
  @Test
  void aBatchWithoutDeviceMemoryRunsOnTheCpu() {
    java.util.Map<String, String> queries = dev.gpudf.sql.TpchTables.queries(0.01);
    long before = GpudfBackend.get().hostBatches();
    for (String q : java.util.List.of("q1", "q6", "q3", "q14")) {
      spark.conf().set(GpudfOverrides.ENABLED, "false");
      java.util.List<String> want = rows(queries.get(q));
      spark.conf().set(GpudfOverrides.ENABLED, "true");
      for (String scan : new String[] {"true", "false"}) {
        spark.conf().set(GpudfParquetScanExec.ENABLED, scan);
        for (int k : new int[] {1, 2, 5, 20}) {
          GpudfBackend.get().gpu().pool().failAllocation(k);
          try {
            assertEquals(want, rows(queries.get(q)), q + " with allocation " + k + " failing, gpudf's scan " + scan);
          } finally {
            GpudfBackend.get().gpu().pool().failAllocation(0);
            spark.conf().unset(GpudfParquetScanExec.ENABLED);
          }
        }
      }
    }
    long ran = GpudfBackend.get().hostBatches() - before;
    System.out.println("q1, q6, q3 and q14 with device allocations failing: " + ran + " batches ran on the CPU");
    assertTrue(ran >= 24, ran + " batches ran on the CPU");
  }

  private static java.util.List<String> rows(String sql) {
    return spark.sql(sql).collectAsList().stream().map(org.apache.spark.sql.Row::toString).sorted().toList();
  }
}
