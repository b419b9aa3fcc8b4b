package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Cuda;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class InfoCommandTest {
  private static String run(String... args) {
    StringWriter sw = new StringWriter();
    CommandLine cl = new CommandLine(new GpudfCli());
    cl.setOut(new PrintWriter(sw));
    assertEquals(0, cl.execute(args));
    return sw.toString();
  }

  @Test
  void reportsJavaAndBackendsEverywhere() {
    String out = run("info", "--round-trip-mib", "8");
    assertTrue(out.contains("java        " + System.getProperty("java.version")), out);
    assertTrue(out.contains("backend cpu available"), out);
    assertTrue(out.contains(Cuda.isAvailable() ? "backend gpu available" : "backend gpu off: "), out);
  }

  @RequiresGpu
  @Test
  void timesARoundTripOnTheGpu() {
    String out = run("info", "--round-trip-mib", "64");
    assertTrue(out.matches("(?s).*round trip  64 MiB pinned: host->device [0-9.]+ GB/s, device->host [0-9.]+ GB/s, data identical.*"), out);
  }
}
