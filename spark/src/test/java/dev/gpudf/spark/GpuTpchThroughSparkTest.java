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
