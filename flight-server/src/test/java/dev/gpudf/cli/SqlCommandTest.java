package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SqlCommandTest {
  @Test
  void runsAQueryOverADirectory(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\na,3\n");
    StringWriter sw = new StringWriter();
    CommandLine cl = GpudfCli.commandLine();
    cl.setOut(new PrintWriter(sw));
    assertEquals(0, cl.execute("sql", "--path", dir.toString(), "--backend", "cpu",
        "SELECT k, SUM(v) AS total FROM t GROUP BY k ORDER BY k"));
    assertEquals("k | total\na | 4\nb | 2\n(2 rows, cpu backend)\n", sw.toString());
  }

  @Test
  void printsDatesAndLiteralRows(@TempDir Path dir) throws Exception {
    StringWriter sw = new StringWriter();
    CommandLine cl = GpudfCli.commandLine();
    cl.setOut(new PrintWriter(sw));
    assertEquals(0, cl.execute("sql", "--path", dir.toString(), "--backend", "cpu",
        "SELECT d, s FROM (VALUES (DATE '2024-02-29', 'Zürich'), (DATE '1969-12-31', NULL)) AS t(d, s) ORDER BY d"));
    assertEquals("d          | s\n1969-12-31 | NULL\n2024-02-29 | Zürich\n(2 rows, cpu backend)\n", sw.toString());
  }

  @Test
  void explainsAndRejectsBadBackends(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\n");
    StringWriter sw = new StringWriter();
    CommandLine cl = GpudfCli.commandLine();
    cl.setOut(new PrintWriter(sw));
    assertEquals(0, cl.execute("sql", "--path", dir.toString(), "--backend", "cpu", "--explain", "SELECT k FROM t WHERE v > 0"));
    assertTrue(sw.toString().contains("GpuFilter"), sw.toString());
    CommandLine bad = GpudfCli.commandLine();
    bad.setErr(new PrintWriter(new StringWriter()));
    assertTrue(bad.execute("sql", "--path", dir.toString(), "--backend", "tpu", "SELECT 1") != 0);
  }

  @Test
  void reportsUserErrorsWithoutAStackTrace(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\n");
    StringWriter err = new StringWriter();
    CommandLine cl = GpudfCli.commandLine();
    cl.setErr(new PrintWriter(err));
    assertEquals(1, cl.execute("sql", "--path", dir.toString(), "--backend", "cpu", "SELECT nope FROM t"));
    assertEquals("error: From line 1, column 8 to line 1, column 11: Column 'nope' not found in any table",
        err.toString().strip());
  }
}
