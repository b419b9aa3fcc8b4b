package dev.gpudf.spark;

import org.apache.spark.sql.SparkSession;

/** The tests' Spark: {@code local[2]} with gpudf's plugin and extensions. */
final class LocalSpark {
  private LocalSpark() {}

  /**
   * A session named {@code app}: two shuffle partitions, plans fixed when made (no adaptive
   * execution, so that the plan a test reads is the one that ran), and joins by shuffles
   * (sort-merge in Spark) rather than broadcasts, so that they run on gpudf.
   */
  static SparkSession start(String app) {
    return start(app, "cpu");
  }

  /** {@link #start(String)} on gpudf's backend {@code backend} ({@code cpu} or {@code gpu}). */
  static SparkSession start(String app, String backend) {
    return builder(app, backend).getOrCreate();
  }

  /** {@link #start(String, String)}'s builder, for a test that sets more. */
  static SparkSession.Builder builder(String app, String backend) {
    return SparkSession.builder().master("local[2]").appName(app)
        .config("spark.plugins", GpudfPlugin.class.getName())
        .config(GpudfBackend.BACKEND_CONF, backend)
        .config("spark.sql.extensions", GpudfExtensions.class.getName())
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1");
  }

  /** The rows of {@code sql} in {@code spark} with gpudf's rule on or off, as sorted strings. */
  static java.util.List<String> rows(SparkSession spark, String sql, boolean gpudf) {
    spark.conf().set(GpudfOverrides.ENABLED, String.valueOf(gpudf));
    return spark.sql(sql).collectAsList().stream().map(org.apache.spark.sql.Row::toString).sorted().toList();
  }
}
