package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The 22 TPC-H queries (SF0.01) through a Spark cluster of two executors, each a JVM of its own
 * with gpudf's plugin on the CPU backend ({@link LocalCluster}): every answer as Spark alone gives
 * it, gpudf's operators ran in both executors, and neither holds memory after its tasks.
 */
class ClusterTpchThroughSparkTest {
  private static final int EXECUTORS = 2;
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalCluster.builder("gpudf-cluster", "cpu", EXECUTORS, 1, 1024, 0, null).getOrCreate();
    assertTrue(LocalCluster.awaitExecutors(spark, EXECUTORS, 120), "executors up within 120 s");
    TpchSpark.over(spark, dir, 0.01, EXECUTORS);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void everyQueryAnswersAsSparkAloneDoesOnTwoExecutors() {
    TpchThroughSparkTest.Counts c = TpchThroughSparkTest.runAll(spark, "two executors");
    assertTrue(c.withGpudf.size() >= 15, "gpudf operators ran in " + c.withGpudf);
    // each executor says how many gpudf task operators it ran and what its tasks still hold; many
    // small tasks, so that each executor runs some
    int probes = EXECUTORS * 8;
    List<String> said = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(IntStream.range(0, probes).boxed().toList(), probes)
        .mapPartitions(it -> List.of(SparkEnv.get().executorId() + " " + GpudfBackend.get().tasks() + " "
            + GpudfBackend.get().allocatedBytes()).iterator())
        .collect();
    Map<String, long[]> byExecutor = new TreeMap<>();
    for (String s : said) {
      String[] f = s.split(" ");
      byExecutor.put(f[0], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
    }
    System.out.println("gpudf task operators and bytes held, by executor: " + byExecutor.entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue()[0] + "/" + e.getValue()[1]).toList());
    assertEquals(EXECUTORS, byExecutor.size(), "executors that answered " + said);
    // the gpudf operators' metrics come back to the driver from the executors' JVMs
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> q1 = spark.sql(dev.gpudf.sql.TpchTables.queries(0.01).get("q1"));
    q1.collectAsList();
    long[] m = SparkTpchBench.metricSums(q1.queryExecution().executedPlan());
    System.out.println("q1's gpudf metrics: " + java.util.Arrays.toString(m));
    assertTrue(m[0] >= EXECUTORS, m[0] + " gpudf tables run on");
    assertTrue(m[3] > 0 && m[4] > 0, "time from Spark and in operations: " + java.util.Arrays.toString(m));
    assertEquals(0, m[1], "bytes to the device on the CPU backend");
    for (Map.Entry<String, long[]> e : byExecutor.entrySet()) {
      assertTrue(e.getValue()[0] > 0, "executor " + e.getKey() + " ran no gpudf operator");
      assertEquals(0, e.getValue()[1], "bytes executor " + e.getKey() + " holds after its tasks");
    }
  }
}
