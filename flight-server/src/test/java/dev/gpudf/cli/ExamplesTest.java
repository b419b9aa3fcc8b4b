package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The README's runnable example runs as a single-file program and prints what the README shows. */
class ExamplesTest {
  @Test
  void dataFrameExampleOnTheCpu() throws Exception {
    Path example = Path.of("..", "examples", "DataFrameExample.java");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        example.toString(), "cpu").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(2, TimeUnit.MINUTES);
    assertEquals(0, p.exitValue(), out);
    assertEquals(List.of(
        "Schema<country: Utf8, revenue: Decimal(38, 2, 128), lines: Int(64, true)>",
        "country     | revenue | lines",
        "Switzerland | 45.80   | 2",
        "France      | 29.50   | 2",
        "2 rows kept in host memory",
        "lines over JDBC: 4"), out.lines().filter(l -> !l.startsWith("WARNING")).toList(), out);
  }
}
