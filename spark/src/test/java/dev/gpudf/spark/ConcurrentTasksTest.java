package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spark.gpudf.concurrentTasks=1} in Spark {@code local[2]}: the 22 TPC-H queries (SF0.01)
 * answer as Spark alone does, and no two tasks ever worked in gpudf at once (without the cap the
 * two task threads overlap there).
 */
class ConcurrentTasksTest {
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TpchSpark.over(LocalSpark.builder("gpudf-turns", "cpu").config(GpudfBackend.CONCURRENT_TASKS_CONF, "1")
        .getOrCreate(), dir, 0.01, 2);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void oneTaskWorksAtATime() {
    TpchThroughSparkTest.runAll(spark, "one task at a time");
    assertEquals(1, GpudfBackend.get().mostWorking(), "tasks working in gpudf at once");
  }
}
