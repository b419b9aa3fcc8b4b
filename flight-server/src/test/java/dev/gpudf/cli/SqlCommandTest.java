package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
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

  @Test
  void runsAQueryOverADirectory(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("t.csv"), "k,v\na,1\nb,2\na,3\n");
    assertEquals(new Run(0, "k | total\na | 4\nb | 2\n(2 rows, cpu backend)\n", ""),
        sql(dir, "--backend", "cpu", "SELECT k, SUM(v) AS total FROM t GROUP BY k ORDER BY k"));
  }

  @Test
  void printsDatesAndLiteralRows(@TempDir Path dir) {
    assertEquals(new Run(0, "d          | s\n1969-12-31 | NULL\n2024-02-29 | Zürich\n(2 rows, cpu backend)\n", ""),
        sql(dir, "--backend", "cpu",
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
}
