package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.KernelModule;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchAnswers;
import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;

/**
 * The first run of each TPC-H query in a fresh process, against its hot time (issue 22's cold
 * start): one child JVM a query, started with this JVM's runtime, options and classpath, which
 * opens the engine, loads the tables the query names from {@code --data} (whole, resident: the
 * data's cost is reported apart), runs the query once cold and {@code --reps} times hot, and
 * prints one {@code COLDSTART} line. The fixed start-up cost of a process is what precedes any
 * data: the JVM's start up to {@code main} (the parent's and the child's {@link System#nanoTime}
 * share Linux's monotonic clock), the CUDA context and device pool ({@link Gpu#open}), the
 * kernels' module ({@link KernelModule#on}) and the session. A query's cold run is within
 * bounds when it takes at most three times its hot time plus that fixed cost. One more child
 * answers a query over {@code nation} read in place, timed from its spawn to its exit: a fresh
 * process's whole answer over a small table. DuckDB (JDBC, in-memory) runs the same children
 * as the peer.
 *
 * <pre>ColdStartBenchmark --data DIR [--sf 10] [--engines gpu,duckdb] [--queries q1,q6] [--reps 5] [--out FILE.md]
 * ColdStartBenchmark --report-from LOG (the options of the run that printed LOG)</pre>
 *
 * The second form makes the report of a run stopped before it wrote one, from the lines it printed.
 *
 * {@code DIR} holds a file a table ({@code <table>.parquet}, {@code .arrow} or {@code .csv}), as
 * {@link TpchFiles} writes them. gpudf's children load the tables from Arrow IPC copies of them
 * ({@code DIR-arrow-ipc/<table>.arrow} beside {@code DIR}, written once through DuckDB's reader),
 * which need no native Parquet reader (the GPU host's bundle carries Arrow Dataset's apart); the
 * small table is read from its Parquet file in place.
 */
public final class ColdStartBenchmark {
  private ColdStartBenchmark() {}

  private static final String USAGE = "options: --data DIR [--sf N] [--engines gpu,cpu,duckdb] [--queries q1,q6]"
      + " [--reps N] [--out FILE.md]; or --report-from LOG and the run's options";
  /** The small-table query each engine's last child answers, timed from spawn to exit. */
  static final String SMALL_QUERY = "SELECT n_name FROM nation WHERE n_regionkey = 1 ORDER BY n_name";
  /** A child's whole life, beyond which it is stopped and reported as failed. */
  private static final long CHILD_LIMIT_SECONDS = 300;

  /** Command-line settings. */
  record Settings(Path data, double sf, List<String> engines, List<String> queries, int reps, Path out) {
    static Settings parse(String[] args) {
      return parse(args, true);
    }

    /** The settings of {@code args}; {@code --data} need not exist here when {@code present} is false (a report from a log). */
    static Settings parse(String[] args, boolean present) {
      Path data = null;
      double sf = 1;
      List<String> engines = List.of("gpu", "duckdb");
      List<String> queries = null;
      int reps = 5;
      Path out = null;
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(args[i] + " needs a value (" + USAGE + ")");
        }
        String value = args[i + 1];
        switch (args[i]) {
          case "--data" -> data = Path.of(value);
          case "--sf" -> sf = Double.parseDouble(value);
          case "--engines" -> engines = List.of(value.split(","));
          case "--queries" -> queries = List.of(value.split(","));
          case "--reps" -> reps = Integer.parseInt(value);
          case "--out" -> out = Path.of(value);
          default -> throw new IllegalArgumentException("unknown option " + args[i] + " (" + USAGE + ")");
        }
      }
      if (data == null || (present && !Files.isDirectory(data)) || reps < 1 || !(sf > 0)) {
        throw new IllegalArgumentException("--data takes a directory of TPC-H's tables, --reps at least 1, --sf above 0 ("
            + USAGE + ")");
      }
      for (String e : engines) {
        if (!List.of("gpu", "cpu", "duckdb").contains(e)) {
          throw new IllegalArgumentException("unknown engine " + e + " (gpu, cpu, duckdb)");
        }
      }
      Map<String, String> all = TpchTables.queries(sf);
      if (queries == null) {
        queries = new ArrayList<>(all.keySet());
      }
      for (String q : queries) {
        if (!all.containsKey(q)) {
          throw new IllegalArgumentException("no TPC-H query " + q);
        }
      }
      return new Settings(data, sf, engines, queries, reps, out);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--child")) {
      Child.main(Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    if (args.length > 1 && args[0].equals("--report-from")) {
      // the report of a run stopped before it wrote one, from the lines it printed
      Settings s = Settings.parse(Arrays.copyOfRange(args, 2, args.length), false);
      String report = fromLog(s, Files.readAllLines(Path.of(args[1])));
      System.out.print(report);
      if (s.out() != null) {
        Files.writeString(s.out(), report);
      }
      return;
    }
    Settings s = Settings.parse(args);
    run(s, System.out);
    if (s.out() != null) {
      System.out.println("report: " + s.out());
    }
  }

