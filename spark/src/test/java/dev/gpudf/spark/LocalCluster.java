package dev.gpudf.spark;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * Spark's {@code local-cluster} master with gpudf's plugin: one standalone worker in this JVM that
 * starts {@code executors} executors, each a JVM of its own with {@code cores} cores, {@code
 * memoryMb} MB of heap and {@code gpus} GPUs handed out by the worker (distinct ones, from what
 * {@code scripts/spark-gpus.sh} lists), as a cluster of several executors a host runs them.
 *
 * <p>Spark's launcher wants {@code SPARK_HOME} in the environment, naming a directory with a
 * {@code jars} folder (made here, empty, when missing): the executors take this JVM's classpath
 * instead ({@code spark.executor.extraClassPath}), and the JVM flags it was started with that Spark
 * and gpudf read ({@code --add-opens}, {@code -Dgpudf.*}).
 */
final class LocalCluster {
  private LocalCluster() {}

  /** A session builder for a local cluster as the class says, on gpudf's backend {@code backend}. */
  static SparkSession.Builder builder(String app, String backend, int executors, int cores, int memoryMb, int gpus,
      Path discoveryScript) {
    if (executors < 1 || cores < 1 || memoryMb < 1 || gpus < 0) {
      throw new IllegalArgumentException("a local cluster needs executors, cores and memory (and no negative GPUs): "
          + executors + " executors, " + cores + " cores, " + memoryMb + " MB, " + gpus + " GPUs");
    }
    String home = System.getenv("SPARK_HOME");
    if (home == null || home.isBlank()) {
      throw new IllegalStateException("Spark's launcher starts executors from SPARK_HOME, which is not set");
    }
    try {
      Files.createDirectories(Path.of(home, "jars"));
    } catch (IOException e) {
      throw new UncheckedIOException("SPARK_HOME=" + home + " has no jars folder and none can be made", e);
    }
    List<String> classpath = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      // the executors start in a work folder of their own
      classpath.add(Path.of(entry).toAbsolutePath().toString());
    }
    List<String> flags = new ArrayList<>();
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-") || arg.startsWith("-Dgpudf.") || arg.startsWith("-Djdk.reflect.")
          || arg.startsWith("-Dio.netty.") || arg.startsWith("--sun-misc-") || arg.startsWith("--enable-native-access")) {
        flags.add(arg);
      }
    }
    SparkSession.Builder b = LocalSpark.builder(app, backend)
        .master("local-cluster[1," + executors * cores + "," + (long) executors * memoryMb + "]")
        .config("spark.executor.cores", String.valueOf(cores))
        .config("spark.cores.max", String.valueOf(executors * cores))
        .config("spark.executor.memory", memoryMb + "m")
        .config("spark.executor.extraClassPath", String.join(File.pathSeparator, classpath))
        .config("spark.executor.extraJavaOptions", String.join(" ", flags))
        .config("spark.executorEnv.SPARK_SCALA_VERSION", scala.util.Properties.versionNumberString().replaceAll(
            "^(\\d+\\.\\d+).*", "$1"));
    if (gpus > 0) {
      b.config("spark.worker.resource.gpu.amount", String.valueOf(executors * gpus))
          .config("spark.worker.resource.gpu.discoveryScript", discoveryScript.toAbsolutePath().toString())
          .config("spark.executor.resource.gpu.amount", String.valueOf(gpus))
          .config("spark.task.resource.gpu.amount", String.valueOf((double) gpus / cores));
    }
    return b;
  }

  /** Whether {@code executors} executors are up within {@code seconds} (they register as their JVMs start). */
  static boolean awaitExecutors(SparkSession spark, int executors, int seconds) {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (executors(spark) < executors && System.nanoTime() < deadline) {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return executors(spark) >= executors;
  }

  /** How many executors (not the driver) the session's cluster runs now. */
  static int executors(SparkSession spark) {
    return spark.sparkContext().statusTracker().getExecutorInfos().length - 1;
  }
}
