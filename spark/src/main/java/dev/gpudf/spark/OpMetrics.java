package dev.gpudf.spark;

import java.io.Serializable;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;

/**
 * What one gpudf operator's tasks did, as Spark SQL metrics (made on the driver with the plan,
 * shipped with the tasks, summed back by Spark: they show in Spark's UI and in the plan's metrics,
 * executors in other JVMs included); the bytes to the device also go to the executor's {@link
 * GpudfBackend}, which the tests read.
 */
record OpMetrics(SQLMetric tables, SQLMetric toDevice, SQLMetric toHost, SQLMetric fromSparkTime,
    SQLMetric operationTime, SQLMetric toSparkTime) implements Serializable {

  /** Where a gpudf operator's task time goes. */
  enum Phase {
    /** Spark's batches made gpudf tables on the host (copied into Arrow, gathered). */
    FROM_SPARK,
    /** The operation: its input copied to the device, the kernels, the wait for them (all of it on the CPU backend). */
    OPERATION,
    /** Device results Spark reads, copied back to the host. */
    TO_SPARK
  }

  /** The metrics' names in the plan, in the order of the record's fields. */
  static final String[] NAMES = {"gpudfTables", "gpudfBytesToDevice", "gpudfBytesToHost", "gpudfFromSparkTime",
      "gpudfOperationTime", "gpudfToSparkTime"};

  /** New metrics, on the driver. */
  static OpMetrics create(SparkContext sc) {
    return new OpMetrics(SQLMetrics.createMetric(sc, "gpudf tables run on"),
        SQLMetrics.createSizeMetric(sc, "bytes copied to the device", -1L),
        SQLMetrics.createSizeMetric(sc, "bytes copied back to the host", -1L),
        SQLMetrics.createNanoTimingMetric(sc, "time making Spark's batches gpudf tables", -1L),
        SQLMetrics.createNanoTimingMetric(sc, "time in gpudf operations (copies up, kernels, waits)", -1L),
        SQLMetrics.createNanoTimingMetric(sc, "time copying device results back for Spark", -1L));
  }

  /** The metrics by name, for {@link org.apache.spark.sql.execution.SparkPlan#metrics}. */
  SQLMetric[] all() {
    return new SQLMetric[] {tables, toDevice, toHost, fromSparkTime, operationTime, toSparkTime};
  }

  void ranOn() {
    tables.add(1);
  }

  void copiedToDevice(long bytes) {
    toDevice.add(bytes);
    GpudfBackend.get().copiedToDevice(bytes);
  }

  void copiedToHost(long bytes) {
    toHost.add(bytes);
  }

  /** Adds the time since {@code startNanos} (a {@link System#nanoTime}) to {@code phase}. */
  void spent(Phase phase, long startNanos) {
    long nanos = System.nanoTime() - startNanos;
    (switch (phase) {
      case FROM_SPARK -> fromSparkTime;
      case OPERATION -> operationTime;
      case TO_SPARK -> toSparkTime;
    }).add(nanos);
  }
}
