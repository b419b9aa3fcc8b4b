package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.gpudf.columnar.cuda.DeviceActivity;
import dev.gpudf.sql.GpuSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The TPC-H harness end to end at a tiny scale, CPU backend against DuckDB: answers checked, reports written. */
class TpchBenchmarkTest {
  @Test
  void runsChecksAndReports(@TempDir Path dir) throws Exception {
    TpchBenchmark.Settings s = TpchBenchmark.Settings.parse(new String[] {"--sf", "0.002", "--reps", "2", "--engines",
        "cpu,duckdb", "--queries", "q1,q3,q13,q22", "--out", dir.toString()});
    TpchReport report = TpchBenchmark.run(s);
    assertTrue(report.answersAgree());
    Path md = report.write(dir);
    String text = Files.readString(md);
    for (String q : new String[] {"| q1 |", "| q3 |", "| q13 |", "| q22 |"}) {
      assertTrue(text.contains(q), text);
    }
    assertTrue(text.contains("- answers: 4 gpudf answers compared with DuckDB's: 4 agree, 0 DIFFER; 0 not compared"
        + " (no DuckDB answer); 0 failed"), text);
    assertTrue(text.contains("geometric-mean hot speedup of gpudf cpu over DuckDB"), text);
    assertTrue(text.contains("gpudf cpu planning without the cache: longest"), text);
    String base = md.getFileName().toString().replace(".md", "");
    String json = Files.readString(dir.resolve(base + ".json"));
    assertTrue(json.contains("\"answers_agree\": true") && json.contains("\"q13\": {\"cpu\": {"), json);
    String svg = Files.readString(dir.resolve(base + ".svg"));
    assertEquals(8, svg.split("<rect x=\"\\d+\" y=\"[0-9.]+\" width=\"8\"").length - 1, "two bars for each of four queries");
    assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.run(TpchBenchmark.Settings.parse(
        new String[] {"--sf", "0.001", "--queries", "q99"})));
  }

  /** A GPU run's roofline columns: least bytes read over the bandwidth measured in the run, and hot time against it. */
  @Test
  void aGpuReportPlacesEachQueryAgainstItsRoofline() {
    TpchBenchmark.Settings s = TpchBenchmark.Settings.parse(new String[] {"--sf", "10", "--engines", "gpu,duckdb",
        "--queries", "q1,q6"});
    TpchReport report = new TpchReport(s, new TpchBenchmark.Machine("H200", "", 16, "25", "abc", java.time.LocalDate.now()));
    report.deviceBandwidth(4000);
    List<Object[]> answer = List.<Object[]>of(new Object[] {1L});
    // q1 reads 2 GB in 10 ms: 0.5 ms of roofline, 5%; q6 reads 400 MB in 0.2 ms: 0.1 ms, 50%
    report.gpudfQuery("gpu", "q1", 50, List.of(new GpuSession.QueryTimings(0, 10_000_000, 0, 0)), answer);
    report.scanned("gpu", "q1", 2_000_000_000L);
    // 5 hot runs made 450 launches, 100 waits and 10 streams between them
    report.activity("gpu", "q1", new DeviceActivity.Counts(450, 100, 10), 5);
    report.gpudfQuery("gpu", "q6", 5, List.of(new GpuSession.QueryTimings(0, 200_000, 0, 0)), answer);
    report.scanned("gpu", "q6", 400_000_000L);
    report.duckdbQuery("q1", 300, 200, answer);
    report.duckdbQuery("q6", 100, 40, answer);
    report.checkAnswers();
    String text = report.markdown("x.svg");
    assertTrue(text.contains("| 1,907 | 0.500 | 5.0% |"), text);
    assertTrue(text.contains("| 10.00 / 0.00 | 90 / 20 / 2 |"), text);
    assertFalse(text.contains("below 5% of the roofline"), "q1 at 5.0% and q6 at 50% are not far from it: " + text);
    assertTrue(text.contains("| 381 | 0.100 | 50.0% |"), text);
    // geometric mean of 5% and 50%
    assertTrue(text.contains("measured in this run, 4000 GB/s (read + written); geometric mean of roofline / gpu hot time:"
        + " 15.81%"), text);
    String json = report.json();
    assertTrue(json.contains("\"launches\": 90.0, \"waits\": 20.0, \"streams\": 2.0"), json);
    assertTrue(json.contains("\"scan_bytes\": 2000000000, \"roofline_ms\": 0.5000") && json.contains("\"device_copy_gbps\": 4000.0"),
        json);
  }

  /** A run over files places each cold scan against the host's copy and the link, as measured in the run. */
  @Test
  void aColdScanFromFilesIsPlacedAgainstTheHostCopyAndTheLink() {
    TpchBenchmark.Settings s = TpchBenchmark.Settings.parse(new String[] {"--sf", "10", "--engines", "gpu,duckdb",
        "--queries", "q6,q11"});
    TpchReport report = new TpchReport(s, new TpchBenchmark.Machine("H100", "", 16, "25", "abc", java.time.LocalDate.now()));
    report.scanBandwidths(50, 20);
    List<Object[]> answer = List.<Object[]>of(new Object[] {1L});
    // q6: 500 MB of pages, 60M rows in a 50 ms cold run: 10 GB/s, 1,200 M rows/s; floors 25 ms (host), 10 ms (link)
    report.gpudfQuery("gpu", "q6", 50, List.of(new GpuSession.QueryTimings(0, 1_000_000, 0, 0)), answer);
    report.coldScan("gpu", "q6", 500_000_000L, 60_000_000L);
    // q11 read nothing (its tables were on the device already): no row
    report.gpudfQuery("gpu", "q11", 20, List.of(new GpuSession.QueryTimings(0, 1_000_000, 0, 0)), answer);
    report.duckdbQuery("q6", 100, 40, answer);
    report.duckdbQuery("q11", 30, 20, answer);
    report.checkAnswers();
    String text = report.markdown("x.svg");
    assertTrue(text.contains("| q6 | 477 | 60.0 | 50.0 | 10.00 | 1200 | 25.0 | 10.0 | 20.0% |"), text);
    assertFalse(text.contains("| q11 | 0 |"), text);
    assertTrue(text.contains("host's memory copy (all cores, bytes copied: the page cache to pinned memory) 20.0 GB/s, and"
        + " the link from pinned memory to the device 50.0 GB/s"), text);
    assertTrue(text.contains("477 MiB of stored pages in 50 ms, 10.00 GB/s; geometric mean of link floor / cold time 20.0%"),
        text);
    TpchReport unmeasured = new TpchReport(s, new TpchBenchmark.Machine("H100", "", 16, "25", "abc", java.time.LocalDate.now()));
    unmeasured.gpudfQuery("gpu", "q6", 50, List.of(new GpuSession.QueryTimings(0, 1_000_000, 0, 0)), answer);
    unmeasured.coldScan("gpu", "q6", 500_000_000L, 60_000_000L);
    assertFalse(unmeasured.markdown("x.svg").contains("Cold scans"), "no rates measured: no floors to give");
    String json = report.json();
    assertTrue(json.contains("\"cold_stored_bytes\": 500000000, \"cold_rows\": 60000000") && json.contains(
        "\"link_gbps\": 50.0, \"host_copy_gbps\": 20.0"), json);
  }

  /** A query far from its roofline is listed with its launches and waits a hot run, and the hot time each stands for. */
  @Test
  void aQueryFarFromItsRooflineIsListedWithItsLaunchesAndWaits() {
    TpchBenchmark.Settings s = TpchBenchmark.Settings.parse(new String[] {"--sf", "10", "--engines", "gpu,duckdb",
        "--queries", "q2"});
    TpchReport report = new TpchReport(s, new TpchBenchmark.Machine("H100", "", 16, "25", "abc", java.time.LocalDate.now()));
    report.deviceBandwidth(4000);
    List<Object[]> answer = List.<Object[]>of(new Object[] {1L});
    // 200 MB in 10 ms: 0.05 ms of roofline, 0.5%; 5 runs made 1,500 launches and 250 waits
    report.gpudfQuery("gpu", "q2", 50, List.of(new GpuSession.QueryTimings(0, 10_000_000, 0, 0)), answer);
    report.scanned("gpu", "q2", 200_000_000L);
    report.activity("gpu", "q2", new DeviceActivity.Counts(1500, 250, 10), 5);
    report.duckdbQuery("q2", 60, 50, answer);
    report.checkAnswers();
    String text = report.markdown("x.svg");
    assertTrue(text.contains("- below 5% of the roofline, with what a hot run did: q2 0.5% (300 launches, 50 waits: 29 us"
        + " of hot time a wait or launch)"), text);
  }

  /** The TPC-DS workload: generated, run on the CPU backend and DuckDB, answers checked, its own report. */
  @Test
  void runsTpcds(@TempDir Path dir) throws Exception {
    TpchBenchmark.Settings s = TpchBenchmark.Settings.parse(new String[] {"--workload", "tpcds", "--sf", "0.01", "--reps",
        "1", "--engines", "cpu,duckdb", "--queries", "q03,q36,q47,q72", "--out", dir.toString()});
    TpchReport report = TpchBenchmark.run(s);
    assertTrue(report.answersAgree());
    Path md = report.write(dir);
    assertTrue(md.getFileName().toString().contains("-tpcds-sf0.01"), md.toString());
    String text = Files.readString(md);
    assertTrue(text.startsWith("# TPC-DS SF0.01: cpu, duckdb"), text);
    for (String q : new String[] {"| q03 |", "| q36 |", "| q47 |", "| q72 |"}) {
      assertTrue(text.contains(q), text);
    }
    assertTrue(text.contains(" agree, 0 DIFFER; 0 not compared (no DuckDB answer); 0 failed"), text);
    assertTrue(text.contains("`gpudf bench tpcds --sf 0.01"), text);
    assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.Settings.parse(
        new String[] {"--workload", "tpcds", "--stream"}));
    assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.run(TpchBenchmark.Settings.parse(
        new String[] {"--workload", "tpcds", "--sf", "0.01", "--queries", "q100"})));
  }

  /** A device budget is for in-place runs (a GPU catalog keeps what it reads of the files), in MiB, not below 0. */
  @Test
  void aDeviceBudgetIsTakenForInPlaceRunsOnly() {
    assertEquals(512, TpchBenchmark.Settings.parse(new String[] {"--data", "d", "--in-place", "--device-budget-mb", "512"})
        .deviceBudgetMb());
    assertEquals(-1, TpchBenchmark.Settings.parse(new String[] {"--data", "d", "--in-place"}).deviceBudgetMb());
    assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.Settings.parse(new String[] {"--device-budget-mb", "512"}));
    assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.Settings.parse(
        new String[] {"--data", "d", "--in-place", "--device-budget-mb", "-2"}));
  }

  @Test
  void anEngineStopsWhenItsBudgetIsSpent(@TempDir Path dir) throws Exception {
    TpchReport report = TpchBenchmark.run(TpchBenchmark.Settings.parse(new String[] {"--sf", "0.002", "--reps", "1",
        "--engines", "cpu", "--queries", "q1,q6", "--budget-s", "0.000001", "--out", dir.toString()}));
    String text = Files.readString(dir.resolve(report.write(dir).getFileName()));
    assertTrue(text.contains("cpu: skipped: the engine's budget of 0 s was spent"), text);
    assertTrue(text.matches("(?s).*\\| q1 \\| 4 \\| [0-9.]+ \\| [0-9.]+ \\|.*"), text);
  }

  @Test
  void readsTheTablesFromParquetFiles(@TempDir Path dir) throws Exception {
    // Parquet written by DuckDB from generated tables: another writer than the reader's
    Path data = Files.createDirectory(dir.resolve("data"));
    try (org.apache.arrow.memory.RootAllocator a = new org.apache.arrow.memory.RootAllocator();
        java.sql.Connection duck = java.sql.DriverManager.getConnection("jdbc:duckdb:");
        java.sql.Statement st = duck.createStatement()) {
      for (io.trino.tpch.TpchTable<?> t : io.trino.tpch.TpchTable.getTables()) {
        try (org.apache.arrow.vector.VectorSchemaRoot root = dev.gpudf.sql.TpchTables.arrow(a, t, 0.002)) {
          DuckDbTables.load((org.duckdb.DuckDBConnection) duck, a, t.getTableName(), root);
        }
        st.execute("COPY " + t.getTableName() + " TO '" + data.resolve(t.getTableName() + ".parquet") + "' (FORMAT PARQUET)");
      }
    }
    TpchReport report = TpchBenchmark.run(TpchBenchmark.Settings.parse(new String[] {"--sf", "0.002", "--reps", "1",
        "--engines", "cpu,duckdb", "--queries", "q1,q5,q13", "--data", data.toString(), "--out", dir.toString()}));
    assertTrue(report.answersAgree());
    String text = Files.readString(report.write(dir));
    assertTrue(text.contains("- read from " + data + ": "), text);
    assertTrue(text.contains(" agree, 0 DIFFER; 0 not compared (no DuckDB answer); 0 failed"), text);
  }

  @Test
  void scalesPastOneStringColumnOrTheHostsMemoryAreStreamed() {
    assertTrue(TpchBenchmark.streams(100, Long.MAX_VALUE), "lineitem.l_comment past 2 GiB");
    assertTrue(TpchBenchmark.streams(10, 8L << 30), "tables larger than the host's memory");
    assertFalse(TpchBenchmark.streams(10, 128L << 30));
  }

  /**
   * A streamed run: every generated part appended to the CPU backend's tables (lineitem's 12,000
   * rows in chunks of at most 5,000) and to DuckDB (in a file), answers checked.
   */
  @Test
  void aStreamedRunAppendsPartsToEveryEngine(@TempDir Path dir) throws Exception {
    Path duckdb = dir.resolve("tpch.duckdb");
    TpchReport report = TpchBenchmark.run(TpchBenchmark.Settings.parse(new String[] {"--sf", "0.002", "--reps", "1",
        "--engines", "cpu,duckdb", "--stream", "--chunk-rows", "5000", "--duckdb-file", duckdb.toString(), "--queries",
        "q1,q3,q13,q18",
        "--out", dir.toString()}));
    assertTrue(report.answersAgree());
    assertTrue(Files.size(duckdb) > 0, "DuckDB kept its tables in the file");
    String text = Files.readString(report.write(dir));
    assertTrue(text.contains("- generation in parts streamed into the engines (time includes their loads): 17,"), text);
    assertTrue(text.contains(" agree, 0 DIFFER; 0 not compared (no DuckDB answer); 0 failed"), text);
    IllegalArgumentException exists = assertThrows(IllegalArgumentException.class, () -> TpchBenchmark.Settings.parse(
        new String[] {"--duckdb-file", duckdb.toString()}));
    assertTrue(exists.getMessage().contains("exists"), exists.getMessage());
  }
}
