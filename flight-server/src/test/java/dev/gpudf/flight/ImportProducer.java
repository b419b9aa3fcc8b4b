package dev.gpudf.flight;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.Pointers;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import dev.gpudf.flight.DeviceHandOff.Allocation;
import dev.gpudf.flight.DeviceHandOff.Column;
import dev.gpudf.flight.DeviceHandOff.ImportRequest;
import dev.gpudf.flight.DeviceHandOff.Region;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The other process of {@link DeviceImportTest}: tables of {@link TestTables#allTypes} on its own
 * device memory, imported by the server on port {@code args[0]} (rows: {@code args[1]}); then
 * slices, and requests that lie (bad text, offsets running backwards, a wrong null count, an
 * allocation bigger than it is, a handle that names nothing, a region outside its allocation).
 * Prints one line per import: {@code ok NAME rows=.. bytes_copied=.. bytes_to_host=..} or
 * {@code refused NAME CODE: MESSAGE}.
 */
public final class ImportProducer {
  private ImportProducer() {}

  /** The seed and nulls of the tables imported, which the test makes again to compare. */
  static final long SEED = 7;
  static final Nulls NULLS = Nulls.every(3);
  /** Rows [SLICE_FROM, SLICE_FROM + SLICE_ROWS) of the table go in as table {@code slice}. */
  static final int SLICE_FROM = 8;
  static final int SLICE_ROWS = 100;
  /** The value the producer writes into its one-row table's i64 between two imports from a kept mapping. */
  static final long KEPT_VALUE = 4_242_424_242L;

  public static void main(String[] args) throws Exception {
    int rows = Integer.parseInt(args[1]);
    try (RootAllocator a = new RootAllocator();
        FlightClient client = FlightClient.builder(a, Location.forGrpcInsecure("localhost", Integer.parseInt(args[0]))).build();
        Gpu gpu = Gpu.open(0); CudaStream stream = gpu.newStream();
        VectorSchemaRoot root = TestTables.allTypes(a, rows, NULLS, SEED);
        DeviceTable t = DeviceTable.fromArrow(gpu, root, stream);
        VectorSchemaRoot oneRoot = TestTables.allTypes(a, 1, NULLS, SEED);
        DeviceTable one = DeviceTable.fromArrow(gpu, oneRoot, stream);
        VectorSchemaRoot emptyRoot = TestTables.allTypes(a, 0, NULLS, SEED);
        DeviceTable empty = DeviceTable.fromArrow(gpu, emptyRoot, stream);
        VectorSchemaRoot keptRoot = TestTables.allTypes(a, 1, Nulls.NONE, SEED);
        DeviceTable kept = DeviceTable.fromArrow(gpu, keptRoot, stream)) {
      report("t", () -> DeviceHandOff.ingest(client, "t", "create", t));
      report("twice", () -> DeviceHandOff.ingest(client, "twice", null, t));
      report("twice+", () -> DeviceHandOff.ingest(client, "twice", "append", t));
      report("one", () -> DeviceHandOff.ingest(client, "one", "create", one));
      report("empty", () -> DeviceHandOff.ingest(client, "empty", "create", empty));
      report("replaced", () -> DeviceHandOff.ingest(client, "replaced", "create", t));
      report("replaced=", () -> DeviceHandOff.ingest(client, "replaced", "replace", one));
      report("exists", () -> DeviceHandOff.ingest(client, "t", "create", one));
      report("missing", () -> DeviceHandOff.ingest(client, "nope", "append", one));
      report("mode", () -> DeviceHandOff.ingest(client, "m", "upsert", one));
      gpu.device().synchronize();
      DeviceHandOff.Layout layout = DeviceHandOff.layout(t);
      report("slice", () -> send(client, slice(layout, t.types(), "slice")));
      // lies about the memory: each refused, nothing made
      report("bigger", () -> send(client, withAllocations(layout, "bigger", 1 << 20)));
      report("handle", () -> send(client, withHandle(layout, "handle")));
      report("outside", () -> send(client, withColumn(layout, "outside", 4, c -> new Column(c.name(), c.type(),
          c.precision(), c.scale(), c.timeUnit(), c.timeZone(), c.byteWidth(), c.nullCount(),
          new Region(c.data().allocation(), layout.allocations().get(c.data().allocation()).size() - 8, 16), c.offsets(),
          c.validity()))));
      report("nulls", () -> send(client, withColumn(layout, "nulls", 4, c -> new Column(c.name(), c.type(), c.precision(),
          c.scale(), c.timeUnit(), c.timeZone(), c.byteWidth(), c.nullCount() - 1, c.data(), c.offsets(), c.validity()))));
      // lies in the bytes: a non-NULL string made not UTF-8, then offsets made to run backwards
      VarCharVector str = (VarCharVector) root.getVector("str");
      int row = 0;
      while (str.isNull(row) || str.getValueLength(row) == 0) {
        row++;
      }
      DeviceColumn s = t.column("str");
      write(s.data(), str.getStartOffset(row), new byte[] {(byte) 0xff});
      System.out.println("corrupted str row " + row);
      report("utf8", () -> send(client, request(layout, "utf8", rows)));
      write(s.offsets(), 4L * 10, intBytes(str.getStartOffset(9) - 1));
      report("backwards", () -> send(client, request(layout, "backwards", rows)));
      // kept mappings, after the lies (which would otherwise meet a kept mapping of the same memory):
      // the second import finds the mapping open and still copies what the memory holds now
      report("kept", () -> DeviceHandOff.ingest(client, "kept", "create", kept, true));
      write(kept.column("i64").data(), 0, longBytes(KEPT_VALUE));
      report("kept=", () -> DeviceHandOff.ingest(client, "kept", "replace", kept, true));
      DeviceHandOff.Layout keptLayout = DeviceHandOff.layout(kept);
      report("resized", () -> send(client, withAllocations(keptLayout, "resized", 4096)));
      DeviceHandOff.UnmapResult unmapped = DeviceHandOff.unmap(client, kept);
      System.out.println("unmapped " + unmapped.unmapped() + " still_kept " + unmapped.stillKept());
      report("unkept", () -> DeviceHandOff.ingest(client, "unkept", "create", kept));
    }
  }

  private static void report(String name, Callable<DeviceHandOff.ImportResult> work) {
    try {
      DeviceHandOff.ImportResult r = work.call();
      System.out.println("ok " + name + " rows=" + r.rows() + " bytes_copied=" + r.bytesCopied() + " bytes_to_host="
          + r.bytesToHost() + " seconds=" + r.seconds() + " opened=" + r.mappingsOpened() + " reused=" + r.mappingsReused());
    } catch (FlightRuntimeException e) {
      System.out.println("refused " + name + " " + e.status().code() + ": " + e.getMessage());
    } catch (Exception e) {
      System.out.println("failed " + name + " " + e);
    }
  }

  private static DeviceHandOff.ImportResult send(FlightClient client, ImportRequest r) throws Exception {
    var results = client.doAction(new Action(DeviceHandOff.IMPORT, DeviceHandOff.JSON.writeValueAsBytes(r)));
    return DeviceHandOff.JSON.readValue(results.next().getBody(), DeviceHandOff.ImportResult.class);
  }

  private static ImportRequest request(DeviceHandOff.Layout l, String table, long rows) {
    return new ImportRequest(table, "create", rows, l.allocations(), l.columns(), null);
  }

  /**
   * Rows [SLICE_FROM, SLICE_FROM + SLICE_ROWS) of the table {@code l} describes, by moving each
   * region's start (bitmaps by SLICE_FROM / 8 bytes): a STRING's offsets then start past 0.
   */
  private static ImportRequest slice(DeviceHandOff.Layout l, List<dev.gpudf.columnar.DataType> types, String table) {
    // the NULL rows of the slice (of every gpudf column alike)
    int nulls = 0;
    for (int r = SLICE_FROM; r < SLICE_FROM + SLICE_ROWS; r++) {
      nulls += NULLS.isNull(r) ? 1 : 0;
    }
    List<Column> columns = new ArrayList<>();
    for (int k = 0; k < l.columns().size(); k++) {
      Column c = l.columns().get(k);
      var type = types.get(k);
      long skip = switch (type.id()) {
        case BOOL -> SLICE_FROM / 8;
        case STRING -> 0;
        default -> (long) SLICE_FROM * type.byteWidth();
      };
      columns.add(new Column(c.name(), c.type(), c.precision(), c.scale(), c.timeUnit(), c.timeZone(), c.byteWidth(),
          nulls, moved(c.data(), skip), moved(c.offsets(), 4L * SLICE_FROM), moved(c.validity(), SLICE_FROM / 8)));
    }
    return new ImportRequest(table, "create", (long) SLICE_ROWS, l.allocations(), columns, null);
  }

  private static Region moved(Region r, long bytes) {
    return r == null ? null : new Region(r.allocation(), r.offset() + bytes, r.size() - bytes);
  }

  private static ImportRequest withAllocations(DeviceHandOff.Layout l, String table, long more) {
    List<Allocation> bigger = l.allocations().stream().map(x -> new Allocation(x.handle(), x.size() + more)).toList();
    return new ImportRequest(table, "create", rowsOf(l), bigger, l.columns(), null);
  }

  private static ImportRequest withHandle(DeviceHandOff.Layout l, String table) {
    byte[] junk = new byte[64];
    new java.util.Random(1).nextBytes(junk);
    List<Allocation> bad = new ArrayList<>(l.allocations());
    bad.set(0, new Allocation(Base64.getEncoder().encodeToString(junk), bad.get(0).size()));
    return new ImportRequest(table, "create", rowsOf(l), bad, l.columns(), null);
  }

  private static ImportRequest withColumn(DeviceHandOff.Layout l, String table, int k,
      java.util.function.UnaryOperator<Column> change) {
    List<Column> columns = new ArrayList<>(l.columns());
    columns.set(k, change.apply(columns.get(k)));
    return new ImportRequest(table, "create", rowsOf(l), l.allocations(), columns, null);
  }

  /** The rows of the table a layout describes: its INT64 column's bytes over 8. */
  private static long rowsOf(DeviceHandOff.Layout l) {
    return l.columns().stream().filter(c -> c.type().equals("INT64")).findFirst().orElseThrow().data().size() / 8;
  }

  private static void write(dev.gpudf.columnar.cuda.DeviceBuffer b, long offset, byte[] bytes) {
    check(JCudaDriver.cuMemcpyHtoD(Pointers.device(b.address() + offset), Pointer.to(bytes), bytes.length), "cuMemcpyHtoD");
  }

  private static byte[] longBytes(long v) {
    return java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  private static byte[] intBytes(int v) {
    return java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(v).array();
  }
}
