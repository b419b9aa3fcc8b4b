package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.DeviceActivity;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Evaluate;
import dev.gpudf.kernels.KernelLaunch;
import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchAnswers;
import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;

/**
 * The TPC-H harness, and with {@code --workload tpcds} the TPC-DS one (the 24 tables from
 * io.trino.tpcds, the 99 queries, answers compared up to the order of ORDER BY ties): generates
 * TPC-H at a scale factor on all cores (io.trino.tpch), or reads its
 * tables from files ({@code --data}: Parquet, Arrow IPC or CSV), loads them into
 * gpudf on the GPU, gpudf on the CPU backend and DuckDB (same host, all cores, loaded from the same
 * Arrow data through the C stream interface), runs the 22 queries on each (one cold run, then the
 * median of {@code --reps} hot runs), checks every gpudf answer against DuckDB's
 * ({@link TpchAnswers}), and writes a Markdown report with an SVG chart and a JSON report
 * ({@link TpchReport}). gpudf's time is split into planning, execution and result transfer, with
 * the device pool's peak per query; planning is also timed uncached after warm-up.
 *
 * Scales whose tables do not fit in host memory or in one string column (about SF13 and up) are
 * generated in parts streamed into the engines ({@code --stream} forces that at any scale, and
 * {@code --chunk-rows} then caps gpudf's table chunks, which otherwise end only at a string
 * column's 2 GiB).
 *
 * With {@code --data DIR --in-place} the engines query the files where they lie instead ({@link
 * #runInPlace}): cold runs read them.
 *
 * <pre>gpudf bench tpch [--sf 1] [--reps 5] [--engines gpu,cpu,duckdb] [--queries q1,q6] [--budget-s S] [--data DIR [--in-place]]
 *     [--device-budget-mb N] [--duckdb-file FILE] [--stream [--chunk-rows N]] [--out benchmarks/results]</pre>
 */
public final class TpchBenchmark {
  private TpchBenchmark() {}

  /** Command-line settings. */
  record Settings(double sf, int reps, List<String> engines, List<String> queries, Path out, double budgetSeconds,
      Path data, Path duckdbFile, boolean stream, int chunkRows, String command, boolean tpcds, boolean inPlace,
      long deviceBudgetMb) {
    static Settings parse(String[] args) {
      boolean tpcds = false;
      for (int i = 0; i + 1 < args.length; i++) {
        if (args[i].equals("--workload")) {
          if (!List.of("tpch", "tpcds").contains(args[i + 1])) {
            throw new IllegalArgumentException("--workload takes tpch or tpcds, not " + args[i + 1]);
          }
          tpcds = args[i + 1].equals("tpcds");
        }
      }
      double sf = 1;
      int reps = 5;
      List<String> engines = List.of("gpu", "cpu", "duckdb");
      List<String> queries = new ArrayList<>((tpcds ? TpcdsTables.queries() : TpchTables.queries()).keySet());
      Path out = Path.of("benchmarks", "results");
      double budget = Double.POSITIVE_INFINITY;
      Path data = null;
      Path duckdbFile = null;
      boolean stream = false;
      boolean inPlace = false;
      int chunkRows = Integer.MAX_VALUE;
      long deviceBudgetMb = -1;
      for (int i = 0; i < args.length; i++) {
        if (args[i].equals("--stream")) {
          stream = true;
          continue;
        }
        if (args[i].equals("--in-place")) {
          inPlace = true;
          continue;
        }
        String value = i + 1 < args.length ? args[i + 1] : null;
        switch (args[i]) {
          case "--sf" -> sf = Double.parseDouble(value);
          case "--reps" -> reps = Integer.parseInt(value);
          case "--engines" -> engines = List.of(value.split(","));
          case "--queries" -> queries = List.of(value.split(","));
          case "--out" -> out = Path.of(value);
          case "--budget-s" -> budget = Double.parseDouble(value);
          case "--data" -> data = Path.of(value);
          case "--duckdb-file" -> duckdbFile = Path.of(value);
          case "--chunk-rows" -> chunkRows = Integer.parseInt(value);
          case "--device-budget-mb" -> deviceBudgetMb = Long.parseLong(value);
          case "--workload" -> { }
          default -> throw new IllegalArgumentException("unknown option " + args[i]
              + " (options: --workload tpch|tpcds --sf N --reps N --engines gpu,cpu,duckdb --queries q1,q2 --budget-s SECONDS"
              + " --data DIR [--in-place] --device-budget-mb N --duckdb-file FILE --stream --chunk-rows N --out DIR)");
        }
        i++;
      }
      if (reps < 1 || sf <= 0 || budget <= 0) {
        throw new IllegalArgumentException("--reps must be at least 1, --sf and --budget-s positive");
      }
      if (duckdbFile != null && Files.exists(duckdbFile)) {
        throw new IllegalArgumentException("--duckdb-file " + duckdbFile + " exists; the harness makes a new database");
      }
      if (chunkRows < 1 || (chunkRows != Integer.MAX_VALUE && !stream)) {
        throw new IllegalArgumentException("--chunk-rows takes a positive number of rows, for a --stream run");
      }
      if (inPlace && (data == null || stream)) {
        throw new IllegalArgumentException("--in-place queries the files of --data where they are (not with --stream)");
      }
      if (deviceBudgetMb != -1 && (deviceBudgetMb < 0 || !inPlace)) {
        throw new IllegalArgumentException("--device-budget-mb takes the MiB a GPU catalog may keep of the files an"
            + " --in-place run reads (0 or more)");
      }
      if (tpcds && (stream || data != null)) {
        throw new IllegalArgumentException("--stream and --data are for TPC-H; TPC-DS is generated whole");
      }
      List<String> shown = new ArrayList<>(Arrays.asList(args));
      int w = shown.indexOf("--workload");
      if (w >= 0) {
        shown.subList(w, w + 2).clear();
      }
      return new Settings(sf, reps, engines, queries, out, budget, data, duckdbFile, stream, chunkRows,
          "gpudf bench " + (tpcds ? "tpcds" : "tpch") + (shown.isEmpty() ? "" : " " + String.join(" ", shown)), tpcds, inPlace,
          deviceBudgetMb);
    }

    /** The benchmark's name in reports: TPC-H or TPC-DS. */
    String title() {
      return tpcds ? "TPC-DS" : "TPC-H";
    }
  }

