package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SqlCommandTest {
  /** What one command line did. */
  private record Run(int status, String out, String err) {}

  private static Run sql(Path dir, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = GpudfCli.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    List<String> all = new ArrayList<>(List.of("sql", "--path", dir.toString()));
    all.addAll(List.of(args));
    int status = cl.execute(all.toArray(new String[0]));
    return new Run(status, out.toString(), err.toString().strip());
  }

  /** A successful run printing {@code table} and the timing line for {@code rows} rows on the CPU backend. */
  private static void assertResult(String table, int rows, Run run) {
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().startsWith(table), run.out());
    assertTrue(run.out().substring(table.length()).matches("\\(" + rows + " rows, [0-9.]+ ms, cpu backend\\)\n"), run.out());
  }

  @Test
  void runsAQueryOverADirectory(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\na,3\n");
    assertResult("k | total\na | 4\nb | 2\n", 2, sql(dir, "--backend", "cpu", "SELECT k, SUM(v) AS total FROM t GROUP BY k ORDER BY k"));
  }

  /** --timings: the start-up's phases first, then each query's plan (with its phases) / execute / transfer; an update has no split. */
  @Test
  void timingsSayWhereTheTimeWent(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\n");
    Path script = dir.resolve("s.sql");
    Files.writeString(script, "CREATE TABLE u (v INTEGER);\nINSERT INTO u SELECT v FROM t;\nSELECT SUM(v) AS s FROM u;\n");
    Run run = sql(dir, "--backend", "cpu", "--timings", "--file", script.toString());
    assertEquals(0, run.status(), run.err());
    String[] lines = run.out().split("\n");
    String ms = "[0-9]+(\\.[0-9])?";
    assertTrue(lines[0].matches("\\(start-up " + ms + " ms: JVM and command line [0-9]+, opening " + ms + " ms: device -, "
        + "session " + ms + ", tables " + ms + " ms\\)"), lines[0]);
    assertTrue(lines[1].matches("\\(0 rows changed, " + ms + " ms, cpu backend\\)"), lines[1]);
    assertTrue(lines[2].matches("\\(2 rows changed, " + ms + " ms, cpu backend\\)"), lines[2]);
    assertEquals("s", lines[3]);
    assertEquals("3", lines[4]);
    assertTrue(lines[5].matches("\\(1 rows, " + ms + " ms, cpu backend; plan " + ms + " \\(parse " + ms + " \\+ validate " + ms
        + " \\+ convert " + ms + " \\+ rewrite " + ms + " \\+ physical " + ms + "\\), execute " + ms + ", transfer " + ms
        + " ms\\)"), lines[5]);
    // without the option, no start-up line and no split
    assertResult("s\n3\n", 1, sql(dir, "--backend", "cpu", "SELECT SUM(v) AS s FROM t"));
  }

  @Test
  void printsDatesAndLiteralRows(@TempDir Path dir) {
    assertResult("d          | s\n1969-12-31 | NULL\n2024-02-29 | Zürich\n", 2, sql(dir, "--backend", "cpu",
        "SELECT d, s FROM (VALUES (DATE '2024-02-29', 'Zürich'), (DATE '1969-12-31', NULL)) AS t(d, s) ORDER BY d"));
  }

  @Test
  void explainsAndRejectsBadBackends(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\n");
    Run explain = sql(dir, "--backend", "cpu", "--explain", "SELECT k FROM t WHERE v > 0");
    assertEquals(0, explain.status());
    assertTrue(explain.out().contains("GpuFilter"), explain.out());
    assertEquals(new Run(1, "", "error: backend must be cpu, gpu or auto, not 'tpu'"),
        sql(dir, "--backend", "tpu", "SELECT 1"));
  }

  @Test
  void reportsUserErrorsWithoutAStackTrace(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\n");
    assertEquals(new Run(1, "", "error: From line 1, column 8 to line 1, column 11: Column 'nope' not found in any table"),
        sql(dir, "--backend", "cpu", "SELECT nope FROM t"));
  }

  @Test
  void aStatementMayStartWithAComment(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\n");
    assertResult("k\na\n", 1, sql(dir, "--backend", "cpu", "-- which keys\nSELECT k FROM t"));
    assertResult("k\na\n", 1, sql(dir, "--backend", "cpu", "--\tTPC-H style header\n-- two lines\nSELECT k FROM t"));
    // as pasted, with the ';' that ends it (and blanks after it)
    assertResult("k\na\n", 1, sql(dir, "--backend", "cpu", "SELECT k FROM t;\n"));
    assertEquals(new Run(1, "", "error: the statement is empty"), sql(dir, "--backend", "cpu", " ; "));
    assertEquals(new Run(2, "", "error: Unknown option: '--bakcend'"), sql(dir, "--bakcend", "cpu"));
    assertEquals(new Run(1, "", "error: Unknown option: '-x'"), sql(dir, "-x"));
  }

  @Test
  void runsAFileOfStatementsAndStopsAtTheFirstError(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\n");
    Path script = dir.resolve("q.sql");
    Files.writeString(script, "-- a script; semicolons in comments, strings and /* blocks; */ do not end statements\n"
        + "CREATE TABLE u (s VARCHAR);\nINSERT INTO u VALUES ('x;y'), ('it''s');\n\n"
        + "SELECT s FROM u ORDER BY s;  ;\n/* last */ SELECT COUNT(*) AS n FROM t");
    Run run = sql(dir, "--backend", "cpu", "-f", script.toString());
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().matches("(?s)\\(0 rows changed, .*\\(2 rows changed, .*s\n"
        + "it's\nx;y\n\\(2 rows, .*n\n2\n\\(1 rows, [0-9.]+ ms, cpu backend\\)\n"), run.out());

    Files.writeString(script, "SELECT 1;\n\nSELECT nope\n  FROM t;\nSELECT 2;");
    Run failed = sql(dir, "--backend", "cpu", "--file", script.toString());
    assertEquals(1, failed.status());
    assertTrue(failed.out().startsWith("EXPR$0\n1\n") || failed.out().contains("\n1\n(1 rows"), failed.out());
    assertTrue(failed.err().startsWith("error: q.sql, statement 2 (line 3): From line 1, column 8"), failed.err());
    assertTrue(!failed.out().contains("\n2\n"), "the run stops at the failure: " + failed.out());

    // several statements in the argument run as a file's do, an error naming the one that failed
    Run two = sql(dir, "--backend", "cpu", "SELECT COUNT(*) AS n FROM t; SELECT MAX(v) AS m FROM t;");
    assertEquals(0, two.status(), two.err());
    assertTrue(two.out().matches("(?s)n\n2\n\\(1 rows, .*m\n2\n\\(1 rows, .*"), two.out());
    Run second = sql(dir, "--backend", "cpu", "SELECT 1;\nSELECT nope FROM t");
    assertEquals(1, second.status());
    assertTrue(second.err().startsWith("error: statement 2 (line 2): From line 1, column 8"), second.err());

    Files.writeString(script, "SELECT 'open;\nSELECT 2;");
    assertEquals(new Run(1, "", "error: line 1: a ' quote is not closed"), sql(dir, "-f", script.toString()));
    assertEquals(new Run(1, "", "error: a statement and --file exclude each other"),
        sql(dir, "-f", script.toString(), "SELECT 1"));
  }

  @Test
  void interactiveShellRunsStatementsUntilExit(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\n");
    String input = "SELECT k,\n  v FROM t\n  ORDER BY k;\nSELECT nope FROM t;\nCREATE TABLE u (x INTEGER);\nexit\n";
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (SqlTarget target = SqlTarget.local(dir, "cpu")) {
      assertEquals(0, SqlCommand.shell(target, new java.io.ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out, false));
    }
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("k | v\na | 1\nb | 2\n(2 rows, "), text);
    assertTrue(text.contains("error: From line 1, column 8 to line 1, column 11: Column 'nope' not found"), text);
    assertTrue(text.contains("(0 rows changed, "), text);
  }

  @Test
  void runsAgainstAServer(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\n");
    try (org.apache.arrow.memory.RootAllocator a = new org.apache.arrow.memory.RootAllocator();
        dev.gpudf.sql.GpuSession session = dev.gpudf.sql.GpuSession.cpu(a)) {
      dev.gpudf.sql.FileTables.loadDirectory(session.catalog(), dir, a);
      try (dev.gpudf.flight.GpudfFlightServer server = dev.gpudf.flight.GpudfFlightServer.start(session, a,
          dev.gpudf.flight.GpudfFlightServer.Options.plain("localhost", 0))) {
        String uri = "grpc://localhost:" + server.port();
        StringWriter out = new StringWriter();
        CommandLine cl = GpudfCli.commandLine();
        cl.setOut(new PrintWriter(out));
        assertEquals(0, cl.execute("sql", "--server", uri, "SELECT SUM(v) AS s FROM t"));
        assertTrue(out.toString().matches("s\n3\n\\(1 rows, [0-9.]+ ms, " + java.util.regex.Pattern.quote(uri) + "\\)\n"),
            out.toString());
        assertEquals(0, cl.execute("sql", "--server", uri, "INSERT INTO t VALUES ('c', 3)"));
        assertTrue(out.toString().contains("(1 rows changed, "), out.toString());
      }
    }
  }
}
