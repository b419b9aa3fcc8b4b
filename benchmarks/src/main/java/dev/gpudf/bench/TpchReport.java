package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.DeviceActivity;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchAnswers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a {@link TpchBenchmark} run measured, and its Markdown (with an SVG chart of per-query hot
 * times, three bars per query on a log scale) and JSON renderings. Speedups are DuckDB's hot time
 * over gpudf's; the geometric mean covers the queries every engine answered. A GPU run's roofline
 * for a query is the least it must read ({@link GpuSession#scanBytes}) over the device bandwidth
 * measured in the same run; "% of roofline" is that time over the hot time.
 */
final class TpchReport {
  private static final List<String> ENGINES = List.of("gpu", "cpu", "duckdb");
  private static final Map<String, String> COLORS = Map.of("gpu", "#76b900", "cpu", "#4a7ebb", "duckdb", "#d98c1f");
  private final TpchBenchmark.Settings settings;
  private final TpchBenchmark.Machine machine;
  private double generateMs;
  private long generatedRows;
  private String input = "generation";
  private long arrowBytes;
  // GB/s (read + written) of a device copy in this run; 0 without a GPU
  private double deviceGBps;
  // GB/s of the link from pinned memory to the device, and bytes copied a second by the host's
  // cores, in this run; 0 where not measured (only for tables queried in place)
  private double linkGBps;
  private double hostCopyGBps;
  private final Map<String, double[]> loads = new LinkedHashMap<>();
  private final Map<String, Map<String, Result>> results = new LinkedHashMap<>();

  /** One engine's figures for one query; gpudf's split and peak are absent for DuckDB. */
  static final class Result {
    double coldMs;
    double hotMs;
    double planMs;
    double executeMs;
    double transferMs;
    double uncachedPlanMs;
    long peakDeviceBytes;
    long scanBytes;
    // what the cold run read from files: their stored pages' bytes and the rows of the chunks read
    long coldStoredBytes;
    long coldRows;
    // per hot run, from DeviceActivity: kernel launches, waits for the device, streams created
    double launches;
    double waits;
    double streams;
    int rows;
    List<Object[]> answer;
    String error;
    String check = "";
  }

  TpchReport(TpchBenchmark.Settings settings, TpchBenchmark.Machine machine) {
    this.settings = settings;
    this.machine = machine;
  }

  /** The tables came from files in {@code dir} rather than the generator. */
  void readFrom(java.nio.file.Path dir) {
    input = "read from " + dir;
  }

  /** The tables were generated in parts, each loaded into the engines as it was made: the generation's time includes the loads. */
  void streamed() {
    input = "generation in parts streamed into the engines (time includes their loads)";
  }

  void generated(double ms, long rows, long bytes) {
    generateMs = ms;
    generatedRows = rows;
    arrowBytes = bytes;
  }

  /** {@code engine} loaded the tables in {@code ms}: {@code deviceBytes} on the device after, {@code spilledBytes} of columns spilled to host memory. */
  void loaded(String engine, double ms, long deviceBytes, long spilledBytes) {
    loads.put(engine, new double[] {ms, deviceBytes, spilledBytes});
  }

  private Result result(String engine, String query) {
    return results.computeIfAbsent(query, q -> new LinkedHashMap<>()).computeIfAbsent(engine, e -> new Result());
  }

  void gpudfQuery(String engine, String query, double coldMs, List<GpuSession.QueryTimings> hot, List<Object[]> answer) {
    Result r = result(engine, query);
    r.coldMs = coldMs;
    double[] total = new double[hot.size()];
    double[] plan = new double[hot.size()];
    double[] exec = new double[hot.size()];
    double[] transfer = new double[hot.size()];
    for (int i = 0; i < hot.size(); i++) {
      GpuSession.QueryTimings t = hot.get(i);
      plan[i] = t.planNanos() / 1e6;
      exec[i] = t.executeNanos() / 1e6;
      transfer[i] = t.transferNanos() / 1e6;
      total[i] = plan[i] + exec[i] + transfer[i];
      r.peakDeviceBytes = Math.max(r.peakDeviceBytes, t.peakDeviceBytes());
    }
    r.hotMs = TpchBenchmark.median(total);
    r.planMs = TpchBenchmark.median(plan);
    r.executeMs = TpchBenchmark.median(exec);
    r.transferMs = TpchBenchmark.median(transfer);
    r.answer = answer;
    r.rows = answer.size();
  }

  /** {@code engine}'s hot runs of {@code query} made {@code counts} in {@code runs} runs. */
  void activity(String engine, String query, DeviceActivity.Counts counts, int runs) {
    Result r = result(engine, query);
    r.launches = counts.launches() / (double) runs;
    r.waits = counts.waits() / (double) runs;
    r.streams = counts.streams() / (double) runs;
  }

  /** The device's bandwidth measured in this run, in GB/s counting bytes read and written. */
  void deviceBandwidth(double gbps) {
    deviceGBps = gbps;
    System.out.printf(Locale.ROOT, "device copy bandwidth %.0f GB/s (read + written)%n", gbps);
  }

  /** The bandwidths a cold scan of files is measured against, in this run (see {@link #linkGBps}). */
  void scanBandwidths(double link, double hostCopy) {
    linkGBps = link;
    hostCopyGBps = hostCopy;
    System.out.printf(Locale.ROOT, "pinned host -> device %.1f GB/s; host memory copy %.1f GB/s (bytes copied, all cores)%n",
        link, hostCopy);
  }

  /** {@code engine}'s cold run of {@code query} read {@code storedBytes} of stored pages from files, in chunks of {@code rows} rows. */
  void coldScan(String engine, String query, long storedBytes, long rows) {
    Result r = result(engine, query);
    r.coldStoredBytes = storedBytes;
    r.coldRows = rows;
  }

  /** {@code engine}'s plan of {@code query} reads at least {@code bytes}. */
  void scanned(String engine, String query, long bytes) {
    result(engine, query).scanBytes = bytes;
  }

  /** A query whose hot time is more than this many times its roofline is listed with its launches and waits. */
  private static final double FAR_FROM_ROOFLINE = 0.05;

  /** The least time {@code r}'s reads take at the measured bandwidth, in ms; 0 when unknown. */
  private double rooflineMs(Result r) {
    return deviceGBps <= 0 ? 0 : r.scanBytes / (deviceGBps * 1e6);
  }

  /** Geometric mean over the GPU's answered queries of roofline / hot time, or null. */
  private Double rooflineGeomean() {
    double logs = 0;
    int n = 0;
    for (Map<String, Result> m : results.values()) {
      Result r = m.get("gpu");
      if (r != null && r.error == null && r.hotMs > 0 && rooflineMs(r) > 0) {
        logs += Math.log(rooflineMs(r) / r.hotMs);
        n++;
      }
    }
    return n == 0 ? null : Math.exp(logs / n);
  }

  void duckdbQuery(String query, double coldMs, double hotMs, List<Object[]> answer) {
    Result r = result("duckdb", query);
    r.coldMs = coldMs;
    r.hotMs = hotMs;
    r.answer = answer;
    r.rows = answer.size();
  }

  /** Whether {@code engine} answered {@code query} (it ran without an error). */
  boolean ran(String engine, String query) {
    Result r = results.getOrDefault(query, Map.of()).get(engine);
    return r != null && r.error == null;
  }

  void uncachedPlan(String engine, String query, double ms) {
    result(engine, query).uncachedPlanMs = ms;
  }

  void skipped(String engine, String query, String why) {
    result(engine, query).error = why;
    System.out.printf("%s %s %s%n", engine, query, why);
  }

  void failed(String engine, String query, Exception e) {
    result(engine, query).error = e.getClass().getSimpleName() + ": " + e.getMessage();
    System.out.printf("%s %s failed: %s%n", engine, query, e);
    // where in gpudf it failed (which operator, which kernel), for the log only
    java.util.Arrays.stream(e.getStackTrace()).filter(f -> f.getClassName().startsWith("dev.gpudf.")).limit(6)
        .forEach(f -> System.out.println("    at " + f));
  }

  /** Compares each gpudf answer with DuckDB's (TPC-H's rules, {@link TpchAnswers}); again after more results came in. */
  void checkAnswers() {
    for (Map<String, Result> byEngine : results.values()) {
      Result duck = byEngine.get("duckdb");
      for (Map.Entry<String, Result> e : byEngine.entrySet()) {
        Result r = e.getValue();
        if (e.getKey().equals("duckdb") || r.error != null) {
          continue;
        }
        if (duck == null || duck.answer == null) {
          r.check = "not checked (no DuckDB answer)";
        } else {
          String diff = settings.tpcds() ? TpchAnswers.differenceUpToTies(duck.answer, r.answer)
              : TpchAnswers.difference(duck.answer, r.answer);
          r.check = diff == null ? "ok" : "DIFFERS: " + diff;
        }
      }
    }
  }

  /** Whether every gpudf answer that ran agreed with DuckDB. */
  boolean answersAgree() {
    return results.values().stream().flatMap(m -> m.values().stream()).noneMatch(r -> r.check.startsWith("DIFFERS"));
  }

  /**
   * How many gpudf answers were compared with DuckDB's and how they came out: a run whose DuckDB
   * side failed or never ran compares nothing, and says so rather than "agree".
   */
  String answerCounts() {
    List<Result> gpudf = results.values().stream().flatMap(m -> m.entrySet().stream())
        .filter(e -> !e.getKey().equals("duckdb")).map(Map.Entry::getValue).toList();
    long agree = gpudf.stream().filter(r -> r.check.equals("ok")).count();
    long differ = gpudf.stream().filter(r -> r.check.startsWith("DIFFERS")).count();
    long failed = gpudf.stream().filter(r -> r.error != null).count();
    long unchecked = gpudf.size() - agree - differ - failed;
    return String.format(Locale.ROOT, "%d gpudf answers compared with DuckDB's: %d agree, %d DIFFER; %d not compared"
        + " (no DuckDB answer); %d failed", agree + differ, agree, differ, unchecked, failed);
  }

  private Double speedup(String query, String engine) {
    Map<String, Result> m = results.get(query);
    Result r = m.get(engine);
    Result d = m.get("duckdb");
    if (r == null || d == null || r.error != null || d.error != null || r.hotMs <= 0) {
      return null;
    }
    return d.hotMs / r.hotMs;
  }

  private Double geomean(String engine) {
    double logs = 0;
    int n = 0;
    for (String q : results.keySet()) {
      Double s = speedup(q, engine);
      if (s != null) {
        logs += Math.log(s);
        n++;
      }
    }
    return n == 0 ? null : Math.exp(logs / n);
  }

  private String base() {
    String sf = settings.sf() == Math.rint(settings.sf()) ? String.valueOf((long) settings.sf()) : String.valueOf(settings.sf());
    return machine.date() + (settings.tpcds() ? "-tpcds-sf" : "-tpch-sf") + sf;
  }

  /** Writes the Markdown, SVG and JSON files into {@code dir} and returns the Markdown's path. */
  Path write(Path dir) throws IOException {
    Files.createDirectories(dir);
    String base = base();
    Files.writeString(dir.resolve(base + ".svg"), svg(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(base + ".json"), json(), StandardCharsets.UTF_8);
    Path md = dir.resolve(base + ".md");
    Files.writeString(md, markdown(base + ".svg"), StandardCharsets.UTF_8);
    return md;
  }

  private List<String> engines() {
    return ENGINES.stream().filter(settings.engines()::contains).toList();
  }

  String markdown(String svgName) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "# %s SF%s: %s%n%n", settings.title(), settings.sf(), String.join(", ", engines())));
    b.append("- date: ").append(machine.date()).append('\n');
    b.append("- machine: GPU ").append(machine.gpu()).append(machine.driver().isEmpty() ? "" : " (" + machine.driver() + ")")
        .append(", ").append(machine.cores()).append(" cores, Java ").append(machine.java()).append('\n');
    b.append("- commit: ").append(machine.commit()).append('\n');
    b.append("- command: `").append(settings.command()).append("`\n");
    if (settings.inPlace()) {
      b.append("- input: ").append(input).append(", queried in place (each engine's load is opening the files; cold runs read them)\n");
    } else {
      b.append(String.format(Locale.ROOT, "- %s: %,d rows in %.1f s (%.2f M rows/s), %,d MiB of Arrow%n", input, generatedRows,
          generateMs / 1e3, generatedRows / generateMs / 1e3, arrowBytes >> 20));
    }
    for (Map.Entry<String, double[]> l : loads.entrySet()) {
      b.append(String.format(Locale.ROOT, "- load into %s: %.1f s", l.getKey(), l.getValue()[0] / 1e3));
      if (l.getKey().equals("gpu")) {
        b.append(String.format(Locale.ROOT, ", %,d MiB resident on the device = %.2fx the Arrow size", (long) l.getValue()[1] >> 20,
            l.getValue()[1] / Math.max(1, arrowBytes)));
        if (l.getValue()[2] > 0) {
          b.append(String.format(Locale.ROOT, ", and %,d MiB of columns spilled to host memory past the catalog's device budget",
              (long) l.getValue()[2] >> 20));
        }
      }
      b.append('\n');
    }
    b.append("- times: cold = first run (planning included), hot = median of ").append(settings.reps())
        .append(" runs after it; gpudf hot = plan (cached) + execute + transfer of the result to host Arrow; uncached plan ="
            + " median of " + TpchBenchmark.PLANNING_ROUNDS + " rounds of planning every query without the plan cache, after "
            + TpchBenchmark.PLANNING_WARM_UP_ROUNDS + " untimed rounds\n\n");
    b.append("![per-query hot times, log scale](").append(svgName).append(")\n\n");
    b.append("| query | rows |");
    for (String e : engines()) {
      b.append(' ').append(e).append(" cold ms | ").append(e).append(" hot ms |");
    }
    boolean gpu = engines().contains("gpu");
    boolean duck = engines().contains("duckdb");
    if (gpu && duck) {
      b.append(" gpu speedup |");
    }
    if (gpu) {
      b.append(" gpu execute / transfer ms | launches / waits / streams a run | uncached plan ms | peak device MiB | least read MiB | roofline ms | % of roofline |");
    }
    b.append(" answers |\n|");
    int cols = 2 + 2 * engines().size() + (gpu && duck ? 1 : 0) + (gpu ? 7 : 0) + 1;
    b.append(" --- |".repeat(cols)).append('\n');
    for (String q : results.keySet()) {
      Map<String, Result> m = results.get(q);
      Result any = m.values().iterator().next();
      b.append("| ").append(q).append(" | ").append(any.rows).append(" |");
      List<String> checks = new ArrayList<>();
      for (String e : engines()) {
        Result r = m.get(e);
        if (r == null || r.error != null) {
          b.append(" error | error |");
          if (r != null) {
            checks.add(e + ": " + r.error);
          }
        } else {
          b.append(String.format(Locale.ROOT, " %.1f | %.2f |", r.coldMs, r.hotMs));
          if (!r.check.isEmpty() && !r.check.equals("ok")) {
            checks.add(e + ": " + r.check);
          }
        }
      }
      if (gpu && duck) {
        Double s = speedup(q, "gpu");
        b.append(s == null ? " - |" : String.format(Locale.ROOT, " %.1fx |", s));
      }
      if (gpu) {
        Result r = m.get("gpu");
        b.append(r == null || r.error != null ? " - | - | - | - | - | - | - |" : String.format(Locale.ROOT,
            " %.2f / %.2f | %.0f / %.0f / %.0f | %.1f | %,d | %,.0f | %.3f | %.1f%% |", r.executeMs, r.transferMs,
            r.launches, r.waits, r.streams, r.uncachedPlanMs,
            r.peakDeviceBytes >> 20, r.scanBytes / 1048576.0, rooflineMs(r), 100 * rooflineMs(r) / r.hotMs));
      }
      b.append(' ').append(checks.isEmpty() ? "agree" : String.join("; ", checks).replace('|', '/')).append(" |\n");
    }
    b.append('\n');
    for (String e : List.of("gpu", "cpu")) {
      Double g = engines().contains(e) && duck ? geomean(e) : null;
      if (g != null) {
        List<String> slower = results.keySet().stream().filter(q -> {
          Double s = speedup(q, e);
          return s != null && s < 1;
        }).toList();
        b.append(String.format(Locale.ROOT, "- geometric-mean hot speedup of gpudf %s over DuckDB: %.2fx; slower than DuckDB: %s%n",
            e, g, slower.isEmpty() ? "none" : String.join(", ", slower)));
      }
    }
    for (String e : List.of("gpu", "cpu")) {
      List<String> planned = results.keySet().stream()
          .filter(q -> results.get(q).get(e) != null && results.get(q).get(e).uncachedPlanMs > 0).toList();
      if (!planned.isEmpty()) {
        String slowest = planned.stream().max(java.util.Comparator.comparingDouble(q -> results.get(q).get(e).uncachedPlanMs))
            .orElseThrow();
        List<String> over = planned.stream().filter(q -> results.get(q).get(e).uncachedPlanMs >= 20).toList();
        b.append(String.format(Locale.ROOT, "- gpudf %s planning without the cache: longest %.1f ms (%s); 20 ms or more: %s%n", e,
            results.get(slowest).get(e).uncachedPlanMs, slowest, over.isEmpty() ? "none" : String.join(", ", over)));
      }
    }
    Double roof = engines().contains("gpu") ? rooflineGeomean() : null;
    if (roof != null) {
      b.append(String.format(Locale.ROOT, "- roofline: the least bytes each query reads (every column of every table chunk its"
          + " plan scans, once, as stored on the device) over the device copy bandwidth measured in this run, %.0f GB/s"
          + " (read + written); geometric mean of roofline / gpu hot time: %.2f%%%n", deviceGBps, 100 * roof));
      List<String> far = new ArrayList<>();
      results.forEach((q, m) -> {
        Result r = m.get("gpu");
        if (r != null && r.error == null && r.hotMs > 0 && rooflineMs(r) > 0 && rooflineMs(r) < FAR_FROM_ROOFLINE * r.hotMs) {
          far.add(String.format(Locale.ROOT, "%s %.1f%% (%.0f launches, %.0f waits: %.0f us of hot time a wait or launch)", q,
              100 * rooflineMs(r) / r.hotMs, r.launches, r.waits, 1000 * r.hotMs / Math.max(1, r.launches + r.waits)));
        }
      });
      if (!far.isEmpty()) {
        b.append(String.format(Locale.ROOT, "- below %.0f%% of the roofline, with what a hot run did: %s%n", 100 * FAR_FROM_ROOFLINE,
            String.join("; ", far)));
      }
    }
    coldScans(b);
    if (engines().contains("gpu")) {
      b.append("- launches / waits / streams a run: per hot run, the kernels launched, the times the host waited for the"
          + " device (a stream, event or device synchronised: each a round trip it sits out) and the CUDA streams created\n");
    }
    b.append("- answers: ").append(answerCounts()).append('\n');
    return b.toString();
  }

  /**
   * The cold scans of a GPU run over files, where any read stored pages: per query, the bytes and
   * rows read over the whole cold time, and the least time those bytes take through the host's
   * copy (page cache to pinned memory) and the link, at the rates measured in this run.
   */
  private void coldScans(StringBuilder b) {
    if (linkGBps <= 0 || hostCopyGBps <= 0) {
      // no floors to place the scans against (a run not queried in place measures no rates)
      return;
    }
    List<String> rows = new ArrayList<>();
    long stored = 0;
    double coldMs = 0;
    double linkShare = 0;
    for (Map.Entry<String, Map<String, Result>> e : results.entrySet()) {
      Result r = e.getValue().get("gpu");
      if (r == null || r.error != null || r.coldStoredBytes <= 0 || r.coldMs <= 0) {
        continue;
      }
      double linkMs = r.coldStoredBytes / (linkGBps * 1e6);
      double hostMs = r.coldStoredBytes / (hostCopyGBps * 1e6);
      rows.add(String.format(Locale.ROOT, "| %s | %,.0f | %.1f | %.1f | %.2f | %.0f | %.1f | %.1f | %.1f%% |%n", e.getKey(),
          r.coldStoredBytes / 1048576.0, r.coldRows / 1e6, r.coldMs, r.coldStoredBytes / (r.coldMs * 1e6),
          r.coldRows / (r.coldMs * 1e3), hostMs, linkMs, 100 * linkMs / r.coldMs));
      stored += r.coldStoredBytes;
      coldMs += r.coldMs;
      linkShare += Math.log(linkMs / r.coldMs);
    }
    if (rows.isEmpty()) {
      return;
    }
    b.append(String.format(Locale.ROOT, "%n### Cold scans from files (gpu)%n%nThe stored pages each cold run read (as the"
        + " files hold them, compressed), over the whole cold time (plan, reads, decoding, the query); the floors are those"
        + " bytes at the rates measured in this run: the host's memory copy (all cores, bytes copied: the page cache to"
        + " pinned memory) %.1f GB/s, and the link from pinned memory to the device %.1f GB/s.%n%n", hostCopyGBps, linkGBps));
    b.append("| query | stored MiB read | M rows read | gpu cold ms | GB/s of Parquet | M rows/s | host copy floor ms |"
        + " link floor ms | link floor / cold |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    rows.forEach(b::append);
    b.append(String.format(Locale.ROOT, "%n- all cold runs that read files: %,.0f MiB of stored pages in %,.0f ms, %.2f GB/s;"
        + " geometric mean of link floor / cold time %.1f%%%n%n", stored / 1048576.0, coldMs, stored / (coldMs * 1e6),
        100 * Math.exp(linkShare / rows.size())));
  }

  String json() {
    StringBuilder b = new StringBuilder("{\n");
    b.append("  \"date\": ").append(q(machine.date().toString())).append(",\n");
    b.append("  \"machine\": {\"gpu\": ").append(q(machine.gpu())).append(", \"driver\": ").append(q(machine.driver()))
        .append(", \"cores\": ").append(machine.cores()).append(", \"java\": ").append(q(machine.java())).append("},\n");
    b.append("  \"commit\": ").append(q(machine.commit())).append(",\n");
    b.append("  \"command\": ").append(q(settings.command())).append(",\n");
    b.append(String.format(Locale.ROOT, "  \"scale_factor\": %s, \"reps\": %d,%n", settings.sf(), settings.reps()));
    b.append(String.format(Locale.ROOT, "  \"generation\": {\"input\": %s, \"rows\": %d, \"ms\": %.1f, \"arrow_bytes\": %d},%n",
        q(input), generatedRows, generateMs, arrowBytes));
    b.append("  \"loads\": {");
    List<String> ls = new ArrayList<>();
    loads.forEach((e, v) -> ls.add(String.format(Locale.ROOT, "%s: {\"ms\": %.1f, \"device_bytes\": %d, \"spilled_bytes\": %d}",
        q(e), v[0], (long) v[1], (long) v[2])));
    b.append(String.join(", ", ls)).append("},\n");
    b.append("  \"queries\": {\n");
    List<String> qs = new ArrayList<>();
    results.forEach((query, m) -> {
      List<String> es = new ArrayList<>();
      m.forEach((e, r) -> es.add(String.format(Locale.ROOT,
          "%s: {\"cold_ms\": %.3f, \"hot_ms\": %.3f, \"plan_ms\": %.3f, \"execute_ms\": %.3f, \"transfer_ms\": %.3f, "
              + "\"uncached_plan_ms\": %.3f, \"peak_device_bytes\": %d, \"scan_bytes\": %d, \"roofline_ms\": %.4f, "
              + "\"launches\": %.1f, \"waits\": %.1f, \"streams\": %.1f, \"rows\": %d, \"cold_stored_bytes\": %d, "
              + "\"cold_rows\": %d, \"error\": %s, \"check\": %s}",
          q(e), r.coldMs, r.hotMs, r.planMs, r.executeMs, r.transferMs, r.uncachedPlanMs, r.peakDeviceBytes, r.scanBytes,
          e.equals("gpu") ? rooflineMs(r) : 0.0, r.launches, r.waits, r.streams, r.rows, r.coldStoredBytes, r.coldRows,
          r.error == null ? "null" : q(r.error), q(r.check))));
      qs.add("    " + q(query) + ": {" + String.join(", ", es) + "}");
    });
    b.append(String.join(",\n", qs)).append("\n  },\n");
    Double gpu = engines().contains("gpu") ? geomean("gpu") : null;
    Double cpu = engines().contains("cpu") ? geomean("cpu") : null;
    b.append(String.format(Locale.ROOT, "  \"geomean_speedup_over_duckdb\": {\"gpu\": %s, \"cpu\": %s},%n", num(gpu), num(cpu)));
    b.append(String.format(Locale.ROOT, "  \"link_gbps\": %.1f, \"host_copy_gbps\": %.1f,%n", linkGBps, hostCopyGBps));
    b.append(String.format(Locale.ROOT, "  \"device_copy_gbps\": %.1f, \"geomean_roofline_fraction\": %s,%n", deviceGBps,
        num(engines().contains("gpu") ? rooflineGeomean() : null)));
    b.append("  \"answers_agree\": ").append(answersAgree()).append("\n}\n");
    return b.toString();
  }

  private static String num(Double d) {
    return d == null ? "null" : String.format(Locale.ROOT, "%.4f", d);
  }

  private static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  /** Grouped bars of hot times per query, one colour per engine, on a logarithmic axis in ms. */
  String svg() {
    List<String> queries = new ArrayList<>(results.keySet());
    List<String> engines = engines();
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (Map<String, Result> m : results.values()) {
      for (Result r : m.values()) {
        if (r.error == null && r.hotMs > 0) {
          lo = Math.min(lo, r.hotMs);
          hi = Math.max(hi, r.hotMs);
        }
      }
    }
    if (hi == 0) {
      lo = 1;
      hi = 10;
    }
    int minExp = (int) Math.floor(Math.log10(lo));
    int maxExp = (int) Math.ceil(Math.log10(hi));
    if (maxExp == minExp) {
      maxExp++;
    }
    int left = 60;
    int top = 40;
    int plotH = 300;
    int group = engines.size() * 9 + 8;
    int width = left + queries.size() * group + 20;
    int height = top + plotH + 60;
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        + "font-family=\"sans-serif\" font-size=\"11\">%n", width, height));
    b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-size=\"14\">" + settings.title() + " SF%s, hot time per query "
        + "(ms, log scale; lower is better)</text>%n", left, settings.sf()));
    for (int e = minExp; e <= maxExp; e++) {
      double y = top + plotH - (double) (e - minExp) / (maxExp - minExp) * plotH;
      b.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", left,
          width - 20, y, y));
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", left - 4, y + 4,
          e >= 0 ? String.valueOf((long) Math.pow(10, e)) : String.valueOf(Math.pow(10, e))));
    }
    for (int qi = 0; qi < queries.size(); qi++) {
      Map<String, Result> m = results.get(queries.get(qi));
      int x0 = left + qi * group + 4;
      for (int ei = 0; ei < engines.size(); ei++) {
        Result r = m.get(engines.get(ei));
        if (r == null || r.error != null || r.hotMs <= 0) {
          continue;
        }
        double frac = (Math.log10(r.hotMs) - minExp) / (maxExp - minExp);
        double h = Math.max(1, frac * plotH);
        b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"8\" height=\"%.1f\" fill=\"%s\">"
            + "<title>%s %s: %.2f ms</title></rect>%n", x0 + ei * 9, top + plotH - h, h, COLORS.get(engines.get(ei)),
            queries.get(qi), engines.get(ei), r.hotMs));
      }
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x0 + group / 2 - 4,
          top + plotH + 15, queries.get(qi)));
    }
    for (int ei = 0; ei < engines.size(); ei++) {
      int x = left + ei * 120;
      b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
          + "<text x=\"%d\" y=\"%d\">%s</text>%n", x, top + plotH + 32, COLORS.get(engines.get(ei)), x + 14,
          top + plotH + 41, engines.get(ei).equals("duckdb") ? "DuckDB" : "gpudf " + engines.get(ei)));
    }
    return b.append("</svg>\n").toString();
  }
}
