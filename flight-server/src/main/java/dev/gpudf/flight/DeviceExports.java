package dev.gpudf.flight;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.Cuda;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import jcuda.driver.JCudaDriver;

/**
 * The server side of the {@link DeviceHandOff}: runs a query into device memory, copies the
 * result into an allocation of its own (so that its IPC handle maps nothing else), describes its
 * buffers as CUDA IPC exports, and keeps the result under a lease in {@link Leases} until the
 * consumer releases it or it expires. Owned by the producer, which closes it.
 */
final class DeviceExports implements AutoCloseable {
  static final double DEFAULT_TTL_SECONDS = 600;
  static final double MAX_TTL_SECONDS = 24 * 3600;
  private final GpuSession session;
  private final Leases<DeviceTable> leases = new Leases<>();

  DeviceExports(GpuSession session) {
    this.session = session;
  }

  /** Answers an {@link DeviceHandOff#EXPORT} action: {@code body} is a JSON {@link DeviceHandOff.Request}; returns the JSON descriptor. */
  byte[] export(byte[] body) {
    DeviceHandOff.Request request;
    try {
      request = DeviceHandOff.JSON.readValue(body, DeviceHandOff.Request.class);
    } catch (IOException e) {
      throw new UserException("an export request is a JSON object {\"sql\": ..., \"ttl_seconds\": ...}: " + e.getMessage(), e);
    }
    if (request.sql() == null || request.sql().isBlank()) {
      throw new UserException("an export request needs \"sql\"");
    }
    double ttl = request.ttlSeconds() == null ? DEFAULT_TTL_SECONDS : request.ttlSeconds();
    if (!(ttl > 0 && ttl <= MAX_TTL_SECONDS)) {
      throw new UserException("ttl_seconds must be in (0, " + (long) MAX_TTL_SECONDS + "], not " + ttl);
    }
    // counted from before the query: an operator with only a CPU twin would copy to the host
    long toHostBefore = session.gpu() == null ? 0 : session.gpu().copier().bytesToHost();
    DeviceTable table;
    try (DeviceTable result = session.queryOnDevice(request.sql())) {
      table = isolated(result);
    }
    DeviceHandOff.Descriptor d;
    try {
      d = describe(table, ttl, toHostBefore);
    } catch (RuntimeException e) {
      table.close();
      throw e;
    }
    try {
      return DeviceHandOff.JSON.writeValueAsBytes(d);
    } catch (IOException | RuntimeException e) {
      // nobody will hear of this lease: its table goes now, not at expiry
      leases.release(d.lease());
      throw new dev.gpudf.columnar.error.InternalException("cannot write a hand-off descriptor", e);
    }
  }

  /**
   * A copy of {@code table} in one driver allocation of its own ({@link
   * dev.gpudf.columnar.cuda.DeviceMemoryPool#allocateIsolated}): a CUDA IPC handle maps its whole
   * allocation, and a pool chunk holds other queries' and tables' data too. The caller closes both.
   */
  private static DeviceTable isolated(DeviceTable table) {
    List<DeviceBuffer> from = new ArrayList<>();
    for (int k = 0; k < table.columnCount(); k++) {
      DeviceColumn c = table.column(k);
      from.add(c.data());
      from.add(c.offsets());
      from.add(c.validity());
    }
    long total = 0;
    long[] at = new long[from.size()];
    for (int i = 0; i < from.size(); i++) {
      at[i] = total;
      total += from.get(i) == null ? 0 : align(from.get(i).size());
    }
    List<DeviceColumn> columns = new ArrayList<>();
    try (CudaStream stream = table.gpu().newStream();
        DeviceBuffer memory = table.gpu().pool().allocateIsolated(total, stream)) {
      // the query's kernels ran on its own stream, finished before it returned the table
      DeviceBuffer[] to = new DeviceBuffer[from.size()];
      try {
        for (int i = 0; i < from.size(); i++) {
          DeviceBuffer b = from.get(i);
          if (b != null) {
            to[i] = memory.slice(at[i], b.size());
            if (b.size() > 0) {
              Cuda.check(JCudaDriver.cuMemcpyDtoDAsync(to[i].pointer(), b.pointer(), b.size(), stream.handle()),
                  "cuMemcpyDtoDAsync");
            }
          }
        }
        stream.synchronize();
        for (int k = 0; k < table.columnCount(); k++) {
          DeviceColumn c = table.column(k);
          columns.add(new DeviceColumn(c.type(), c.rowCount(), c.nullCount(), to[3 * k], to[3 * k + 1], to[3 * k + 2]));
          to[3 * k] = to[3 * k + 1] = to[3 * k + 2] = null;
        }
        return new DeviceTable(table.gpu(), table.names(), columns, table.rowCount());
      } catch (RuntimeException e) {
        columns.forEach(DeviceColumn::close);
        for (DeviceBuffer b : to) {
          if (b != null) {
            b.close();
          }
        }
        throw e;
      }
    }
  }

  private static long align(long bytes) {
    long a = dev.gpudf.columnar.cuda.DeviceMemoryPool.ALIGNMENT;
    return (bytes + a - 1) / a * a;
  }

  /** The descriptor of {@code table}, which a new lease of {@code ttl} seconds takes over. */
  private DeviceHandOff.Descriptor describe(DeviceTable table, double ttl, long toHostBefore) {
    DeviceHandOff.Layout layout = DeviceHandOff.layout(table);
    List<org.apache.arrow.vector.types.pojo.Field> fields = new ArrayList<>();
    for (int i = 0; i < table.columnCount(); i++) {
      fields.add(dev.gpudf.columnar.ArrowTypes.toArrowField(table.names().get(i), table.column(i).type()));
    }
    String schema = Base64.getEncoder().encodeToString(new org.apache.arrow.vector.types.pojo.Schema(fields).serializeAsMessage());
    String lease = leases.add(table, ttl);
    return new DeviceHandOff.Descriptor(lease, ttl, table.gpu().device().ordinal(), table.gpu().device().name(),
        table.rowCount(), schema, layout.allocations(), layout.columns(), table.gpu().copier().bytesToHost() - toHostBefore);
  }

  /** Answers {@link DeviceHandOff#RELEASE}: {@code body} is the lease id; an unknown or expired lease is a {@link UserException}. */
  void release(byte[] body) {
    String lease = new String(body, StandardCharsets.UTF_8).strip();
    if (!leases.release(lease)) {
      throw new UserException("no lease '" + lease + "' (released already, or expired)");
    }
  }

  /** Leases held now. */
  int leases() {
    return leases.size();
  }

  @Override
  public void close() {
    leases.close();
  }
}
