package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.flight.GpudfFlightServer;
import dev.gpudf.sql.GpuSession;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code gpudf load} into a running server: create, append, a refusal to create twice, and the progress bar. */
class LoadCommandTest {
  @Test
  void loadsFilesIntoARunningServer(@TempDir Path dir) throws Exception {
    StringBuilder csv = new StringBuilder("id,label\n");
    int rows = 150_000;
    for (int i = 0; i < rows; i++) {
      csv.append(i).append(",row ").append(i % 7).append('\n');
    }
    Path file = dir.resolve("events.csv");
    Files.writeString(file, csv);
    try (RootAllocator a = new RootAllocator(); GpuSession session = GpuSession.cpu(a);
        GpudfFlightServer server = GpudfFlightServer.start(session, a, GpudfFlightServer.Options.plain("localhost", 0))) {
      String uri = "grpc://localhost:" + server.port();
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      CommandLine cl = GpudfCli.commandLine();
      cl.setOut(new PrintWriter(out));
      cl.setErr(new PrintWriter(err));
      assertEquals(0, cl.execute("load", "--server", uri, file.toString()));
      assertEquals(0, cl.execute("load", "--server", uri, "--table", "events", "--mode", "append", file.toString()));
      assertTrue(out.toString().contains("events.csv: 150,000 rows into events"), out.toString());
      assertTrue(err.toString().contains("] 100% 150,000 rows"), err.toString());
      try (VectorSchemaRoot r = session.query("SELECT COUNT(*), COUNT(DISTINCT label), SUM(id) FROM events")) {
        assertEquals(2L * rows, r.getVector(0).getObject(0));
        assertEquals(7L, r.getVector(1).getObject(0));
        assertEquals((long) rows * (rows - 1), r.getVector(2).getObject(0));
      }
      assertEquals(1, cl.execute("load", "--server", uri, file.toString()));
      assertTrue(err.toString().contains("already exists"), err.toString());
    }
  }
}
