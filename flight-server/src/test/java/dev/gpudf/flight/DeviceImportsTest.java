package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.flight.DeviceHandOff.Allocation;
import dev.gpudf.flight.DeviceHandOff.Column;
import dev.gpudf.flight.DeviceHandOff.ImportRequest;
import dev.gpudf.flight.DeviceHandOff.Region;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * An import request's shape, checked before anything is mapped: every way a request can name
 * memory its rows do not fit, or types gpudf cannot hold, is a user error naming the column and
 * what is wrong (the GPU run of imports is {@link DeviceImportTest}); and a CPU server refuses
 * imports as unimplemented.
 */
class DeviceImportsTest {
  private static final String HANDLE = Base64.getEncoder().encodeToString(new byte[64]);

  /** 10 rows: a BIGINT, a STRING with nulls, a DECIMAL(20, 2), a BOOL, all in one 4 KiB allocation. */
  private static ImportRequest valid() {
    return new ImportRequest("t", "create", 10L, List.of(new Allocation(HANDLE, 4096)), List.of(
        column("a", "INT64", 8, 0, new Region(0, 0, 80), null, null),
        column("s", "STRING", 0, 2, new Region(0, 256, 100), new Region(0, 512, 44), new Region(0, 768, 2)),
        new Column("d", "DECIMAL", 20, 2, null, null, 16, 0, new Region(0, 1024, 160), null, null),
        column("b", "BOOL", 0, 0, new Region(0, 2048, 2), null, null)), null);
  }

  private static Column column(String name, String type, int width, int nulls, Region data, Region offsets, Region validity) {
    return new Column(name, type, 0, 0, null, null, width, nulls, data, offsets, validity);
  }

  /** {@link #valid} with column {@code k} changed by {@code change}. */
  private static ImportRequest withColumn(int k, UnaryOperator<Column> change) {
    ImportRequest v = valid();
    List<Column> columns = new ArrayList<>(v.columns());
    columns.set(k, change.apply(columns.get(k)));
    return new ImportRequest(v.table(), v.mode(), v.rows(), v.allocations(), columns, null);
  }

  private static Column data(Column c, Region data) {
    return new Column(c.name(), c.type(), c.precision(), c.scale(), c.timeUnit(), c.timeZone(), c.byteWidth(), c.nullCount(),
        data, c.offsets(), c.validity());
  }

  private static Column typed(Column c, String type, int precision, int scale, String unit, int width) {
    return new Column(c.name(), type, precision, scale, unit, null, width, c.nullCount(), c.data(), c.offsets(), c.validity());
  }

  private static void refused(ImportRequest r, String message) {
    UserException e = assertThrows(UserException.class, () -> DeviceImports.checkShape(r, "t"), message);
    assertTrue(e.getMessage().contains(message), "expected '" + message + "' in: " + e.getMessage());
  }

  @Test
  void aWellFormedRequestPasses() {
    assertEquals(4, DeviceImports.checkShape(valid(), "t").size());
  }

  @Test
  void rowsColumnsAndNamesAreBounded() {
    ImportRequest v = valid();
    refused(new ImportRequest("t", null, null, v.allocations(), v.columns(), null), "\"rows\" must be given");
    refused(new ImportRequest("t", null, -1L, v.allocations(), v.columns(), null), "not -1");
    refused(new ImportRequest("t", null, (long) Integer.MAX_VALUE, v.allocations(), v.columns(), null), "not 2147483647");
    refused(new ImportRequest("t", null, 10L, v.allocations(), List.of(), null), "from 1 to 4096 columns, not 0");
    refused(new ImportRequest("t", null, 10L, v.allocations(), null, null), "from 1 to 4096 columns, not 0");
    List<Column> many = new ArrayList<>();
    for (int i = 0; i < DeviceImports.MOST_COLUMNS + 1; i++) {
      many.add(column("c" + i, "INT64", 8, 0, new Region(0, 0, 80), null, null));
    }
    refused(new ImportRequest("t", null, 10L, v.allocations(), many, null), "not 4097");
    refused(withColumn(1, c -> new Column("A", c.type(), 0, 0, null, null, 0, 2, c.data(), c.offsets(), c.validity())),
        "column 'A' is named twice");
    refused(withColumn(0, c -> new Column("", "INT64", 0, 0, null, null, 8, 0, c.data(), null, null)), "column 1 has no name");
    refused(new ImportRequest("t", null, 10L, null, v.columns(), null), "\"allocations\" must list");
    refused(new ImportRequest("t", null, 10L, List.of(new Allocation(null, 10)), v.columns(), null), "allocation 0 needs a handle");
    refused(new ImportRequest("t", null, 10L, List.of(new Allocation(HANDLE, -1)), v.columns(), null), "allocation 0 needs a handle");
  }