  public static void main(String[] args) throws Exception {
    Settings s = Settings.parse(args);
    TpchReport report = run(s);
    System.out.println("report: " + report.write(s.out()));
  }

  /**
   * Runs the whole benchmark and returns its report, which is rewritten into {@code s.out()}
   * after every query, so that a run stopped part way leaves what it measured.
   */
  static TpchReport run(Settings s) throws Exception {
    Map<String, String> all = s.tpcds() ? TpcdsTables.queries() : TpchTables.queries(s.sf());
    for (String q : s.queries()) {
      if (!all.containsKey(q)) {
        throw new IllegalArgumentException("no " + s.title() + " query " + q);
      }
    }
    TpchReport report = new TpchReport(s, Machine.describe(s.engines().contains("gpu")));
    try (BufferAllocator allocator = new RootAllocator()) {
      if (s.inPlace()) {
        report.readFrom(s.data());
        for (String engine : s.engines()) {
          runInPlace(engine, allocator, s, all, report);
        }
        report.checkAnswers();
        return report;
      }
      if (s.data() == null && (s.stream() || streams(s.sf(), hostMemory()))) {
        runStreamed(allocator, s, all, report);
        report.checkAnswers();
        return report;
      }
      Map<String, VectorSchemaRoot> tables = s.tpcds() ? generateTpcds(allocator, s.sf(), report)
          : s.data() == null ? generate(allocator, s.sf(), report) : read(allocator, s.data(), report);
      try {
        for (String engine : s.engines()) {
          runEngine(engine, allocator, tables, s, all, report);
        }
      } finally {
        tables.values().forEach(VectorSchemaRoot::close);
      }
    }
    report.checkAnswers();
    return report;
  }

  /** After each query: the answers so far checked and the report rewritten, for a run that is stopped before its end. */
  private static void checkpoint(TpchReport report, Settings s) throws IOException {
    report.checkAnswers();
    report.write(s.out());
  }

  /** Bytes of generated Arrow per unit of scale (13,458 MiB at SF10, on the H200 host). */
  static final double ARROW_BYTES_PER_SF = 1.411e9;
  /** lineitem.l_comment's bytes per unit of scale: the largest string column. */
  static final double LONGEST_STRINGS_PER_SF = 1.6e8;

  /**
   * Whether a scale is generated in parts that go into the engines as they are made (streamed)
   * rather than as whole tables first: when a whole string column would pass Arrow's 2 GiB
   * (32-bit offsets), or the tables would not fit in this host's memory.
   */
  static boolean streams(double sf, long hostMemoryBytes) {
    return LONGEST_STRINGS_PER_SF * sf > Integer.MAX_VALUE || ARROW_BYTES_PER_SF * sf > hostMemoryBytes;
  }

