package dev.gpudf.flight;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TimeUnit;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceIpc;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Result;

/**
 * The device hand-off: a query result that stays on the GPU goes to another process on the same
 * machine as CUDA IPC handles, not as Arrow batches. The client sends action {@link #EXPORT}
 * with a {@link Request}; the server runs the query, keeps the result under a lease and answers
 * with a {@link Descriptor} (JSON): for each column its type and where its buffers lie in the
 * exported allocations. The consumer maps them ({@link #importResult} here, {@code
 * clients/python} for CuPy and PyTorch), and sends {@link #RELEASE} with the lease id when done,
 * or lets the lease expire. Until then the server keeps the memory; after it, the memory may be
 * reused, so a consumer must not read it past its release.
 */
public final class DeviceHandOff {
  /** Action type: run a query and export its result; body: a {@link Request} as JSON. */
  public static final String EXPORT = "gpudf.export_device";
  /** Action type: end a lease early; body: the lease id (UTF-8). */
  public static final String RELEASE = "gpudf.release";
  /**
   * Action type: make a table of another process's device memory; body: an {@link ImportRequest}
   * as JSON; answer: an {@link ImportResult} as JSON, sent once the server holds its own copy, so
   * the producer may then reuse or free its memory.
   */
  public static final String IMPORT = "gpudf.import_device";
  /**
   * Action type: stop keeping mapped the allocations an import asked to keep ({@link
   * ImportRequest#keepMapped}); body: an {@link UnmapRequest} as JSON; answer: an {@link
   * UnmapResult}. The producer may free those allocations once this returns.
   */
  public static final String UNMAP = "gpudf.unmap_device";
  static final ObjectMapper JSON = new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private DeviceHandOff() {}

  /** What to export: a query, and how long the lease lasts (the server's default when null). */
  public record Request(String sql, Double ttlSeconds) {}

  /** One exported driver allocation: its IPC handle (base64 of 64 bytes) and size in bytes. */
  public record Allocation(String handle, long size) {}

  /** A buffer: an index into the allocations, the offset in that allocation, and its bytes. */
  public record Region(int allocation, long offset, long size) {}

  /**
   * One column: gpudf's type (type id; precision and scale of a DECIMAL, stored in {@code
   * byteWidth} bytes: 8 up to precision 18, else 16; the unit and zone of a TIMESTAMP), its
   * nulls, and its buffers in Arrow's layout: {@code data} (values; an LSB-first bitmap for
   * BOOL; UTF-8 bytes for STRING), {@code offsets} (STRING: rows + 1 int32), {@code validity}
   * (LSB-first bitmap, 1 = valid; null when no row is null).
   */
  public record Column(String name, String type, int precision, int scale, String timeUnit, String timeZone, int byteWidth,
      int nullCount, Region data, Region offsets, Region validity) {}

  /**
   * The server's answer: the lease, the device (ordinal and name: the consumer must use the same
   * one), the rows, the result's Arrow schema (an IPC schema message, base64; the columns say
   * where the device layout differs, a DECIMAL in 8 bytes), the allocations and columns, and how
   * many bytes the server copied to the host while it ran and exported the query (the copier's
   * count: a hand-off moves no result data there).
   */
  public record Descriptor(String lease, double ttlSeconds, int device, String deviceName, long rows, String arrowSchema,
      List<Allocation> allocations, List<Column> columns, long bytesToHost) {}

  /**
   * An import: table {@code table} made (mode {@code create}, the default: it must not exist),
   * its rows replaced ({@code replace}) or added to ({@code append}, as an INSERT: types convert,
   * constraints hold) from {@code rows} rows whose columns lie in the producer's {@code
   * allocations}, described as an export describes them ({@link Column}). With {@code
   * keepMapped}, the server keeps the allocations mapped after the import, so that the next import
   * from them skips the driver's mapping cost; the producer then keeps them alive until it sends
   * {@link #UNMAP} for their handles.
   */
  public record ImportRequest(String table, String mode, Long rows, List<Allocation> allocations, List<Column> columns,
      Boolean keepMapped) {}

  /** The allocations to stop keeping mapped, by handle (base64, as the imports gave them). */
  public record UnmapRequest(List<String> handles) {}

  /** How many of the handles were kept mapped (and are no longer), and how many the server still keeps, all producers together. */
  public record UnmapResult(int unmapped, int stillKept) {}