  @Test
  void typesMustBeOnesGpudfHolds() {
    refused(withColumn(0, c -> typed(c, "INT128", 0, 0, null, 16)), "column 'a' has type INT128, which gpudf does not know");
    refused(withColumn(0, c -> typed(c, null, 0, 0, null, 8)), "column 'a' has type null");
    refused(withColumn(0, c -> typed(c, "TIMESTAMP", 0, 0, "FORTNIGHT", 8)), "with time unit FORTNIGHT");
    refused(withColumn(2, c -> typed(c, "DECIMAL", 0, 0, null, 8)), "DECIMAL(0, 0), which cannot be");
    refused(withColumn(2, c -> typed(c, "DECIMAL", 39, 0, null, 16)), "DECIMAL(39, 0), which cannot be");
    refused(withColumn(2, c -> typed(c, "DECIMAL", 5, 6, null, 8)), "DECIMAL(5, 6), which cannot be");
    refused(withColumn(2, c -> typed(c, "DECIMAL", 10, 2, null, 16)), "whose values gpudf keeps in 8 bytes, not 16");
    refused(withColumn(0, c -> typed(c, "INT64", 0, 0, null, 4)), "in 8 bytes, not 4");
    refused(withColumn(1, c -> typed(c, "INT32", 0, 0, null, 4)), "is INT32, which has no offsets");
    refused(withColumn(0, c -> typed(c, "STRING", 0, 0, null, 0)), "is STRING and has no offsets");
  }

  @Test
  void nullCountsNeedABitmapAndFitTheRows() {
    refused(withColumn(0, c -> new Column("a", "INT64", 0, 0, null, null, 8, 1, c.data(), null, null)),
        "has NULL rows and no validity bitmap");
    refused(withColumn(1, c -> new Column("s", "STRING", 0, 0, null, null, 0, 11, c.data(), c.offsets(), c.validity())),
        "has 11 NULL rows of 10");
    refused(withColumn(1, c -> new Column("s", "STRING", 0, 0, null, null, 0, -1, c.data(), c.offsets(), c.validity())),
        "has -1 NULL rows of 10");
  }

  @Test
  void everyRegionLiesInsideItsAllocationAndHoldsItsRows() {
    refused(withColumn(0, c -> data(c, null)), "column 'a''s data are missing");
    refused(withColumn(0, c -> data(c, new Region(1, 0, 80))), "name allocation 1 of 1");
    refused(withColumn(0, c -> data(c, new Region(-1, 0, 80))), "name allocation -1 of 1");
    refused(withColumn(0, c -> data(c, new Region(0, -8, 80))), "lie at bytes [-8, -8 + 80)");
    refused(withColumn(0, c -> data(c, new Region(0, 4090, 80))), "of allocation 0, which holds 4096");
    refused(withColumn(0, c -> data(c, new Region(0, Long.MAX_VALUE, 80))), "which holds 4096");
    refused(withColumn(0, c -> data(c, new Region(0, 80, Long.MAX_VALUE))), "which holds 4096");
    refused(withColumn(0, c -> data(c, new Region(0, 0, 79))), "column 'a''s data hold 79 bytes, fewer than the 80");
    refused(withColumn(2, c -> data(c, new Region(0, 0, 159))), "fewer than the 160");
    refused(withColumn(3, c -> data(c, new Region(0, 0, 1))), "column 'b''s data hold 1 bytes, fewer than the 2");
    refused(withColumn(1, c -> new Column("s", "STRING", 0, 0, null, null, 0, 2, c.data(), new Region(0, 0, 43), c.validity())),
        "column 's''s offsets hold 43 bytes, fewer than the 44");
    refused(withColumn(1, c -> new Column("s", "STRING", 0, 0, null, null, 0, 2, c.data(), c.offsets(), new Region(0, 0, 1))),
        "column 's''s validity hold 1 bytes, fewer than the 2");
    ImportRequest v = valid();
    List<Column> huge = new ArrayList<>(v.columns());
    huge.set(1, data(huge.get(1), new Region(0, 0, 1L << 31)));
    refused(new ImportRequest("t", null, 10L, List.of(new Allocation(HANDLE, 1L << 32)), huge, null), "more than a column's 2 GiB");
  }

