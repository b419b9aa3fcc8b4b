package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cold-start harness: its fresh processes, what it reads of their lines, and its bound. */
class ColdStartBenchmarkTest {
  @Test
  void aQueryNamesItsTablesAsWholeWords() {
    assertEquals(List.of("lineitem"), ColdStartBenchmark.tablesOf(dev.gpudf.sql.TpchTables.queries(1).get("q1")));
    // q2 reads part and partsupp: neither name hides the other
    assertEquals(List.of("part", "partsupp", "supplier", "nation", "region"),
        ColdStartBenchmark.tablesOf(dev.gpudf.sql.TpchTables.queries(1).get("q2")));
    assertEquals(List.of("partsupp"), ColdStartBenchmark.tablesOf("select ps_partkey from PARTSUPP"));
  }

  @Test
  void aColdRunIsWithinItsBoundOnlyUpToThreeHotRunsAndTheFixedCost() {
    ColdStartBenchmark.Settings s = new ColdStartBenchmark.Settings(Path.of("."), 1, List.of("gpu"), List.of("q1", "q6"), 5,
        null);
    // fixed = 10 + 20 + 30 + 40 = 100 ms; hot 50: the bound is 250
    ColdStartBenchmark.Result atBound = result("q1", 250, 50);
    ColdStartBenchmark.Result over = result("q6", 250.5, 50);
    String report = ColdStartBenchmark.report(s, List.of(atBound, over), List.of(), "failed");
    assertTrue(report.contains("| q1 | 10.0 | 20.0 | 30.0 | 40.0 | 100.0 |"), report);
    assertTrue(row(report, "q1").contains("| 250.0 | yes |"), report);
    assertTrue(row(report, "q6").contains("| 250.0 | **no** |"), report);
    assertTrue(report.contains("gpu: 1 of 2 cold runs within 3 x hot + fixed; fixed start-up median 100.0 ms"), report);
  }