  private static long hostMemory() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getTotalMemorySize();
  }

  /** Rows of a generated part when streaming: small enough that twice the cores' worth of parts sits in memory. */
  static final long STREAMED_PART_ROWS = 1L << 21;

  /**
   * The streamed run: every table generated in parts of about {@link #STREAMED_PART_ROWS} rows,
   * each part appended to every engine (gpudf's as table chunks, see {@link
   * dev.gpudf.sql.Catalog#append}) as it is made and then freed, so no whole table is ever one
   * host Arrow table or one column; then each engine's queries. The CPU backend keeps its tables
   * in host memory, so it takes part only where they fit in half of it.
   */
  private static void runStreamed(BufferAllocator a, Settings s, Map<String, String> queries, TpchReport report)
      throws Exception {
    if (s.engines().contains("cpu") && ARROW_BYTES_PER_SF * s.sf() > hostMemory() / 2) {
      throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "the CPU backend holds SF%s's tables in host"
          + " memory (about %.0f GB), more than half of this host's %.0f GB; leave cpu out of --engines", s.sf(),
          ARROW_BYTES_PER_SF * s.sf() / 1e9, hostMemory() / 1e9));
    }
    boolean gpu = s.engines().contains("gpu");
    try (Gpu device = gpu ? Gpu.open(0) : null;
        Connection duckdb = s.engines().contains("duckdb") ? DriverManager.getConnection(duckDbUrl(s)) : null) {
      if (duckdb != null) {
        // DuckDB keeps appended rows uncompressed in memory, as in a run of whole tables (a
        // checkpoint would compress them: 0.5 s per 1.8M lineitem rows on 2 cores here); its
        // default limit (80% of memory) would leave the JVM's parts and chunks in flight too little
        try (Statement st = duckdb.createStatement()) {
          st.execute("SET memory_limit = '" + (hostMemory() * 7 / 10 >> 20) + "MB'");
          // appends in parallel, as DuckDB advises for bulk loads (every TPC-H query orders its result)
          st.execute("SET preserve_insertion_order = false");
        }
      }
      // the sessions close before the device their tables are on
      Map<String, GpuSession> sessions = new LinkedHashMap<>();
      try {
        for (String engine : s.engines()) {
          switch (engine) {
            case "gpu" -> sessions.put(engine, GpuSession.gpu(device, a));
            case "cpu" -> sessions.put(engine, GpuSession.cpu(a));
            case "duckdb" -> { }
            default -> throw new IllegalArgumentException("unknown engine " + engine + " (gpu, cpu, duckdb)");
          }
        }
        sessions.values().forEach(session -> session.catalog().maxChunkRows(s.chunkRows()));
        streamInto(a, s, sessions, (DuckDBConnection) duckdb, report, device);
        for (String engine : s.engines()) {
          if (sessions.containsKey(engine)) {
            runGpudfQueries(engine, sessions.get(engine), s, queries, report);
          } else {
            runDuckDbQueries(duckdb, s, queries, report);
          }
        }
      } finally {
        sessions.values().forEach(GpuSession::close);
      }
    }
  }

  /**
   * Generates every table in parts, gathers the parts on the host into chunks as large as a
   * gpudf table chunk may be (see {@link ChunkBuffer}), hands each chunk to the sessions and
   * DuckDB (when given), and reports the loads. Whole chunks, rather than parts, keep the
   * device's pool free of the holes that growing a chunk part by part leaves, and give DuckDB
   * inserts large enough to run on all its threads.
   */
  private static void streamInto(BufferAllocator a, Settings s, Map<String, GpuSession> sessions, DuckDBConnection duckdb,
      TpchReport report, Gpu device) {
    int cores = Runtime.getRuntime().availableProcessors();
    long expected = 0;
    for (TpchTable<?> t : TpchTable.getTables()) {
      expected += TpchRows.expected(t.getTableName(), s.sf());
    }
    Progress progress = new Progress("generating TPC-H SF" + s.sf() + " on " + cores + " cores into " + s.engines(), expected);
    Map<String, long[]> loadNanos = new LinkedHashMap<>();
    s.engines().forEach(e -> loadNanos.put(e, new long[1]));
    long[] bytes = new long[1];
    long t0 = System.nanoTime();
    for (TpchTable<?> t : TpchTable.getTables()) {
      String name = t.getTableName();
      int parts = (int) Math.max(cores, TpchRows.expected(name, s.sf()) / STREAMED_PART_ROWS);
      boolean[] first = {true};
      java.util.function.Consumer<VectorSchemaRoot> load = chunk -> {
        for (String engine : s.engines()) {
          long g = System.nanoTime();
          GpuSession session = sessions.get(engine);
          if (session == null) {
            appendToDuckDb(duckdb, a, name, chunk, first[0]);
          } else if (first[0]) {
            session.catalog().register(name, chunk);
          } else {
            session.catalog().append(name, chunk);
          }
          loadNanos.get(engine)[0] += System.nanoTime() - g;
        }
        first[0] = false;
      };
      try (ChunkBuffer buffer = new ChunkBuffer(a, s.chunkRows())) {
        TpchTables.generate(a, t, s.sf(), parts, cores, progress::add, part -> {
          // the generated Arrow's size, as a run of whole tables reports it (a concatenated chunk's
          // vectors report their used bytes only)
          bytes[0] += arrowBytes(part);
          if (!buffer.fits(part)) {
            try (VectorSchemaRoot chunk = buffer.take()) {
              load.accept(chunk);
            }
          }
          buffer.add(part);
        });
        try (VectorSchemaRoot chunk = buffer.take()) {
          load.accept(chunk);
        }
      }
    }
    progress.done();
    report.streamed();
    report.generated((System.nanoTime() - t0) / 1e6, progress.count(), bytes[0]);
    for (String engine : s.engines()) {
      report.loaded(engine, loadNanos.get(engine)[0] / 1e6, engine.equals("gpu") ? device.pool().stats().allocated() : 0,
          sessions.containsKey(engine) ? sessions.get(engine).catalog().residency().spilledBytes() : 0);
    }
  }

  /**
   * Generated parts of one table kept on the host (their buffers moved, not copied) until one
   * more would pass a chunk's limits ({@link dev.gpudf.sql.Catalog}'s): {@code maxRows} rows, or a
   * string column's {@link dev.gpudf.sql.Catalog#CHUNK_STRING_BYTES}.
   */
  static final class ChunkBuffer implements AutoCloseable {
    private final BufferAllocator allocator;
    private final long maxRows;
    private final List<VectorSchemaRoot> parts = new ArrayList<>();
    private long rows;
    private long[] stringBytes;

    ChunkBuffer(BufferAllocator allocator, int maxRows) {
      this.allocator = allocator;
      this.maxRows = maxRows;
    }

    /** Whether {@code part} joins the parts held within the limits (always, when none is held). */
    boolean fits(VectorSchemaRoot part) {
      if (parts.isEmpty()) {
        return true;
      }
      if (rows + part.getRowCount() > maxRows) {
        return false;
      }
      long[] more = stringBytes(part);
      for (int c = 0; c < more.length; c++) {
        if (stringBytes[c] + more[c] > dev.gpudf.sql.Catalog.CHUNK_STRING_BYTES) {
          return false;
        }
      }
      return true;
    }

    /** Takes over {@code part}'s buffers (the caller may close it). */
    void add(VectorSchemaRoot part) {
      List<org.apache.arrow.vector.FieldVector> moved = new ArrayList<>();
      for (org.apache.arrow.vector.FieldVector v : part.getFieldVectors()) {
        org.apache.arrow.vector.util.TransferPair pair = v.getTransferPair(allocator);
        pair.transfer();
        moved.add((org.apache.arrow.vector.FieldVector) pair.getTo());
      }
      VectorSchemaRoot kept = new VectorSchemaRoot(moved);
      kept.setRowCount(part.getRowCount());
      long[] more = stringBytes(kept);
      if (stringBytes == null) {
        stringBytes = more;
      } else {
        for (int c = 0; c < more.length; c++) {
          stringBytes[c] += more[c];
        }
      }
      parts.add(kept);
      rows += kept.getRowCount();
    }

    /** The parts held as one root (the caller closes it), and the buffer empty again. */
    VectorSchemaRoot take() {
      try {
        return parts.size() == 1 ? parts.remove(0) : TpchTables.concatenate(allocator, parts);
      } finally {
        close();
        rows = 0;
        stringBytes = null;
      }
    }

    private static long[] stringBytes(VectorSchemaRoot root) {
      return root.getFieldVectors().stream().mapToLong(v -> v instanceof org.apache.arrow.vector.BaseVariableWidthVector w
          ? w.sizeOfValueBuffer() : 0).toArray();
    }

    @Override
    public void close() {
      parts.forEach(VectorSchemaRoot::close);
      parts.clear();
    }
  }

  private static void appendToDuckDb(DuckDBConnection duck, BufferAllocator a, String name, VectorSchemaRoot part, boolean first) {
    try {
      if (first) {
        DuckDbTables.load(duck, a, name, part);
      } else {
        DuckDbTables.append(duck, a, name, part);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("DuckDB did not take a part of " + name + ": " + e.getMessage(), e);
    }
  }

  /** DuckDB in memory, or in {@code --duckdb-file} (for data larger than memory, as DuckDB's own SF100 runs keep it). */
  private static String duckDbUrl(Settings s) {
    return s.duckdbFile() == null ? "jdbc:duckdb:" : "jdbc:duckdb:" + s.duckdbFile().toAbsolutePath();
  }

  /** Table {@code name}'s file in {@code dir}: {@code name.<format>} of the first of {@code formats} there is. */
  static Path tableFile(Path dir, String name, List<String> formats) {
    return formats.stream().map(f -> dir.resolve(name + "." + f)).filter(Files::exists).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no " + name + "." + String.join(" or .", formats) + " in " + dir
            + (Files.isDirectory(dir.resolve(name)) ? " (a table as a directory of files is queried --in-place)" : "")));
  }

  /** The eight tables from {@code dir}: {@code <table>.parquet}, {@code .arrow} or {@code .csv} each (see {@link FileTables}). */
  private static Map<String, VectorSchemaRoot> read(BufferAllocator a, Path dir, TpchReport report) throws IOException {
    Map<String, VectorSchemaRoot> tables = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    try {
      for (TpchTable<?> t : TpchTable.getTables()) {
        Path file = tableFile(dir, t.getTableName(), List.of("parquet", "arrow", "csv"));
        String name = file.getFileName().toString();
        tables.put(t.getTableName(), FileTables.read(file, name.substring(name.lastIndexOf('.') + 1), a));
      }
    } catch (IOException | RuntimeException e) {
      tables.values().forEach(VectorSchemaRoot::close);
      throw e;
    }
    long rows = tables.values().stream().mapToLong(VectorSchemaRoot::getRowCount).sum();
    report.readFrom(dir);
    report.generated((System.nanoTime() - t0) / 1e6, rows, tables.values().stream().mapToLong(TpchBenchmark::arrowBytes).sum());
    return tables;
  }

  private static Map<String, VectorSchemaRoot> generate(BufferAllocator a, double sf, TpchReport report) {
    int cores = Runtime.getRuntime().availableProcessors();
    long expected = 0;
    for (TpchTable<?> t : TpchTable.getTables()) {
      expected += TpchRows.expected(t.getTableName(), sf);
    }
    Progress progress = new Progress("generating TPC-H SF" + sf + " on " + cores + " cores", expected);
    Map<String, VectorSchemaRoot> tables = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    try {
      for (TpchTable<?> t : TpchTable.getTables()) {
        tables.put(t.getTableName(), TpchTables.arrow(a, t, sf, cores, progress::add));
      }
    } catch (RuntimeException e) {
      tables.values().forEach(VectorSchemaRoot::close);
      throw e;
    }
    progress.done();
    long bytes = tables.values().stream().mapToLong(TpchBenchmark::arrowBytes).sum();
    report.generated((System.nanoTime() - t0) / 1e6, progress.count(), bytes);
    return tables;
  }

  /** The 24 TPC-DS tables at {@code sf}, generated on all cores ({@link TpcdsTables}). */
  private static Map<String, VectorSchemaRoot> generateTpcds(BufferAllocator a, double sf, TpchReport report) {
    int cores = Runtime.getRuntime().availableProcessors();
    Map<String, VectorSchemaRoot> tables = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    long[] rows = new long[1];
    try {
      TpcdsTables.generate(a, sf, cores, (name, n) -> {
        rows[0] += n;
        System.out.printf("generated TPC-DS SF%s %s: %,d rows%n", sf, name, n);
      }, tables::put);
    } catch (RuntimeException e) {
      tables.values().forEach(VectorSchemaRoot::close);
      throw e;
    }
    long bytes = tables.values().stream().mapToLong(TpchBenchmark::arrowBytes).sum();
    report.generated((System.nanoTime() - t0) / 1e6, rows[0], bytes);
    return tables;
  }

  static long arrowBytes(VectorSchemaRoot root) {
    return root.getFieldVectors().stream().mapToLong(v -> v.getBufferSize()).sum();
  }

  private static void runEngine(String engine, BufferAllocator allocator, Map<String, VectorSchemaRoot> tables, Settings s,
      Map<String, String> queries, TpchReport report) throws Exception {
    switch (engine) {
      case "gpu", "cpu" -> {
        boolean gpu = engine.equals("gpu");
        try (Gpu device = gpu ? Gpu.open(0) : null;
            GpuSession session = gpu ? GpuSession.gpu(device, allocator) : GpuSession.cpu(allocator)) {
          long t0 = System.nanoTime();
          Progress progress = loading(engine, tables);
          for (Map.Entry<String, VectorSchemaRoot> t : tables.entrySet()) {
            session.catalog().register(t.getKey(), t.getValue());
            progress.add(t.getValue().getRowCount());
          }
          progress.done();
          report.loaded(engine, (System.nanoTime() - t0) / 1e6, gpu ? device.pool().stats().allocated() : 0,
              session.catalog().residency().spilledBytes());
          runGpudfQueries(engine, session, s, queries, report);
        }
      }
      case "duckdb" -> {
        try (Connection duck = DriverManager.getConnection(duckDbUrl(s))) {
          long t0 = System.nanoTime();
          Progress progress = loading(engine, tables);
          for (Map.Entry<String, VectorSchemaRoot> t : tables.entrySet()) {
            DuckDbTables.load((DuckDBConnection) duck, allocator, t.getKey(), t.getValue(), progress::add);
          }
          progress.done();
          report.loaded(engine, (System.nanoTime() - t0) / 1e6, 0, 0);
          runDuckDbQueries(duck, s, queries, report);
        }
      }
      default -> throw new IllegalArgumentException("unknown engine " + engine + " (gpu, cpu, duckdb)");
    }
  }

  /**
   * {@code --in-place}: each engine queries the files of {@code --data} where they lie, nothing
   * loaded first: gpudf's file tables (footers read at open, chunks read as queries scan them) and
   * DuckDB's views over {@code read_parquet} / {@code read_csv}. The "load" is opening them; a
   * query's cold run reads its files, and gpudf keeps what it read for the hot runs.
   */
  private static void runInPlace(String engine, BufferAllocator allocator, Settings s, Map<String, String> queries,
      TpchReport report) throws Exception {
    long t0 = System.nanoTime();
    switch (engine) {
      case "gpu", "cpu" -> {
        boolean gpu = engine.equals("gpu");
        try (Gpu device = gpu ? Gpu.open(0) : null;
            GpuSession session = gpu ? GpuSession.gpu(device, allocator) : GpuSession.cpu(allocator)) {
          if (gpu && s.deviceBudgetMb() >= 0) {
            // below the data's size, scans drop what they read to stay within it and read it again when
            // needed; set before the files open, whose chunks it sizes, and whose joins it partitions
            session.catalog().deviceBudget(s.deviceBudgetMb() << 20);
            System.out.printf("%s: the catalog keeps at most %,d MiB of what it reads on the device; a join reading more"
                + " than %,d MiB whole runs in partitions%n", engine, s.deviceBudgetMb(), session.catalog().partitionBytes() >> 20);
          }
          System.out.printf("%s: opened %s%n", engine, FileTables.loadDirectory(session.catalog(), s.data(), allocator));
          report.loaded(engine, (System.nanoTime() - t0) / 1e6, gpu ? device.pool().stats().allocated() : 0, 0);
          runGpudfQueries(engine, session, s, queries, report);
        }
      }
      case "duckdb" -> {
        try (Connection duck = DriverManager.getConnection(duckDbUrl(s)); Statement st = duck.createStatement()) {
          for (TpchTable<?> t : TpchTable.getTables()) {
            // DuckDB reads Arrow IPC files only through an extension this host cannot fetch; a table
            // written as a directory of Parquet files (TpchFiles --files-per-table) is read as one
            Path dir = s.data().resolve(t.getTableName());
            Path file = Files.isDirectory(dir) ? dir.resolve("*.parquet")
                : tableFile(s.data(), t.getTableName(), List.of("parquet", "csv"));
            String reader = file.toString().endsWith(".parquet") ? "read_parquet" : "read_csv";
            st.execute("CREATE VIEW " + t.getTableName() + " AS SELECT * FROM " + reader + "('"
                + file.toString().replace("'", "''") + "')");
          }
          report.loaded(engine, (System.nanoTime() - t0) / 1e6, 0, 0);
          runDuckDbQueries(duck, s, queries, report);
        }
      }
      default -> throw new IllegalArgumentException("unknown engine " + engine + " (gpu, cpu, duckdb)");
    }
  }

  /** The queries on gpudf (each checked and the report rewritten), then planning without the cache. */
  private static void runGpudfQueries(String engine, GpuSession session, Settings s, Map<String, String> queries,
      TpchReport report) throws IOException {
    if (session.gpu() != null) {
      // the roofline's bandwidth, measured in this run (the machines are shared)
      report.deviceBandwidth(KernelBenchmark.copyGBps(session.gpu(), session.allocator(), BANDWIDTH_COPY_BYTES, 5));
      if (s.inPlace()) {
        // what a cold scan's stored pages pass through: a copy from the page cache, then the link
        try {
          report.scanBandwidths(TransferBenchmark.pinnedToDeviceGBps(session.gpu(), 1L << 30, 5),
              TransferBenchmark.hostCopyGBps(1L << 30, Runtime.getRuntime().availableProcessors(), 5));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while measuring the host's copy bandwidth", e);
        }
      }
    }
    long start = System.nanoTime();
    dev.gpudf.sql.Catalog catalog = session.catalog();
    for (String q : s.queries()) {
      if (!overBudget(engine, q, start, s, report)) {
        dev.gpudf.sql.Catalog.FileReads before = catalog.fileReads();
        dev.gpudf.sql.Catalog.ReadsAhead aheadBefore = catalog.readsAhead();
        dev.gpudf.sql.Catalog.ChunkScans scansBefore = catalog.chunkScans();
        if (s.inPlace()) {
          // a cold run reads its files: what earlier queries left on the device is dropped first
          long budget = catalog.deviceBudget();
          catalog.deviceBudget(0);
          catalog.deviceBudget(budget);
        }
        runGpudf(engine, session, q, queries.get(q), s.reps(), report);
        dev.gpudf.sql.Catalog.FileReads after = catalog.fileReads();
        if (after.columnChunks() > before.columnChunks()) {
          System.out.printf(java.util.Locale.ROOT, "%s %s read from files: %,d column chunks, %,d MiB on the device (read"
              + " again after the budget dropped them: %,d, %,d MiB; decoded on the device: %,d, from %,d MiB of stored"
              + " pages; chunk rows read: %,d)%n", engine, q,
              after.columnChunks() - before.columnChunks(), (after.bytes() - before.bytes()) >> 20,
              after.rereadColumnChunks() - before.rereadColumnChunks(), (after.rereadBytes() - before.rereadBytes()) >> 20,
              after.decodedOnDevice() - before.decodedOnDevice(), (after.storedBytes() - before.storedBytes()) >> 20,
              after.rows() - before.rows());
        }
        dev.gpudf.sql.Catalog.ChunkScans scans = catalog.chunkScans();
        if (scans.filtered() > scansBefore.filtered() || scans.partitioned() > scansBefore.partitioned()) {
          System.out.printf("%s %s chunk scans under a filter when planned: %,d; skipped by statistics or partition values: %,d;"
              + " joins and aggregates run in partitions: %,d%n", engine, q, scans.filtered() - scansBefore.filtered(),
              scans.skipped() - scansBefore.skipped(), scans.partitioned() - scansBefore.partitioned());
        }
        if (s.inPlace() && session.gpu() != null) {
          dev.gpudf.columnar.cuda.DeviceMemoryPool.Stats pool = session.gpu().pool().stats();
          // the session starts the pool's peak anew at every run: this is the last run's
          System.out.printf(java.util.Locale.ROOT, "%s %s device memory: peak %,d MiB in its last run; after it %,d MiB, of which"
              + " the catalog keeps %,d MiB (budget %,d MiB)%n", engine, q, pool.peak() >> 20, pool.allocated() >> 20,
              catalog.residency().deviceBytes() >> 20, catalog.deviceBudget() >> 20);
        }
        dev.gpudf.sql.Catalog.ReadsAhead ahead = catalog.readsAhead();
        if (after.columnChunks() > before.columnChunks() || ahead.started() > aheadBefore.started()) {
          System.out.printf("%s %s chunks read ahead: %d, taken by their scans: %d; pinned pool after it: %,d MiB%n", engine, q,
              ahead.started() - aheadBefore.started(), ahead.taken() - aheadBefore.taken(),
              session.gpu() == null ? 0 : session.gpu().pinnedReserved() >> 20);
        }
      }
      checkpoint(report, s);
    }
    // for the log: where each table's columns ended up (a GPU session spills past its device budget)
    for (String table : session.catalog().names()) {
      dev.gpudf.sql.Catalog.Residency r = session.catalog().residency(table);
      if (r.spilledBytes() > 0) {
        System.out.printf(java.util.Locale.ROOT, "%s %s after the queries: %,d MiB on the device, %,d MiB spilled to host memory%n",
            engine, table, r.deviceBytes() >> 20, r.spilledBytes() >> 20);
      }
    }
    if (SAMPLE_RUNS > 0) {
      ALL_SAMPLES.getOrDefault(engine, new HostSampler.Counts()).print("SAMPLE all " + engine, 40);
    }
    planning(engine, session, s.queries(), queries, report);
    checkpoint(report, s);
  }

  private static void runDuckDbQueries(Connection duck, Settings s, Map<String, String> queries, TpchReport report)
      throws IOException {
    long start = System.nanoTime();
    for (String q : s.queries()) {
      if (!overBudget("duckdb", q, start, s, report)) {
        runDuckDb(duck, q, queries.get(q), s.reps(), report);
      }
      checkpoint(report, s);
    }
  }

  /**
   * Bytes of the device copy that measures the roofline's bandwidth: 256 MiB, five times the H200's
   * 50 MB L2, and small beside the tables already loaded (its two buffers are taken after them).
   */
  private static final long BANDWIDTH_COPY_BYTES = 1L << 28;

  /** Planning rounds over every query before the timed ones: the planner's code is compiled by the JIT by then. */
  static final int PLANNING_WARM_UP_ROUNDS = 20;
  static final int PLANNING_ROUNDS = 5;

  /**
   * Planning time without the plan cache ({@code explain}), per query: the median of {@link
   * #PLANNING_ROUNDS} rounds over all queries after {@link #PLANNING_WARM_UP_ROUNDS} untimed ones,
   * so a query's figure does not carry the JIT's warm-up of planner code it happens to meet first.
   * A query that failed is left out.
   */
  private static void planning(String engine, GpuSession session, List<String> names, Map<String, String> queries,
      TpchReport report) {
    List<String> planned = names.stream().filter(q -> report.ran(engine, q)).toList();
    Map<String, double[]> times = new LinkedHashMap<>();
    planned.forEach(q -> times.put(q, new double[PLANNING_ROUNDS]));
    for (int round = -PLANNING_WARM_UP_ROUNDS; round < PLANNING_ROUNDS; round++) {
      for (String q : planned) {
        long t0 = System.nanoTime();
        session.explain(queries.get(q));
        if (round >= 0) {
          times.get(q)[round] = (System.nanoTime() - t0) / 1e6;
        }
      }
    }
    times.forEach((q, t) -> report.uncachedPlan(engine, q, median(t)));
  }

  /**
   * Whether {@code engine} has spent its {@code --budget-s} since {@code start}; if so {@code query}
   * is reported as skipped. An engine's first query always runs.
   */
  private static boolean overBudget(String engine, String query, long start, Settings s, TpchReport report) {
    double spent = (System.nanoTime() - start) / 1e9;
    if (query.equals(s.queries().get(0)) || spent <= s.budgetSeconds()) {
      return false;
    }
    report.skipped(engine, query, String.format(java.util.Locale.ROOT, "skipped: the engine's budget of %.0f s was spent",
        s.budgetSeconds()));
    return true;
  }

  /** Progress of loading {@code tables} into {@code engine} (gpudf: a table at a time; DuckDB: a batch at a time). */
  private static Progress loading(String engine, Map<String, VectorSchemaRoot> tables) {
    return new Progress("loading into " + engine, tables.values().stream().mapToLong(VectorSchemaRoot::getRowCount).sum());
  }

  private static void runGpudf(String engine, GpuSession session, String name, String sql, int reps, TpchReport report) {
    System.out.printf("%s %s ...%n", engine, name);
    try {
      List<GpuSession.QueryTimings> runs = new ArrayList<>();
      List<Object[]> rows = null;
      double cold = 0;
      Evaluate.GeneratedKernelStats kernelsBefore = generatedKernels(session);
      DeviceActivity.Counts hotStart = null;
      dev.gpudf.sql.Catalog.FileReads coldReads = session.catalog().fileReads();
      for (int r = 0; r <= reps; r++) {
        if (r == 1) {
          hotStart = DeviceActivity.snapshot();
        }
        HostSampler.Counts coldSamples = r == 0 && SAMPLE_COLD ? new HostSampler.Counts() : null;
        HostSampler.Counts workerSamples = coldSamples == null ? null : new HostSampler.Counts();
        if (r == 0 && PROFILE) {
          KernelLaunch.takeProfile();
        }
        long t0 = System.nanoTime();
        try (HostSampler sampler = coldSamples == null ? null : new HostSampler(Thread.currentThread(), 1000, coldSamples);
            HostSampler workers = workerSamples == null ? null : HostSampler.workers(1000, workerSamples);
            VectorSchemaRoot result = session.query(sql, List.of(), t -> runs.add(t))) {
          if (r == reps) {
            rows = TpchAnswers.rows(result);
          }
        }
        if (r == 0) {
          cold = (System.nanoTime() - t0) / 1e6;
          dev.gpudf.sql.Catalog.FileReads read = session.catalog().fileReads();
          report.coldScan(engine, name, read.storedBytes() - coldReads.storedBytes(), read.rows() - coldReads.rows());
          // for the log: how a cold run divides (planning includes the JIT's first pass over the planner)
          GpuSession.QueryTimings c = runs.get(0);
          System.out.printf(java.util.Locale.ROOT, "%s %s cold: %.1f ms = plan %.1f + execute %.1f + transfer %.1f%n", engine,
              name, cold, c.planNanos() / 1e6, c.executeNanos() / 1e6, c.transferNanos() / 1e6);
          if (c.planPhases() != null) {
            System.out.printf("%s %s cold plan: %s%n", engine, name, c.planPhases().text());
          }
          Evaluate.GeneratedKernelStats kernels = generatedKernels(session);
          if (kernels.kernels() > kernelsBefore.kernels()) {
            System.out.printf(java.util.Locale.ROOT, "%s %s cold: %d expression kernels generated, compiled and loaded in %.1f ms (a load waits for device work under way)%n",
                engine, name, kernels.kernels() - kernelsBefore.kernels(),
                (kernels.compileNanos() - kernelsBefore.compileNanos()) / 1e6);
          }
          if (PROFILE) {
            printProfile(name + " cold", cold, KernelLaunch.takeProfile());
          }
          if (coldSamples != null) {
            coldSamples.print("SAMPLE cold " + engine + " " + name, 15);
            workerSamples.print("SAMPLE cold workers " + engine + " " + name, 15);
          }
          runs.clear();
        }
      }
      report.gpudfQuery(engine, name, cold, runs, rows);
      if (hotStart != null) {
        report.activity(engine, name, DeviceActivity.snapshot().since(hotStart), reps);
      }
      report.scanned(engine, name, session.scanBytes(sql));
      if (PROFILE) {
        profile(session, name, sql);
      }
      if (SAMPLE_RUNS > 0) {
        sampleHost(engine, session, name, sql);
      }
    } catch (RuntimeException e) {
      report.failed(engine, name, e);
    }
  }

  /**
   * With {@code -Dgpudf.debug.sampleCold=true}: each query's cold run has its thread's stack
   * sampled every millisecond ({@link HostSampler}) and its top frames printed, to show what a first
   * run does that later runs skip (class loading, the JIT's first code, reading files, compiling kernels);
   * and gpudf's worker threads' (the readers the query thread waits for) likewise, those not idle.
   */
  private static final boolean SAMPLE_COLD = Boolean.getBoolean("gpudf.debug.sampleCold");

  /** The kernels generated on the session's device so far; none on the CPU backend. */
  private static Evaluate.GeneratedKernelStats generatedKernels(GpuSession session) {
    return session.gpu() == null ? new Evaluate.GeneratedKernelStats(0, 0) : Evaluate.generatedKernels(session.gpu().device());
  }

  /**
   * With {@code -Dgpudf.debug.sampleHost=N}: N more runs of each query with the query thread's
   * stack sampled every 200 us ({@link HostSampler}), each query's top frames printed, and those of
   * all queries at the end of the run.
   */
  private static final int SAMPLE_RUNS = Integer.getInteger("gpudf.debug.sampleHost", 0);
  private static final Map<String, HostSampler.Counts> ALL_SAMPLES = new java.util.concurrent.ConcurrentHashMap<>();

  private static void sampleHost(String engine, GpuSession session, String name, String sql) {
    HostSampler.Counts counts = new HostSampler.Counts();
    try (HostSampler sampler = new HostSampler(Thread.currentThread(), 200, counts)) {
      for (int r = 0; r < SAMPLE_RUNS; r++) {
        session.query(sql).close();
      }
    }
    counts.print("SAMPLE " + engine + " " + name, 12);
    ALL_SAMPLES.computeIfAbsent(engine, e -> new HostSampler.Counts()).add(counts);
  }

  private static final boolean PROFILE = Boolean.getBoolean("gpudf.debug.profileLaunches");

  /**
   * With {@code -Dgpudf.debug.profileLaunches=true}: one more run of {@code sql} whose kernel
   * launches are each synchronised and timed, printed against the run's wall time, so that the
   * time outside kernels (host work, copies, allocation) shows. Every launch is synchronised for
   * the whole run then, so its figures are a breakdown, not a measurement. The cold run's launches
   * (those of the reads' decoding on their threads too) are printed the same way.
   */
  private static void profile(GpuSession session, String name, String sql) {
    KernelLaunch.takeProfile();
    long t0 = System.nanoTime();
    session.query(sql).close();
    printProfile(name, (System.nanoTime() - t0) / 1e6, KernelLaunch.takeProfile());
  }

  /** The launches of {@code kernels} against {@code wall} ms of a run of query {@code name}. */
  private static void printProfile(String name, double wall, Map<String, long[]> kernels) {
    long launches = kernels.values().stream().mapToLong(e -> e[0]).sum();
    double inKernels = kernels.values().stream().mapToLong(e -> e[1]).sum() / 1e6;
    System.out.printf("PROFILE %s: %.2f ms wall, %.2f ms in %d launches, %.2f ms outside them%n", name, wall, inKernels,
        launches, wall - inKernels);
    kernels.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1])).limit(8)
        .forEach(e -> System.out.printf("PROFILE   %-36s %5d launches %9.3f ms%n", e.getKey(), e.getValue()[0],
            e.getValue()[1] / 1e6));
  }

  private static void runDuckDb(Connection duck, String name, String sql, int reps, TpchReport report) {
    System.out.printf("duckdb %s ...%n", name);
    try {
      double[] hot = new double[reps];
      List<Object[]> rows = null;
      double cold = 0;
      for (int r = 0; r <= reps; r++) {
        long t0 = System.nanoTime();
        try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
          List<Object[]> got = TpchAnswers.rows(rs);
          if (r == reps) {
            rows = got;
          }
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        if (r == 0) {
          cold = ms;
        } else {
          hot[r - 1] = ms;
        }
      }
      report.duckdbQuery(name, cold, median(hot), rows);
    } catch (SQLException | RuntimeException e) {
      report.failed("duckdb", name, e);
    }
  }

  static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  /** Rows a TPC-H table has at a scale factor (the spec's cardinalities), for progress estimates. */
  static final class TpchRows {
    private TpchRows() {}

    static long expected(String table, double sf) {
      return switch (table) {
        case "lineitem" -> (long) (6_001_215 * sf);
        case "orders" -> (long) (1_500_000 * sf);
        case "partsupp" -> (long) (800_000 * sf);
        case "part" -> (long) (200_000 * sf);
        case "customer" -> (long) (150_000 * sf);
        case "supplier" -> (long) (10_000 * sf);
        case "nation" -> 25;
        default -> 5;
      };
    }
  }

  /** Progress of a long step on standard output, at most once a second: rows, rows/s, time left. */
  static final class Progress {
    private final String what;
    private final long expected;
    private final long start = System.nanoTime();
    private final AtomicLong count = new AtomicLong();
    private final AtomicLong lastPrint = new AtomicLong(System.nanoTime());

    Progress(String what, long expected) {
      this.what = what;
      this.expected = Math.max(1, expected);
    }

    void add(long rows) {
      long now = System.nanoTime();
      long c = count.addAndGet(rows);
      long last = lastPrint.get();
      if (now - last > 1_000_000_000L && lastPrint.compareAndSet(last, now)) {
        double secs = (now - start) / 1e9;
        double rate = c / secs;
        System.out.printf("%s: %,d of ~%,d rows, %.2f M rows/s, ~%.0f s left%n", what, c, expected, rate / 1e6,
            Math.max(0, (expected - c) / rate));
      }
    }

    long count() {
      return count.get();
    }

    void done() {
      double secs = (System.nanoTime() - start) / 1e9;
      System.out.printf("%s: %,d rows in %.1f s (%.2f M rows/s)%n", what, count.get(), secs, count.get() / secs / 1e6);
    }
  }

  /** The machine a report was measured on. */
  record Machine(String gpu, String driver, int cores, String java, String commit, LocalDate date) {
    static Machine describe(boolean withGpu) {
      String gpu = "none";
      String driver = "";
      if (withGpu) {
        try (Gpu g = Gpu.open(0)) {
          gpu = g.device().name() + ", " + (g.device().totalMemory() >> 20) + " MiB";
          driver = "CUDA driver " + dev.gpudf.columnar.cuda.Cuda.availability().driverVersionString();
        }
      }
      return new Machine(gpu, driver, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
          checkedOutCommit(), LocalDate.now());
    }

    /** The commit checked out: GPUDF_COMMIT, else read from .git (the GPU host has no git command). */
    private static String checkedOutCommit() {
      String env = System.getenv("GPUDF_COMMIT");
      if (env != null && !env.isBlank()) {
        return env.strip();
      }
      try {
        Path git = Path.of(".git");
        String head = Files.readString(git.resolve("HEAD")).strip();
        if (head.startsWith("ref: ")) {
          Path ref = git.resolve(head.substring(5));
          return Files.exists(ref) ? Files.readString(ref).strip() : head.substring(5);
        }
        return head;
      } catch (IOException e) {
        return "unknown (no .git here; set GPUDF_COMMIT)";
      }
    }
  }
}