  /** What one child printed: its phases in milliseconds by name, and the parent's spawn-to-exit time. */
  record Result(String engine, String query, Map<String, String> values, double processMs) {
    double ms(String key) {
      String v = values.get(key);
      if (v == null) {
        throw new IllegalStateException(engine + " " + query + "'s child printed no " + key + ": " + values);
      }
      return Double.parseDouble(v);
    }

    /** The process's spawn-to-exit milliseconds as the report shows them ("not logged" where the run's log has none). */
    String process() {
      return Double.isNaN(processMs) ? "not logged" : String.format(Locale.ROOT, "%.0f ms", processMs);
    }

    /** The process's cost before any data: JVM, device, kernels, session. */
    double fixedMs() {
      return ms("jvm") + ms("device") + ms("kernels") + ms("session");
    }
  }

  private static final Pattern LINE = Pattern.compile("COLDSTART (\\S+) (\\S+) (\\w+=.*)$");
  private static final Pattern PAIR = Pattern.compile("(\\w+)=(\\S+)");
  private static final Pattern PROCESS = Pattern.compile("\\[(\\S+) (\\S+)\\] process ([0-9.]+) ms from spawn to exit");

  /** The values of a child's {@code COLDSTART} line in {@code line} for {@code engine} and {@code query} (null: another line). */
  static Map<String, String> values(String line, String engine, String query) {
    Matcher m = LINE.matcher(line);
    if (!m.find() || !m.group(1).equals(engine) || !m.group(2).equals(query)) {
      return null;
    }
    Map<String, String> values = new LinkedHashMap<>();
    Matcher kv = PAIR.matcher(m.group(3));
    while (kv.find()) {
      values.put(kv.group(1), kv.group(2));
    }
    return values;
  }