  /**
   * What an import did: the table, the rows it took, the bytes it copied device to device, the
   * bytes the server copied to the host meanwhile (none of the data, unless an append converted
   * types), its time in seconds, and the parts of that time: mapping the producer's allocations
   * (and unmapping them), copying, checking the copies, and making the table; then how many
   * allocations it mapped anew and how many it found mapped (kept by an earlier import).
   */
  public record ImportResult(String table, long rows, long bytesCopied, long bytesToHost, double seconds, double mapSeconds,
      double copySeconds, double checkSeconds, double tableSeconds, int mappingsOpened, int mappingsReused) {}

  /** Where the buffers of a device table lie as CUDA IPC exports: its allocations and its columns. */
  record Layout(List<Allocation> allocations, List<Column> columns) {}

  /** The {@link Layout} of {@code table}, whose buffers stay its own (the caller keeps it open while the handles are in use). */
  static Layout layout(DeviceTable table) {
    java.util.Map<Long, Integer> index = new java.util.HashMap<>();
    List<Allocation> allocations = new ArrayList<>();
    List<Column> columns = new ArrayList<>();
    for (int i = 0; i < table.columnCount(); i++) {
      DeviceColumn c = table.column(i);
      DataType t = c.type();
      columns.add(new Column(table.names().get(i), t.id().name(), t.precision(), t.scale(),
          t.timeUnit() == null ? null : t.timeUnit().name(), t.timeZone(), t.isFixedWidth() ? t.byteWidth() : 0,
          c.nullCount(), region(table, c.data(), index, allocations),
          c.offsets() == null ? null : region(table, c.offsets(), index, allocations),
          c.validity() == null ? null : region(table, c.validity(), index, allocations)));
    }
    return new Layout(allocations, columns);
  }

  private static Region region(DeviceTable table, DeviceBuffer buffer, java.util.Map<Long, Integer> index,
      List<Allocation> allocations) {
    DeviceIpc.Export e = DeviceIpc.export(buffer, table.gpu().device());
    Integer i = index.get(e.allocationBase());
    if (i == null) {
      i = allocations.size();
      index.put(e.allocationBase(), i);
      allocations.add(new Allocation(Base64.getEncoder().encodeToString(e.handle()), e.allocationSize()));
    }
    return new Region(i, e.offset(), buffer.size());
  }

  /**
   * Makes table {@code name} on the server behind {@code client} from {@code table}, which stays
   * this process's: the server maps its buffers, copies them into its own memory, checks them and
   * answers; {@code mode} as in {@link ImportRequest}. The caller may reuse or close {@code table}
   * once this returns. The server must be another process on the same device.
   */
  public static ImportResult ingest(FlightClient client, String name, String mode, DeviceTable table, CallOption... options) {
    return ingest(client, name, mode, table, false, options);
  }

  /**
   * As {@link #ingest(FlightClient, String, String, DeviceTable, CallOption...)}; with {@code
   * keepMapped} the server keeps {@code table}'s allocations mapped, and the caller keeps {@code
   * table} open until it has sent {@link #UNMAP} for them ({@link #unmap}).
   */
  public static ImportResult ingest(FlightClient client, String name, String mode, DeviceTable table, boolean keepMapped,
      CallOption... options) {
    // the table's kernels must have finished before another process reads its memory
    table.gpu().device().synchronize();
    Layout layout = layout(table);
    ImportRequest request = new ImportRequest(name, mode, (long) table.rowCount(), layout.allocations(), layout.columns(),
        keepMapped);
    try {
      Iterator<Result> results = client.doAction(new Action(IMPORT, JSON.writeValueAsBytes(request)), options);
      return JSON.readValue(results.next().getBody(), ImportResult.class);
    } catch (IOException e) {
      throw new UserException("the server's import answer is not readable: " + e.getMessage(), e);
    }
  }

  /** Sends {@link #UNMAP} for every allocation of {@code table} that an import kept mapped; {@code table} may be closed after. */
  public static UnmapResult unmap(FlightClient client, DeviceTable table, CallOption... options) {
    List<String> handles = layout(table).allocations().stream().map(Allocation::handle).toList();
    try {
      Iterator<Result> results = client.doAction(new Action(UNMAP, JSON.writeValueAsBytes(new UnmapRequest(handles))), options);
      return JSON.readValue(results.next().getBody(), UnmapResult.class);
    } catch (IOException e) {
      throw new UserException("the server's unmap answer is not readable: " + e.getMessage(), e);
    }
  }

  /** An imported result: a device table over another process's memory, and the lease that keeps it there. */
  public static final class Imported implements AutoCloseable {
    private final FlightClient client;
    private final CallOption[] options;
    private final Descriptor descriptor;
    private final DeviceTable table;
    private boolean closed;

