package dev.gpudf.flight;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceIpc;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server side of the {@link DeviceHandOff}: runs a query into device memory, describes its
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
    DeviceTable table = session.queryOnDevice(request.sql());
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

  /** The descriptor of {@code table}, which a new lease of {@code ttl} seconds takes over. */
  private DeviceHandOff.Descriptor describe(DeviceTable table, double ttl, long toHostBefore) {
    Map<Long, Integer> allocationIndex = new LinkedHashMap<>();
    List<DeviceHandOff.Allocation> allocations = new ArrayList<>();
    List<DeviceHandOff.Column> columns = new ArrayList<>();
    List<org.apache.arrow.vector.types.pojo.Field> fields = new ArrayList<>();
    for (int i = 0; i < table.columnCount(); i++) {
      DeviceColumn c = table.column(i);
      var t = c.type();
      columns.add(new DeviceHandOff.Column(table.names().get(i), t.id().name(), t.precision(), t.scale(),
          t.timeUnit() == null ? null : t.timeUnit().name(), t.timeZone(), t.isFixedWidth() ? t.byteWidth() : 0,
          c.nullCount(), region(table, c.data(), allocationIndex, allocations),
          c.offsets() == null ? null : region(table, c.offsets(), allocationIndex, allocations),
          c.validity() == null ? null : region(table, c.validity(), allocationIndex, allocations)));
      fields.add(dev.gpudf.columnar.ArrowTypes.toArrowField(table.names().get(i), t));
    }
    String schema = Base64.getEncoder().encodeToString(new org.apache.arrow.vector.types.pojo.Schema(fields).serializeAsMessage());
    String lease = leases.add(table, ttl);
    return new DeviceHandOff.Descriptor(lease, ttl, table.gpu().device().ordinal(), table.gpu().device().name(),
        table.rowCount(), schema, allocations, columns, table.gpu().copier().bytesToHost() - toHostBefore);
  }

  private static DeviceHandOff.Region region(DeviceTable table, DeviceBuffer buffer, Map<Long, Integer> index,
      List<DeviceHandOff.Allocation> allocations) {
    DeviceIpc.Export e = DeviceIpc.export(buffer, table.gpu().device());
    Integer i = index.get(e.allocationBase());
    if (i == null) {
      i = allocations.size();
      index.put(e.allocationBase(), i);
      allocations.add(new DeviceHandOff.Allocation(Base64.getEncoder().encodeToString(e.handle()), e.allocationSize()));
    }
    return new DeviceHandOff.Region(i, e.offset(), buffer.size());
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