  /**
   * The report of {@code s}'s children from the lines a run of them printed ({@code lines}): each
   * child's last {@code COLDSTART} line and its process time where the run logged one.
   */
  static String fromLog(Settings s, List<String> lines) {
    List<Result> results = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String engine : s.engines()) {
      List<String> names = new ArrayList<>(s.queries());
      names.add("small");
      for (String q : names) {
        Map<String, String> values = null;
        double processMs = Double.NaN;
        for (String line : lines) {
          Map<String, String> v = values(line, engine, q);
          values = v != null ? v : values;
          Matcher p = PROCESS.matcher(line);
          if (p.find() && p.group(1).equals(engine) && p.group(2).equals(q)) {
            processMs = Double.parseDouble(p.group(3));
          }
        }
        if (values == null) {
          missing.add(engine + " " + q);
        } else {
          results.add(new Result(engine, q, values, processMs));
        }
      }
    }
    return report(s, results, missing, "not in the log");
  }

  /**
   * Runs every engine's children and returns the Markdown report, which goes to {@code log} too,
   * and to {@code s.out()} after every child, so that a run stopped part way leaves what it measured.
   */
  static String run(Settings s, PrintStream log) throws Exception {
    if (s.engines().contains("gpu") || s.engines().contains("cpu")) {
      arrowCopies(s.data(), log);
    }
    List<Result> results = new ArrayList<>();
    List<String> failed = new ArrayList<>();
    for (String engine : s.engines()) {
      List<String> names = new ArrayList<>(s.queries());
      names.add("small");
      for (String q : names) {
        Result r = spawn(s, engine, q, log);
        if (r == null) {
          failed.add(engine + " " + q);
        } else {
          results.add(r);
        }
        if (s.out() != null) {
          Files.writeString(s.out(), report(s, results, failed, "failed"));
        }
      }
    }
    String report = report(s, results, failed, "failed");
    log.print(report);
    return report;
  }

  /** The folder of {@code data}'s Arrow IPC copies: beside it, as a folder within it would open as a table. */
  static Path arrowDir(Path data) {
    return data.toAbsolutePath().resolveSibling(data.toAbsolutePath().getFileName() + "-arrow-ipc");
  }

  /**
   * Writes each table of {@code data} that is not there yet as an Arrow IPC file into {@link
   * #arrowDir}, through DuckDB's reader (under a temporary name, then renamed), a line a table to
   * {@code log}.
   */
  static void arrowCopies(Path data, PrintStream log) throws Exception {
    Path dir = arrowDir(data);
    Files.createDirectories(dir);
    try (BufferAllocator a = new RootAllocator(); Connection c = DriverManager.getConnection("jdbc:duckdb:");
        Statement st = c.createStatement()) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        Path target = dir.resolve(t.getTableName() + ".arrow");
        if (Files.exists(target)) {
          continue;
        }
        Path file = TpchBenchmark.tableFile(data, t.getTableName(), List.of("parquet", "csv"));
        Path part = dir.resolve(t.getTableName() + ".arrow.part");
        long t0 = System.nanoTime();
        long rows = 0;
        try (ResultSet rs = st.executeQuery("SELECT * FROM " + duckDbScan(file));
            org.apache.arrow.vector.ipc.ArrowReader in = (org.apache.arrow.vector.ipc.ArrowReader)
                rs.unwrap(org.duckdb.DuckDBResultSet.class).arrowExportStream(a, 1 << 16);
            java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(part,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.TRUNCATE_EXISTING,
                java.nio.file.StandardOpenOption.WRITE);
            org.apache.arrow.vector.ipc.ArrowFileWriter out = new org.apache.arrow.vector.ipc.ArrowFileWriter(
                in.getVectorSchemaRoot(), null, ch)) {
          out.start();
          while (in.loadNextBatch()) {
            rows += in.getVectorSchemaRoot().getRowCount();
            out.writeBatch();
          }
          out.end();
        }
        Files.move(part, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        log.printf(Locale.ROOT, "%s: %,d rows as Arrow IPC in %.1f s%n", target, rows, (System.nanoTime() - t0) / 1e9);
      }
    }
  }

  /** DuckDB's scan of Parquet or CSV file {@code file}, as SQL. */
  static String duckDbScan(Path file) {
    String reader = file.toString().endsWith(".parquet") ? "read_parquet" : "read_csv";
    return reader + "('" + file.toString().replace("'", "''") + "')";
  }

  /** One child for {@code query} on {@code engine}; null, said in {@code log}, if it failed or printed no result. */
  private static Result spawn(Settings s, String engine, String query, PrintStream log)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString()));
    for (String a : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      // a child must not write the parent's ahead-of-time cache or wait for its debugger
      if (!a.startsWith("-XX:AOTCacheOutput") && !a.startsWith("-XX:AOTMode=record") && !a.startsWith("-agentlib:jdwp")) {
        command.add(a);
      }
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), ColdStartBenchmark.class.getName(), "--child",
        engine, query, s.data().toString(), Double.toString(s.sf()), Integer.toString(s.reps())));
    long spawned = System.nanoTime();
    command.add(Long.toString(spawned));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    // a child that hangs is stopped at its limit, which ends the reading of its output below
    java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
    Thread watchdog = new Thread(() -> {
      try {
        if (!p.waitFor(CHILD_LIMIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS)) {
          stopped.set(true);
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "cold-start-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    Map<String, String> values = null;
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        Map<String, String> v = values(line, engine, query);
        values = v != null ? v : values;
        log.println("  [" + engine + " " + query + "] " + line);
      }
    }
    p.waitFor();
    double processMs = (System.nanoTime() - spawned) / 1e6;
    if (stopped.get()) {
      log.println("  [" + engine + " " + query + "] stopped after " + CHILD_LIMIT_SECONDS + " s");
      return null;
    }
    log.printf(Locale.ROOT, "  [%s %s] process %.1f ms from spawn to exit%n", engine, query, processMs);
    if (p.exitValue() != 0 || values == null) {
      log.println("  [" + engine + " " + query + "] failed: exit " + p.exitValue() + (values == null ? ", no result line" : ""));
      return null;
    }
    return new Result(engine, query, values, processMs);
  }

  /** The Markdown report: a table an engine, its fixed start-up costs, and which cold runs are within bounds. */
  static String report(Settings s, List<Result> results, List<String> failed, String failedAre) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "# Cold start: each TPC-H query the first in a fresh process (SF%s, %s)%n%n", s.sf(),
        String.join(", ", s.engines())));
    b.append("- command: `ColdStartBenchmark --data ").append(s.data()).append(" --sf ").append(s.sf())
        .append(" --engines ").append(String.join(",", s.engines())).append(" --queries ")
        .append(String.join(",", s.queries())).append(" --reps ").append(s.reps()).append("`\n");
    b.append("- fixed = JVM start to main + device (Arrow's allocator; on the GPU the CUDA context and pool) + kernels'"
        + " module + session, before any data;"
        + " load = the query's tables read whole (gpudf: from their Arrow IPC copies) and registered (resident), not counted;"
        + " cold = the query's first run (plan + execute + transfer); hot = median of the runs after it;"
        + " bound = 3 x hot + fixed; process = spawn to exit\n");
    for (String engine : s.engines()) {
      List<Result> mine = results.stream().filter(r -> r.engine().equals(engine)).toList();
      if (mine.isEmpty()) {
        continue;
      }
      b.append("\n## ").append(engine).append("\n\n");
      b.append("| query | JVM ms | device ms | kernels ms | session ms | fixed ms | load ms | cold ms (plan + execute"
          + " + transfer) | hot ms | cold - hot ms | bound ms | within | process | answers cold = hot |\n");
      b.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
      int within = 0;
      int queries = 0;
      List<Double> fixed = new ArrayList<>();
      for (Result r : mine) {
        fixed.add(r.fixedMs());
        if (r.query().equals("small")) {
          continue;
        }
        queries++;
        double bound = 3 * r.ms("hot") + r.fixedMs();
        boolean ok = r.ms("cold") <= bound;
        within += ok ? 1 : 0;
        b.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f (%.1f + %.1f + %.1f) | %.2f |"
            + " %.1f | %.1f | %s | %s | %s |%n", r.query(), r.ms("jvm"), r.ms("device"), r.ms("kernels"), r.ms("session"),
            r.fixedMs(), r.ms("load"), r.ms("cold"), r.ms("plan"), r.ms("execute"), r.ms("transfer"), r.ms("hot"),
            r.ms("cold") - r.ms("hot"), bound, ok ? "yes" : "**no**", r.process(), r.values().get("same")));
      }
      fixed.sort(null);
      b.append(String.format(Locale.ROOT, "%n- %s: %d of %d cold runs within 3 x hot + fixed; fixed start-up median %.1f ms,"
          + " longest %.1f ms (over %d processes)%n", engine, within, queries, fixed.get(fixed.size() / 2),
          fixed.get(fixed.size() - 1), fixed.size()));
      mine.stream().filter(r -> r.query().equals("small")).findFirst().ifPresent(r -> b.append(String.format(Locale.ROOT,
          "- %s: a fresh process answering `%s` over nation read in place: from spawn to exit %s (fixed %.1f, open"
          + " %.1f, the query's run %.1f)%n", engine, SMALL_QUERY, r.process(), r.fixedMs(), r.ms("load"), r.ms("cold"))));
    }
    List<Result> gpu = results.stream().filter(r -> r.engine().equals("gpu") && !r.query().equals("small")).toList();
    List<Result> duck = results.stream().filter(r -> r.engine().equals("duckdb") && !r.query().equals("small")).toList();
    double logSum = 0;
    int n = 0;
    for (Result g : gpu) {
      for (Result d : duck) {
        if (d.query().equals(g.query())) {
          logSum += Math.log((g.fixedMs() + g.ms("cold")) / (d.fixedMs() + d.ms("cold")));
          n++;
        }
      }
    }
    if (n > 0) {
      b.append(String.format(Locale.ROOT, "- fixed + cold, gpu / duckdb, geometric mean over %d queries: %.3f%n", n,
          Math.exp(logSum / n)));
    }
    if (!failed.isEmpty()) {
      b.append("- ").append(failedAre).append(": ").append(String.join(", ", failed)).append('\n');
    }
    return b.toString();
  }

  /** The tables {@code sql} names (whole words: {@code part} is not {@code partsupp}). */
  static List<String> tablesOf(String sql) {
    List<String> names = new ArrayList<>();
    for (TpchTable<?> t : TpchTable.getTables()) {
      if (Pattern.compile("\\b" + t.getTableName() + "\\b", Pattern.CASE_INSENSITIVE).matcher(sql).find()) {
        names.add(t.getTableName());
      }
    }
    return names;
  }

  /** One fresh process: its phases, then one {@code COLDSTART engine query key=value ...} line. */
  static final class Child {
    private Child() {}

    static void main(String[] args) throws Exception {
      long entered = System.nanoTime();
      if (args.length != 6) {
        throw new IllegalArgumentException("a child takes: engine query data sf reps spawned-nanos");
      }
      String engine = args[0];
      String query = args[1];
      Path data = Path.of(args[2]);
      double sf = Double.parseDouble(args[3]);
      int reps = Integer.parseInt(args[4]);
      double jvm = (entered - Long.parseLong(args[5])) / 1e6;
      boolean small = query.equals("small");
      String sql = small ? SMALL_QUERY : TpchTables.queries(sf).get(query);
      Map<String, String> line = new LinkedHashMap<>();
      line.put("jvm", ms(jvm));
      if (engine.equals("duckdb")) {
        duckdb(sql, small ? List.of("nation") : tablesOf(sql), data, small, reps, line);
      } else {
        gpudf(engine.equals("gpu"), sql, small ? List.of("nation") : tablesOf(sql), data, small, reps, line);
      }
      StringBuilder out = new StringBuilder("COLDSTART " + engine + " " + query);
      line.forEach((k, v) -> out.append(' ').append(k).append('=').append(v));
      System.out.println(out);
    }

    private static void gpudf(boolean gpu, String sql, List<String> tables, Path data, boolean inPlace, int reps,
        Map<String, String> line) throws Exception {
      long t0 = System.nanoTime();
      if (gpu) {
        // as `gpudf sql` and `gpudf serve` do: the warm-ups overlap the CUDA context's making
        GpuSession.warmUp();
      }
      // the tables' host copies close after the session that registered them
      List<VectorSchemaRoot> held = new ArrayList<>();
      try (BufferAllocator a = new RootAllocator(); Gpu device = gpu ? Gpu.open(0) : null) {
        long t1 = System.nanoTime();
        if (gpu) {
          KernelModule.on(device.device());
        }
        long t2 = System.nanoTime();
        try {
          try (GpuSession session = gpu ? GpuSession.gpu(device, a) : GpuSession.cpu(a)) {
            long t3 = System.nanoTime();
            if (inPlace) {
              dev.gpudf.sql.FileTables.loadDirectory(session.catalog(), data, a);
            } else {
              for (String t : tables) {
                VectorSchemaRoot root = read(arrowDir(data), t, a);
                held.add(root);
                session.catalog().register(t, root);
              }
            }
            long t4 = System.nanoTime();
            line.put("device", ms((t1 - t0) / 1e6));
            line.put("kernels", ms((t2 - t1) / 1e6));
            line.put("session", ms((t3 - t2) / 1e6));
            line.put("load", ms((t4 - t3) / 1e6));
            List<GpuSession.QueryTimings> timings = new ArrayList<>();
            runs(reps, () -> {
              try (VectorSchemaRoot result = session.query(sql, List.of(), timings::add)) {
                return TpchAnswers.rows(result);
              }
            }, line);
            GpuSession.QueryTimings cold = timings.get(0);
            line.put("plan", ms(cold.planNanos() / 1e6));
            line.put("execute", ms(cold.executeNanos() / 1e6));
            line.put("transfer", ms(cold.transferNanos() / 1e6));
          }
        } finally {
          held.forEach(VectorSchemaRoot::close);
        }
      }
    }

    private static void duckdb(String sql, List<String> tables, Path data, boolean inPlace, int reps,
        Map<String, String> line) throws Exception {
      line.put("device", "0");
      line.put("kernels", "0");
      long t2 = System.nanoTime();
      try (BufferAllocator a = new RootAllocator(); Connection c = DriverManager.getConnection("jdbc:duckdb:");
          Statement st = c.createStatement()) {
        long t3 = System.nanoTime();
        for (String t : tables) {
          Path file = TpchBenchmark.tableFile(data, t, List.of("parquet", "csv", "arrow"));
          if (file.toString().endsWith(".arrow")) {
            // DuckDB reads Arrow IPC files only through an extension this host cannot fetch
            try (VectorSchemaRoot root = read(data, t, a)) {
              DuckDbTables.load((DuckDBConnection) c, a, t, root);
            }
          } else {
            // in place, a view; else a table by DuckDB's own reader on all cores (the load is not what is measured)
            st.execute("CREATE " + (inPlace ? "VIEW " : "TABLE ") + t + " AS SELECT * FROM " + duckDbScan(file));
          }
        }
        long t4 = System.nanoTime();
        line.put("session", ms((t3 - t2) / 1e6));
        line.put("load", ms((t4 - t3) / 1e6));
        runs(reps, () -> {
          try (ResultSet rs = st.executeQuery(sql)) {
            return TpchAnswers.rows(rs);
          }
        }, line);
        line.put("plan", "0");
        line.put("execute", line.get("cold"));
        line.put("transfer", "0");
      }
    }

    /** A query's rows, for {@link #runs}. */
    interface Run {
      List<Object[]> rows() throws Exception;
    }

    /**
     * Runs {@code query} once cold and {@code reps} times hot, each timed with its rows read, and
     * puts into {@code line} the cold time, the hot median, the rows and whether the last run's
     * answer is the cold one's.
     */
    private static void runs(int reps, Run query, Map<String, String> line) throws Exception {
      double[] walls = new double[reps + 1];
      List<Object[]> first = null;
      List<Object[]> last = null;
      for (int r = 0; r <= reps; r++) {
        long q0 = System.nanoTime();
        last = query.rows();
        walls[r] = (System.nanoTime() - q0) / 1e6;
        first = r == 0 ? last : first;
      }
      line.put("cold", ms(walls[0]));
      line.put("hot", ms(median(Arrays.copyOfRange(walls, 1, walls.length))));
      line.put("rows", Integer.toString(last.size()));
      line.put("same", Boolean.toString(TpchAnswers.difference(first, last) == null));
    }

    private static VectorSchemaRoot read(Path data, String table, BufferAllocator a) throws IOException {
      Path file = TpchBenchmark.tableFile(data, table, List.of("arrow", "parquet", "csv"));
      String name = file.getFileName().toString();
      return dev.gpudf.sql.FileTables.read(file, name.substring(name.lastIndexOf('.') + 1), a);
    }

    private static double median(double[] xs) {
      double[] s = xs.clone();
      Arrays.sort(s);
      return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String ms(double v) {
      return String.format(Locale.ROOT, "%.3f", v);
    }
  }
}
