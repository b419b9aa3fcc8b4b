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
    TpchThroughSparkTest.Counts c = TpchThroughSparkTest.runAll(spark, "gpu backend");
    assertEquals("gpu", GpudfBackend.get().name());
    long batches = GpudfBackend.get().deviceBatches() - before;
    System.out.println("TPC-H SF0.01 through Spark on gpudf's GPU backend: " + batches + " batches went to the device");
    assertTrue(batches >= 100, batches + " batches on the device");
    assertTrue(c.joins >= 20, c.joins + " joins on gpudf");
    assertEquals(5, c.topNs, "top-Ns on gpudf");
  }
}
