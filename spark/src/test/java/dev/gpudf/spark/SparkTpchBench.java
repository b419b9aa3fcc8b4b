package dev.gpudf.spark;

import dev.gpudf.sql.TpchTables;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * TPC-H through Spark SQL with gpudf's rule off and on, in one Spark {@code local[N]} (or, with
 * {@code --executors}, a {@link LocalCluster} of that many executors of {@code --cores} cores and
 * {@code --gpus} GPUs each), over Parquet that Spark writes here first (generated in parallel, one
 * part a task) when {@code --data} holds none: each query's time with Spark alone and with gpudf,
 * best of {@code --reps} (each rep runs Spark alone, then gpudf), the answers compared, the bytes
 * its shuffles wrote and read from other executors, and the gpudf operators in the plan counted.
 *
 * <pre>
 * SparkTpchBench --sf 10 --data DIR [--cores 16] [--backend gpu] [--reps 2] [--queries q1,q6]
 *                [--budget-s 120] [--aqe false] [--out report.md]
 *                [--executors 2 --gpus 1 --executor-mb 49152] [--alone false] [--baseline other.tsv]
 *                [--pinned false] [--columnar-shuffle false]
 * </pre>
 *
 * Beside the report it writes {@code report.md.tsv}, each query's times and a digest of its
 * answers; {@code --baseline} names another run's, and the report gains that run's gpudf time,
 * the scaling efficiency (its time / (executors ratio x this time)) and whether its answers are this
 * run's Spark-alone answers (a gpudf-only run's: whether they are the baseline's Spark-alone answers,
 * or its gpudf answers where it has none). {@code --alone false} runs gpudf only (a baseline's answers are then
 * checked by the run that reads it). A query past its budget is cancelled (its Spark job group)
 * and reported as such. It is a benchmark, not a test: it fails (exit 1) when an answer differs,
 * after reporting every query.
 */
public final class SparkTpchBench {
  private SparkTpchBench() {}