  @Test
  void aCpuServerListsImportAndRefusesIt() throws Exception {
    onCpuServer((session, client) -> {
      List<String> types = new ArrayList<>();
      for (ActionType t : client.listActions()) {
        types.add(t.getType());
      }
      assertTrue(types.contains(DeviceHandOff.IMPORT), types.toString());
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> client.doAction(
          new Action(DeviceHandOff.IMPORT, DeviceHandOff.JSON.writeValueAsBytes(valid()))).next());
      assertEquals(FlightStatusCode.UNIMPLEMENTED, e.status().code());
      assertTrue(e.getMessage().contains("needs the GPU backend"), e.getMessage());
      FlightRuntimeException junk = assertThrows(FlightRuntimeException.class, () -> client.doAction(
          new Action(DeviceHandOff.IMPORT, "{".getBytes(StandardCharsets.UTF_8))).next());
      assertEquals(FlightStatusCode.UNIMPLEMENTED, junk.status().code(), "the backend decides before the body is read");
      assertTrue(session.catalog().names().isEmpty(), "nothing was made");
    });
  }

  @Test
  void unmapsAreCheckedAndAnUnknownHandleWasNotKept() throws Exception {
    onCpuServer((session, client) -> {
      List<String> types = new ArrayList<>();
      client.listActions().forEach(t -> types.add(t.getType()));
      assertTrue(types.contains(DeviceHandOff.UNMAP), types.toString());
      DeviceHandOff.UnmapResult none = DeviceHandOff.JSON.readValue(client.doAction(new Action(DeviceHandOff.UNMAP,
          DeviceHandOff.JSON.writeValueAsBytes(new DeviceHandOff.UnmapRequest(List.of(HANDLE))))).next().getBody(),
          DeviceHandOff.UnmapResult.class);
      assertEquals(new DeviceHandOff.UnmapResult(0, 0), none);
      List<String> many = new ArrayList<>();
      for (int i = 0; i <= ProducerMappings.MOST_KEPT; i++) {
        many.add(HANDLE);
      }
      for (String[] bad : new String[][] {
          {"{", "an unmap request is a JSON object"},
          {"{}", "an unmap names from 0 to 1024 handles"},
          {"{\"handles\": [null]}", "none of them null"},
          {"{\"handles\": [\"not base64!\"]}", "names handle 'not base64!', which is not base64"},
          {DeviceHandOff.JSON.writeValueAsString(new DeviceHandOff.UnmapRequest(many)), "from 0 to 1024 handles"}}) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> client.doAction(
            new Action(DeviceHandOff.UNMAP, bad[0].getBytes(StandardCharsets.UTF_8))).next(), bad[0]);
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), bad[0]);
        assertTrue(e.getMessage().contains(bad[1]), "expected '" + bad[1] + "' in: " + e.getMessage());
      }
    });
  }

  /** What a test does with a CPU server and a client of it. */
  private interface ServerWork {
    void run(GpuSession session, FlightClient client) throws Exception;
  }

  private static void onCpuServer(ServerWork work) throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator);
        GpudfFlightServer server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0));
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build()) {
      work.run(session, client);
    }
  }
}