  /**
   * The harness on the CPU backend and DuckDB over SF0.01 Parquet: each query's child and the small
   * table's report their phases, their answers agree run to run, and the report holds each.
   */
  @Test
  void freshProcessesReportTheirPhases(@TempDir Path tmp) throws Exception {
    // the harness's Arrow IPC copies go beside the data's folder: within the test's
    Path dir = tmp.resolve("sf0.01");
    TpchFiles.write(0.01, dir, null, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    ColdStartBenchmark.Settings s = ColdStartBenchmark.Settings.parse(new String[] {"--data", dir.toString(), "--sf",
        "0.01", "--engines", "cpu,duckdb", "--queries", "q6", "--reps", "2"});
    String report = ColdStartBenchmark.run(s, new PrintStream(log, true, StandardCharsets.UTF_8));
    String out = log.toString(StandardCharsets.UTF_8);
    assertFalse(report.contains("failed"), out);
    for (String engine : List.of("cpu", "duckdb")) {
      for (String q : List.of("q6", "small")) {
        Matcher m = Pattern.compile("COLDSTART " + engine + " " + q + " (.*)").matcher(out);
        assertTrue(m.find(), engine + " " + q + " in\n" + out);
        Map<String, String> v = new LinkedHashMap<>();
        Matcher kv = Pattern.compile("(\\w+)=(\\S+)").matcher(m.group(1));
        while (kv.find()) {
          v.put(kv.group(1), kv.group(2));
        }
        // a JVM starts in more than a millisecond and in less than a minute: the two clocks agree
        double jvm = Double.parseDouble(v.get("jvm"));
        assertTrue(jvm > 1 && jvm < 60_000, engine + " " + q + " jvm " + jvm);
        assertTrue(Double.parseDouble(v.get("cold")) > 0 && Double.parseDouble(v.get("hot")) > 0, v.toString());
        assertEquals("true", v.get("same"), v.toString());
        assertEquals(q.equals("q6") ? "1" : "5", v.get("rows"), engine + " " + q);
      }
      assertTrue(report.contains("## " + engine), report);
      assertTrue(report.contains(engine + ": a fresh process answering"), report);
    }
    assertTrue(row(report, "q6").startsWith("| q6 |"), report);
    assertTrue(java.nio.file.Files.isRegularFile(tmp.resolve("sf0.01-arrow-ipc").resolve("lineitem.arrow")), out);
    assertFalse(report.contains("fixed + cold, gpu / duckdb"), "no gpu engine ran: no ratio");
  }

  /** A run stopped before its report: the report from its lines, with what the log lacks named. */
  @Test
  void aReportFromTheLinesOfAStoppedRun() {
    ColdStartBenchmark.Settings s = ColdStartBenchmark.Settings.parse(new String[] {"--data", "/gone/tpch-parquet-sf1",
        "--engines", "gpu,duckdb", "--queries", "q1,q6"}, false);
    List<String> log = List.of("JVM options of each process: -Xmx32g",
        "  [gpu q1] COLDSTART gpu q1 jvm=100 device=300 kernels=20 session=280 load=3000 cold=102.3 plan=51.6 execute=42.2"
            + " transfer=2.3 hot=5.35 rows=4 same=true",
        "  [gpu q1] process 4100.0 ms from spawn to exit",
        "  [gpu q6] COLDSTART gpu q6 jvm=120 device=340 kernels=20 session=300 load=3200 cold=1000 plan=56 execute=43"
            + " transfer=1 hot=2.7 rows=1 same=true",
        "  [duckdb q1] COLDSTART duckdb q1 jvm=120 device=0 kernels=0 session=180 load=5000 cold=38.8 plan=0 execute=38.8"
            + " transfer=0 hot=36.8 rows=4 same=true");
    String report = ColdStartBenchmark.fromLog(s, log);
    // q1: fixed 700, bound 716.05; q6: fixed 780, bound 788.1, cold 1,000 over it
    assertTrue(row(report, "q1").contains("| 700.0 |") && row(report, "q1").contains("| yes | 4100 ms | true |"), report);
    assertTrue(report.contains("| q6 |") && report.contains("| 788.1 | **no** | not logged | true |"), report);
    assertTrue(report.contains("gpu: 1 of 2 cold runs within"), report);
    assertTrue(report.contains("- not in the log: gpu small, duckdb q6, duckdb small"), report);
    assertTrue(report.contains("fixed + cold, gpu / duckdb, geometric mean over 1 queries"), report);
  }

  @Test
  void badSettingsAreRefused(@TempDir Path dir) {
    assertThrows(IllegalArgumentException.class, () -> ColdStartBenchmark.Settings.parse(new String[] {"--sf", "1"}));
    assertThrows(IllegalArgumentException.class,
        () -> ColdStartBenchmark.Settings.parse(new String[] {"--data", dir.toString(), "--queries", "q23"}));
    assertThrows(IllegalArgumentException.class,
        () -> ColdStartBenchmark.Settings.parse(new String[] {"--data", dir.toString(), "--engines", "gpu,spark"}));
    assertThrows(IllegalArgumentException.class,
        () -> ColdStartBenchmark.Settings.parse(new String[] {"--data", dir.toString(), "--reps"}));
  }

  private static ColdStartBenchmark.Result result(String q, double cold, double hot) {
    Map<String, String> v = new LinkedHashMap<>();
    v.put("jvm", "10");
    v.put("device", "20");
    v.put("kernels", "30");
    v.put("session", "40");
    v.put("load", "5");
    v.put("cold", Double.toString(cold));
    v.put("plan", "1");
    v.put("execute", "1");
    v.put("transfer", "1");
    v.put("hot", Double.toString(hot));
    v.put("rows", "1");
    v.put("same", "true");
    return new ColdStartBenchmark.Result("gpu", q, v, 1000);
  }

  private static String row(String report, String q) {
    return report.lines().filter(l -> l.startsWith("| " + q + " |")).findFirst().orElse("");
  }
}
