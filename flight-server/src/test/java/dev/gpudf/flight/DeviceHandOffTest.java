package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device hand-off: leases on their own; a CPU server's refusals; and on a GPU, a result
 * exported by the server and imported by another JVM, equal to the server's own answer, with
 * no result bytes copied to the host by the server, nothing but the result readable through its
 * handles, and every lease and byte given back.
 */
class DeviceHandOffTest {
  @Test
  void leasesCloseOnReleaseExpiryAndClose() throws Exception {
    AtomicInteger closed = new AtomicInteger();
    try (Leases<AutoCloseable> leases = new Leases<>()) {
      String a = leases.add(closed::incrementAndGet, 60);
      String b = leases.add(closed::incrementAndGet, 0.05);
      leases.add(closed::incrementAndGet, 60);
      assertTrue(leases.release(a));
      assertFalse(leases.release(a), "a lease is released once");
      assertEquals(1, closed.get());
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (leases.size() > 1 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(1, leases.size(), "the reaper expired the 50 ms lease");
      assertEquals(2, closed.get());
      assertFalse(leases.release(b), "an expired lease is gone");
    }
    assertEquals(3, closed.get(), "closing the registry closes what it held");
  }

  @Test
  void aCpuServerListsTheActionsAndRefusesToExport() throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator);
        GpudfFlightServer server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0));
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build()) {
      List<String> types = new ArrayList<>();
      for (ActionType t : client.listActions()) {
        types.add(t.getType());
      }
      assertTrue(types.containsAll(List.of(DeviceHandOff.EXPORT, DeviceHandOff.RELEASE)), types.toString());
      FlightRuntimeException cpu = assertThrows(FlightRuntimeException.class,
          () -> DeviceHandOff.export(client, new DeviceHandOff.Request("SELECT 1", null)));
      assertEquals(FlightStatusCode.UNIMPLEMENTED, cpu.status().code());
      assertTrue(cpu.getMessage().contains("CPU backend"), cpu.getMessage());
      FlightRuntimeException json = assertThrows(FlightRuntimeException.class, () -> client.doAction(
          new Action(DeviceHandOff.EXPORT, "not json".getBytes(StandardCharsets.UTF_8))).next());
      assertEquals(FlightStatusCode.INVALID_ARGUMENT, json.status().code());
      FlightRuntimeException ttl = assertThrows(FlightRuntimeException.class,
          () -> DeviceHandOff.export(client, new DeviceHandOff.Request("SELECT 1", -1.0)));
      assertTrue(ttl.getMessage().contains("ttl_seconds"), ttl.getMessage());
      FlightRuntimeException lease = assertThrows(FlightRuntimeException.class,
          () -> DeviceHandOff.release(client, "no-such-lease"));
      assertEquals(FlightStatusCode.INVALID_ARGUMENT, lease.status().code());
      try (VectorSchemaRoot r = session.query("SELECT COUNT(*) FROM (VALUES (1)) AS v(x)")) {
        assertEquals(1, r.getRowCount(), "the session still answers");
      }
    }
  }

  @RequiresGpu
  @Test
  void anotherProcessImportsTheResultWithoutACopy(@TempDir Path dir) throws Exception {
    String sql = "SELECT l_orderkey, l_extendedprice, CAST(l_extendedprice AS DECIMAL(30, 2)) AS wide, l_shipdate, l_comment,"
        + " CASE WHEN l_linenumber = 1 THEN NULL ELSE l_quantity END AS q, l_returnflag = 'R' AS returned,"
        + " CAST(l_tax AS DOUBLE) AS tax FROM lineitem WHERE l_orderkey < 20000 ORDER BY l_orderkey, l_linenumber";
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
        GpuSession session = GpuSession.gpu(gpu, allocator)) {
      try (VectorSchemaRoot lineitem = TpchTables.arrow(allocator, TpchTable.LINE_ITEM, 0.01)) {
        session.catalog().register("lineitem", lineitem);
      }
      // other data on the device, which a consumer of the export must not see: a table of one
      // non-zero value, and its copies in the pool's free blocks
      session.update("CREATE TABLE secret AS SELECT l_orderkey * 0 + 6510615555426900570 AS v FROM lineitem");
      session.query("SELECT v + 1 FROM secret").close();
      long poolBefore = gpu.pool().stats().allocated();
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
              GpudfFlightServer.Options.plain("localhost", 0));
          FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build();
          VectorSchemaRoot expected = session.query(sql)) {
        Path file = dir.resolve("imported.arrow");
        Process child = new ProcessBuilder(javaCommand(HandOffConsumer.class.getName(), String.valueOf(server.port()), sql,
            file.toString())).redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.waitFor(), output);
        assertTrue(output.contains("rows=" + expected.getRowCount() + " "), output);
        assertTrue(output.contains("bytes_to_host=0 "), "the server copied no result bytes to the host: " + output);
        assertTrue(output.contains("schema_matches=true"), output);
        assertTrue(output.contains("sizes_match=true"), "each handle maps what the descriptor says: " + output);
        assertTrue(output.contains("nonzero_outside_result=0 "), "a handle maps nothing but the result: " + output);
        try (FileInputStream in = new FileInputStream(file.toFile());
            ArrowFileReader reader = new ArrowFileReader(in.getChannel(), allocator)) {
          assertTrue(reader.loadNextBatch());
          assertEquals(expected.contentToTSVString(), reader.getVectorSchemaRoot().contentToTSVString());
        }
        assertEquals(0, server.deviceLeases(), "the consumer released its lease");
        // a lease nobody releases expires, and its memory goes back to the pool
        DeviceHandOff.export(client, new DeviceHandOff.Request(sql, 0.2));
        assertEquals(1, server.deviceLeases());
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (server.deviceLeases() > 0 && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertEquals(0, server.deviceLeases(), "the lease expired");
      }
      assertEquals(poolBefore, gpu.pool().stats().allocated(), "every exported byte went back to the pool");
    }
  }

  /** This JVM's java and class path running {@code main} with {@code args}. */
  static List<String> javaCommand(String main, String... args) {
    List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), main));
    cmd.addAll(List.of(args));
    return cmd;
  }
}