    private Imported(FlightClient client, CallOption[] options, Descriptor descriptor, DeviceTable table) {
      this.client = client;
      this.options = options;
      this.descriptor = descriptor;
      this.table = table;
    }

    /** The result, resident on this process's view of the server's device memory; valid until {@link #close}. */
    public DeviceTable table() {
      return table;
    }

    public Descriptor descriptor() {
      return descriptor;
    }

    /** Unmaps the memory (once this process's work on it is done) and releases the lease; closing twice throws. */
    @Override
    public void close() {
      if (closed) {
        throw new IllegalStateException("imported result closed twice");
      }
      closed = true;
      try {
        table.close();
      } finally {
        release(client, descriptor.lease(), options);
      }
    }
  }

  /**
   * Runs {@code sql} on the server behind {@code client} and maps its result onto {@code gpu},
   * which must be the server's device, in this (another) process. The caller closes the result.
   */
  public static Imported importResult(FlightClient client, Gpu gpu, String sql, CallOption... options) {
    Descriptor d = export(client, new Request(sql, null), options);
    try {
      return new Imported(client, options, d, map(gpu, d));
    } catch (RuntimeException e) {
      release(client, d.lease(), options);
      throw e;
    }
  }

  /** Sends {@link #EXPORT} and returns the server's descriptor; the caller releases its lease. */
  public static Descriptor export(FlightClient client, Request request, CallOption... options) {
    try {
      Iterator<Result> results = client.doAction(new Action(EXPORT, JSON.writeValueAsBytes(request)), options);
      return JSON.readValue(results.next().getBody(), Descriptor.class);
    } catch (IOException e) {
      throw new UserException("the server's hand-off descriptor is not readable: " + e.getMessage(), e);
    }
  }

  /** Sends {@link #RELEASE} for {@code lease}. */
  public static void release(FlightClient client, String lease, CallOption... options) {
    client.doAction(new Action(RELEASE, lease.getBytes(StandardCharsets.UTF_8)), options).forEachRemaining(r -> { });
  }

  /** A device table over the exported memory of {@code d}, mapped onto {@code gpu}; the caller closes it. */
  static DeviceTable map(Gpu gpu, Descriptor d) {
    if (d.device() != gpu.device().ordinal()) {
      throw new UserException("the result is on device " + d.device() + " (" + d.deviceName() + "), this process uses device "
          + gpu.device().ordinal());
    }
    List<DeviceIpc.Mapping> mappings = new ArrayList<>();
    List<DeviceColumn> columns = new ArrayList<>();
    List<String> names = new ArrayList<>();
    try (CudaStream stream = gpu.newStream()) {
      for (Allocation a : d.allocations()) {
        mappings.add(DeviceIpc.open(gpu.device(), Base64.getDecoder().decode(a.handle()), a.size()));
      }
      for (Column c : d.columns()) {
        DataType type = type(c);
        DeviceBuffer data = buffer(mappings, c.data(), stream);
        DeviceBuffer offsets = c.offsets() == null ? null : buffer(mappings, c.offsets(), stream);
        DeviceBuffer validity = c.validity() == null ? null : buffer(mappings, c.validity(), stream);
        columns.add(new DeviceColumn(type, Math.toIntExact(d.rows()), c.nullCount(), data, offsets, validity));
        names.add(c.name());
      }
      return new DeviceTable(gpu, names, columns, Math.toIntExact(d.rows()));
    } catch (RuntimeException e) {
      columns.forEach(DeviceColumn::close);
      throw e;
    } finally {
      // the buffers hold their own references to the mappings
      mappings.forEach(DeviceIpc.Mapping::close);
    }
  }

  private static DeviceBuffer buffer(List<DeviceIpc.Mapping> mappings, Region r, CudaStream stream) {
    if (r.allocation() < 0 || r.allocation() >= mappings.size()) {
      throw new UserException("a column names allocation " + r.allocation() + " of " + mappings.size());
    }
    return mappings.get(r.allocation()).buffer(r.offset(), r.size(), stream);
  }

  static DataType type(Column c) {
    TypeId id = TypeId.valueOf(c.type());
    return switch (id) {
      case DECIMAL -> DataType.decimal(c.precision(), c.scale());
      case TIMESTAMP -> DataType.timestamp(TimeUnit.valueOf(c.timeUnit()), c.timeZone());
      default -> new DataType(id, 0, 0, null, null);
    };
  }
}
