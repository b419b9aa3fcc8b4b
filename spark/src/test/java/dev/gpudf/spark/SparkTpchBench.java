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
 * TPC-H through Spark SQL with gpudf's rule off and on, in one Spark {@code local[N]}, over Parquet
 * that Spark writes here first (generated in parallel, one part a task) when {@code --data} holds
 * none: each query's time with Spark alone and with gpudf, best of {@code --reps} (each rep runs
 * Spark alone, then gpudf), the answers compared, and the gpudf operators in the plan counted.
 *
 * <pre>
 * SparkTpchBench --sf 10 --data DIR [--cores 16] [--backend gpu] [--reps 2] [--queries q1,q6]
 *                [--budget-s 120] [--aqe false] [--out report.md]
 * </pre>
 *
 * A query past its budget is cancelled (its Spark job group) and reported as such. It is a
 * benchmark, not a test: it fails (exit 1) when an answer differs, after reporting every query.
 */
public final class SparkTpchBench {
  private SparkTpchBench() {}

  public static void main(String[] args) throws IOException {
    Map<String, String> opt = new java.util.HashMap<>(Map.of("--sf", "1", "--cores", "16", "--backend", "gpu",
        "--reps", "2", "--queries", "all", "--budget-s", "120", "--aqe", "false", "--out", "spark-tpch.md"));
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
    Path data = Path.of(opt.get("--data"));
    SparkSession spark = SparkSession.builder().master("local[" + cores + "]").appName("gpudf-tpch-bench")
        .config("spark.plugins", GpudfPlugin.class.getName())
        .config("spark.sql.extensions", GpudfExtensions.class.getName())
        .config(GpudfBackend.BACKEND_CONF, opt.get("--backend"))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", String.valueOf(cores * 2))
        .config("spark.sql.adaptive.enabled", opt.get("--aqe"))
        .getOrCreate();
    // a task's line at INFO, hundreds a query, would bury the report
    spark.sparkContext().setLogLevel("WARN");
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "query budget");
      t.setDaemon(true);
      return t;
    });
    boolean allAgree = true;
    try (PrintStream report = new PrintStream(Files.newOutputStream(Path.of(opt.get("--out"))), true,
        StandardCharsets.UTF_8)) {
      long g0 = System.nanoTime();
      int written = TpchSpark.write(spark, data, sf, cores);
      say(report, String.format("data: TPC-H SF%s Parquet in %s (%s tables written by Spark in %.1f s)", sf, data, written,
          (System.nanoTime() - g0) / 1e9));
      TpchSpark.views(spark, data);
      say(report, String.format("Spark %s local[%d], backend %s, AQE %s, %d shuffle partitions, reps %d (best shown),"
          + " budget %d s a run", spark.version(), cores, opt.get("--backend"), opt.get("--aqe"), cores * 2, reps, budgetS));
      say(report, "| query | Spark ms | gpudf ms | speedup | agree | MB to / from the device (last run) | gpudf operators"
          + " | all runs (Spark / gpudf) |");
      say(report, "|---|---|---|---|---|---|---|---|");
      double logSum = 0;
      int timed = 0;
      for (Map.Entry<String, String> q : TpchTables.queries(sf).entrySet()) {
        if (!opt.get("--queries").equals("all") && !List.of(opt.get("--queries").split(",")).contains(q.getKey())) {
          continue;
        }
        double bestSpark = Double.MAX_VALUE;
        double bestGpudf = Double.MAX_VALUE;
        List<String> runs = new ArrayList<>();
        String agree = "yes";
        List<String> want = null;
        String moved = "-";
        for (int r = 0; r < reps; r++) {
          Run alone = run(spark, timer, q.getValue(), false, budgetS);
          long up = GpudfBackend.get().bytesToDevice();
          long down = GpudfBackend.get().bytesToHost();
          Run with = run(spark, timer, q.getValue(), true, budgetS);
          moved = String.format("%.0f / %.0f", (GpudfBackend.get().bytesToDevice() - up) / 1e6,
              (GpudfBackend.get().bytesToHost() - down) / 1e6);
          runs.add(alone.describe() + " / " + with.describe());
          bestSpark = Math.min(bestSpark, alone.ms);
          bestGpudf = Math.min(bestGpudf, with.ms);
          want = want != null ? want : alone.rows;
          if (alone.error != null || with.error != null) {
            agree = "no answer";
          } else if (!want.equals(with.rows) || !want.equals(alone.rows)) {
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
        say(report, String.format("| %s | %s | %s | %s | %s | %s | %s | %s |", q.getKey(), ms(bestSpark), ms(bestGpudf),
            both ? String.format("%.2fx", bestSpark / bestGpudf) : "-", agree, moved, ops, String.join("; ", runs)));
      }
      say(report, String.format("geometric-mean speedup over %d queries that both answered alike: %.2fx", timed,
          timed == 0 ? Double.NaN : Math.exp(logSum / timed)));
    } finally {
      timer.shutdownNow();
      spark.stop();
    }
    if (!allAgree) {
      System.exit(1);
    }
  }

  /** One run of a query: its time, its rows (sorted, as text), or why it gave none. */
  private record Run(double ms, List<String> rows, String error) {
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
      List<String> rows = spark.sql(sql).collectAsList().stream().map(Row::toString).sorted().toList();
      return new Run((System.nanoTime() - t0) / 1e6, rows, null);
    } catch (RuntimeException e) {
      double ms = (System.nanoTime() - t0) / 1e6;
      String why = ms >= budgetS * 1000 ? "over " + budgetS + " s" : "failed: " + firstLine(e);
      System.err.println((gpudf ? "gpudf" : "Spark") + " run " + why);
      e.printStackTrace();
      return new Run(Double.MAX_VALUE, List.of(), why);
    } finally {
      cancel.cancel(false);
      spark.sparkContext().clearJobGroup();
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