  public static void main(String[] args) throws IOException {
    Map<String, String> opt = new java.util.HashMap<>(Map.of("--sf", "1", "--cores", "16", "--backend", "gpu",
        "--reps", "2", "--queries", "all", "--budget-s", "120", "--aqe", "false", "--out", "spark-tpch.md"));
    opt.putAll(Map.of("--executors", "0", "--gpus", "1", "--executor-mb", "16384", "--alone", "true", "--baseline", "",
        "--pinned", "true", "--columnar-shuffle", "true"));
    if (args.length % 2 != 0) {
      throw new IllegalArgumentException("options come in pairs (--name value): " + String.join(" ", args));
    }
    for (int i = 0; i < args.length; i += 2) {
      if (!opt.containsKey(args[i]) && !args[i].equals("--data")) {
        throw new IllegalArgumentException("unknown option " + args[i] + "; options: " + opt.keySet() + " --data");
      }
      opt.put(args[i], args[i + 1]);
    }
    if (!opt.containsKey("--data")) {
      throw new IllegalArgumentException("--data DIR is required (the Parquet files, written there when absent)");
    }
    double sf = Double.parseDouble(opt.get("--sf"));
    int cores = Integer.parseInt(opt.get("--cores"));
    int reps = Integer.parseInt(opt.get("--reps"));
    long budgetS = Long.parseLong(opt.get("--budget-s"));
    int executors = Integer.parseInt(opt.get("--executors"));
    boolean alone = Boolean.parseBoolean(opt.get("--alone"));
    Path data = Path.of(opt.get("--data"));
    Map<String, String[]> baseline = opt.get("--baseline").isEmpty() ? Map.of() : readTsv(Path.of(opt.get("--baseline")));
    int allCores = cores * Math.max(1, executors);
    SparkSession.Builder builder = executors == 0 ? LocalSpark.builder("gpudf-tpch-bench", opt.get("--backend"))
        .master("local[" + cores + "]")
        : LocalCluster.builder("gpudf-tpch-bench", opt.get("--backend"), executors, cores,
            Integer.parseInt(opt.get("--executor-mb")), opt.get("--backend").equals("gpu")
                ? Integer.parseInt(opt.get("--gpus")) : 0, Path.of("scripts/spark-gpus.sh"));
    SparkSession spark = builder
        .config("spark.sql.shuffle.partitions", String.valueOf(allCores * 2))
        .config("spark.sql.adaptive.enabled", opt.get("--aqe"))
        .config("spark.sql.autoBroadcastJoinThreshold", "10MB")
        .config(GpudfBackend.PINNED_CONF, opt.get("--pinned"))
        .config(GpudfOverrides.COLUMNAR_SHUFFLE, opt.get("--columnar-shuffle"))
        .getOrCreate();
    ShuffleBytes shuffled = new ShuffleBytes();
    spark.sparkContext().addSparkListener(shuffled);
    // a task's line at INFO, hundreds a query, would bury the report
    spark.sparkContext().setLogLevel("WARN");
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "query budget");
      t.setDaemon(true);
      return t;
    });
    boolean allAgree = true;
    Path out = Path.of(opt.get("--out"));
    try (PrintStream report = new PrintStream(Files.newOutputStream(out), true, StandardCharsets.UTF_8);
        PrintStream tsv = new PrintStream(Files.newOutputStream(Path.of(out + ".tsv")), true, StandardCharsets.UTF_8)) {
      if (executors > 0 && !LocalCluster.awaitExecutors(spark, executors, 90)) {
        throw new IllegalStateException(LocalCluster.executors(spark) + " of " + executors + " executors up after 90 s");
      }
      long g0 = System.nanoTime();
      int written = TpchSpark.write(spark, data, sf, allCores);
      say(report, String.format("data: TPC-H SF%s Parquet in %s (%s tables written by Spark in %.1f s)", sf, data, written,
          (System.nanoTime() - g0) / 1e9));
      TpchSpark.views(spark, data);
      String where = executors == 0 ? "local[" + cores + "]"
          : String.format("local-cluster: %d executors of %d cores, %s MB%s", executors, cores, opt.get("--executor-mb"),
              opt.get("--backend").equals("gpu") ? " and " + opt.get("--gpus") + " GPU(s) each" : "");
      say(report, String.format("Spark %s %s, backend %s, AQE %s, %d shuffle partitions, reps %d (best shown),"
          + " budget %d s a run, host tables pinned %s, columnar shuffle %s%s", spark.version(), where, opt.get("--backend"),
          opt.get("--aqe"), allCores * 2, reps, budgetS, opt.get("--pinned"), opt.get("--columnar-shuffle"),
          alone ? "" : ", gpudf only (Spark alone not run)"));
      tsv.println("query\texecutors\tspark_ms\tgpudf_ms\tspark_digest\tgpudf_digest");
      String moveHead = " MB to / from the device (last run) | gpudf task s: from Spark / operation / to"
          + " Spark (last run, summed over tasks) |";
      String baseHead = baseline.isEmpty() ? "" : " baseline gpudf ms | scaling efficiency | baseline agrees |";
      say(report, "| query | Spark ms | gpudf ms | speedup | agree |" + moveHead + " shuffle MB written / read remotely"
          + " (Spark; gpudf, last run) |" + baseHead + " gpudf operators | all runs (Spark / gpudf) |");
      say(report, "|---|---|---|---|---|" + "---|".repeat(3) + (baseline.isEmpty() ? "" : "---|---|---|")
          + "---|---|");
      double logSum = 0;
      int timed = 0;
      double scaleLogSum = 0;
      int scaled = 0;
      for (Map.Entry<String, String> q : TpchTables.queries(sf).entrySet()) {
        if (!opt.get("--queries").equals("all") && !List.of(opt.get("--queries").split(",")).contains(q.getKey())) {
          continue;
        }
        double bestSpark = Double.MAX_VALUE;
        double bestGpudf = Double.MAX_VALUE;
        List<String> runs = new ArrayList<>();
        String agree = alone ? "yes" : "not checked";
        List<String> want = null;
        List<String> got = null;
        String moved = "-";
        String shuffle = "-";
        for (int r = 0; r < reps; r++) {
          long[] s0 = shuffled.total(spark);
          Run sparkRun = alone ? run(spark, timer, q.getValue(), false, budgetS) : null;
          long[] s1 = shuffled.total(spark);
          Run with = run(spark, timer, q.getValue(), true, budgetS);
          long[] s2 = shuffled.total(spark);
          // the gpudf operators' metrics, summed by Spark from every executor
          long[] m = with.metrics;
          moved = String.format("%.0f / %.0f | %.1f / %.1f / %.1f", m[1] / 1e6, m[2] / 1e6, m[3] / 1e9, m[4] / 1e9,
              m[5] / 1e9);
          shuffle = String.format("%.1f / %.1f; %.1f / %.1f", (s1[0] - s0[0]) / 1e6, (s1[1] - s0[1]) / 1e6,
              (s2[0] - s1[0]) / 1e6, (s2[1] - s1[1]) / 1e6);
          runs.add((sparkRun == null ? "-" : sparkRun.describe()) + " / " + with.describe());
          bestGpudf = Math.min(bestGpudf, with.ms);
          got = got != null ? got : with.rows;
          if (sparkRun == null) {
            agree = with.error != null ? "no answer" : agree;
            continue;
          }
          bestSpark = Math.min(bestSpark, sparkRun.ms);
          want = want != null ? want : sparkRun.rows;
          if (sparkRun.error != null || with.error != null) {
            agree = "no answer";
          } else if (!want.equals(with.rows) || !want.equals(sparkRun.rows)) {
            agree = "NO";
            allAgree = false;
          }
        }
        spark.conf().set(GpudfOverrides.ENABLED, "true");
        String plan = spark.sql(q.getValue()).queryExecution().executedPlan().toString();
        String ops = operators(plan);
        boolean both = bestSpark < Double.MAX_VALUE && bestGpudf < Double.MAX_VALUE && agree.equals("yes");
        if (both) {
          logSum += Math.log(bestSpark / bestGpudf);
          timed++;
        }
        tsv.printf("%s\t%d\t%s\t%s\t%s\t%s%n", q.getKey(), Math.max(1, executors), ms(bestSpark), ms(bestGpudf),
            digest(want), digest(got));
        String base = "";
        if (!baseline.isEmpty()) {
          String[] b = baseline.get(q.getKey());
          // this run's Spark answers against the baseline's gpudf answers; a gpudf-only run's answers
          // against the baseline's Spark answers where it has them, else its gpudf answers
          String mine = digest(want != null ? want : got);
          String theirs = b == null ? "-" : want == null && !b[4].equals("-") ? b[4] : b[5];
          String baseAgrees = theirs.equals("-") || mine.equals("-") ? "-" : theirs.equals(mine) ? "yes" : "NO";
          allAgree &= !baseAgrees.equals("NO");
          double efficiency = b == null || b[3].equals("-") || bestGpudf == Double.MAX_VALUE ? Double.NaN
              : Double.parseDouble(b[3]) / (Math.max(1, executors) / Double.parseDouble(b[1]) * bestGpudf);
          if (!Double.isNaN(efficiency) && baseAgrees.equals("yes")) {
            scaleLogSum += Math.log(efficiency);
            scaled++;
          }
          base = String.format(" %s | %s | %s |", b == null ? "-" : b[3],
              Double.isNaN(efficiency) ? "-" : String.format("%.2f", efficiency), baseAgrees);
        }
        say(report, String.format("| %s | %s | %s | %s | %s |%s %s |%s %s | %s |", q.getKey(), ms(bestSpark), ms(bestGpudf),
            both ? String.format("%.2fx", bestSpark / bestGpudf) : "-", agree, " " + moved + " |",
            shuffle, base, ops, String.join("; ", runs)));
      }
      say(report, String.format("geometric-mean speedup over %d queries that both answered alike: %.2fx", timed,
          timed == 0 ? Double.NaN : Math.exp(logSum / timed)));
      if (!baseline.isEmpty()) {
        say(report, String.format("geometric-mean scaling efficiency over %d queries whose baseline answers agree: %.2f",
            scaled, scaled == 0 ? Double.NaN : Math.exp(scaleLogSum / scaled)));
      }
    } finally {
      timer.shutdownNow();
      spark.stop();
    }
    if (!allAgree) {
      System.exit(1);
    }
  }

  /** One run of a query: its time, its rows (sorted, as text), or why it gave none. */
  private record Run(double ms, List<String> rows, String error, long[] metrics) {
    String describe() {
      return error != null ? error : String.format("%.0f", ms);
    }
  }

  private static Run run(SparkSession spark, ScheduledExecutorService timer, String sql, boolean gpudf, long budgetS) {
    spark.conf().set(GpudfOverrides.ENABLED, String.valueOf(gpudf));
    String group = "bench-" + System.nanoTime();
    spark.sparkContext().setJobGroup(group, "TPC-H query", true);
    ScheduledFuture<?> cancel = timer.schedule(() -> spark.sparkContext().cancelJobGroup(group), budgetS, TimeUnit.SECONDS);
    long t0 = System.nanoTime();
    try {
      org.apache.spark.sql.Dataset<Row> df = spark.sql(sql);
      List<String> rows = df.collectAsList().stream().map(Row::toString).sorted().toList();
      return new Run((System.nanoTime() - t0) / 1e6, rows, null, metricSums(df.queryExecution().executedPlan()));
    } catch (RuntimeException e) {
      double ms = (System.nanoTime() - t0) / 1e6;
      String why = ms >= budgetS * 1000 ? "over " + budgetS + " s" : "failed: " + firstLine(e);
      System.err.println((gpudf ? "gpudf" : "Spark") + " run " + why);
      e.printStackTrace();
      return new Run(Double.MAX_VALUE, List.of(), why, new long[OpMetrics.NAMES.length]);
    } finally {
      cancel.cancel(false);
      spark.sparkContext().clearJobGroup();
    }
  }

  /** The metrics of {@code plan}'s gpudf operators ({@link OpMetrics#NAMES}' order), each summed over them. */
  static long[] metricSums(org.apache.spark.sql.execution.SparkPlan plan) {
    long[] sums = new long[OpMetrics.NAMES.length];
    for (GpudfExec g : gpudfNodes(plan)) {
      for (int i = 0; i < sums.length; i++) {
        sums[i] += Math.max(0, g.metrics().apply(OpMetrics.NAMES[i]).value());
      }
    }
    return sums;
  }

  /** The gpudf operators of {@code plan}, at any depth. */
  static List<GpudfExec> gpudfNodes(org.apache.spark.sql.execution.SparkPlan plan) {
    List<GpudfExec> found = new ArrayList<>();
    java.util.ArrayDeque<org.apache.spark.sql.execution.SparkPlan> todo = new java.util.ArrayDeque<>(List.of(plan));
    while (!todo.isEmpty()) {
      org.apache.spark.sql.execution.SparkPlan p = todo.pop();
      if (p instanceof GpudfExec g) {
        found.add(g);
      }
      GpudfExec.list(p.children()).forEach(todo::push);
      if (p instanceof org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec a) {
        todo.push(a.executedPlan());
      }
    }
    return found;
  }

  /** A query's answer (its sorted rows) as a short digest, for comparing runs of separate JVMs; "-" for none. */
  private static String digest(List<String> rows) {
    if (rows == null) {
      return "-";
    }
    try {
      java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
      for (String row : rows) {
        md.update(row.getBytes(StandardCharsets.UTF_8));
        md.update((byte) '\n');
      }
      return java.util.HexFormat.of().formatHex(md.digest(), 0, 12) + "/" + rows.size();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is every JVM's", e);
    }
  }

  /** Another run's {@code .tsv}: its rows by query (the columns as written), the header checked. */
  private static Map<String, String[]> readTsv(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    if (lines.isEmpty() || !lines.get(0).startsWith("query\texecutors\t")) {
      throw new IllegalArgumentException(file + " is not a SparkTpchBench .tsv (its header: "
          + (lines.isEmpty() ? "none" : lines.get(0)) + ")");
    }
    Map<String, String[]> rows = new java.util.HashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split("\t", -1);
      if (f.length != 6) {
        throw new IllegalArgumentException(file + ": a row of " + f.length + " fields, not 6: " + line);
      }
      rows.put(f[0], f);
    }
    return rows;
  }

  /**
   * Bytes Spark's shuffles wrote, and read from other executors' blocks, over all tasks so far;
   * read after the listener bus has delivered every event posted before.
   */
  private static final class ShuffleBytes extends org.apache.spark.scheduler.SparkListener {
    private final java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong readRemotely = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        written.addAndGet(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
        readRemotely.addAndGet(end.taskMetrics().shuffleReadMetrics().remoteBytesRead());
      }
    }

    long[] total(SparkSession spark) {
      try {
        spark.sparkContext().listenerBus().waitUntilEmpty();
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IllegalStateException("Spark's listener bus did not deliver its events", e);
      }
      return new long[] {written.get(), readRemotely.get()};
    }
  }

  private static String firstLine(Throwable e) {
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return (nl < 0 ? m : m.substring(0, nl)).replace('|', '/');
  }

  private static String ms(double ms) {
    return ms == Double.MAX_VALUE ? "-" : String.format("%.0f", ms);
  }

  /** The gpudf operators a plan holds, counted by name. */
  private static String operators(String plan) {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("Gpudf[A-Za-z]+").matcher(plan);
    while (m.find()) {
      counts.merge(m.group(), 1, Integer::sum);
    }
    return counts.isEmpty() ? "none" : counts.toString().replace(",", "").replace("{", "").replace("}", "");
  }

  private static void say(PrintStream report, String line) {
    report.println(line);
    System.out.println(line);
  }
}
