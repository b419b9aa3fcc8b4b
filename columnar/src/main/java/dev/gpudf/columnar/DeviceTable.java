package dev.gpudf.columnar;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** A table resident in device memory: the GPU backend's table. */
public final class DeviceTable extends Table<DeviceColumn> {
  private final Gpu gpu;

  /** Takes ownership of {@code columns}, which live on {@code gpu}. */
  public DeviceTable(Gpu gpu, List<String> names, List<DeviceColumn> columns, int rowCount) {
    super(names, columns, rowCount);
    this.gpu = gpu;
  }

  /**
   * Copies {@code root} to the device on {@code stream}; returns once the copy is complete, so the
   * caller may close {@code root} at once. The caller owns the result. Unsupported types and
   * inconsistent lengths fail before any device memory is taken.
   */
  public static DeviceTable fromArrow(Gpu gpu, VectorSchemaRoot root, CudaStream stream) {
    List<DataType> types = ArrowTypes.checkBatch(root);
    List<FieldVector> vectors = root.getFieldVectors();
    List<String> names = new ArrayList<>();
    List<DeviceColumn> columns = new ArrayList<>();
    try {
      for (int i = 0; i < vectors.size(); i++) {
        FieldVector v = vectors.get(i);
        names.add(v.getName());
        columns.add(ColumnTransfer.toDevice(gpu, v, types.get(i), HostBitmaps.nullCount(v), stream));
      }
      stream.synchronize();
    } catch (RuntimeException e) {
      columns.forEach(DeviceColumn::close);
      throw e;
    }
    return new DeviceTable(gpu, names, columns, root.getRowCount());
  }

  /** Copies {@code host} to the device; see {@link #fromArrow}. */
  public static DeviceTable fromHost(Gpu gpu, HostTable host, CudaStream stream) {
    List<DeviceColumn> columns = new ArrayList<>();
    try {
      for (int i = 0; i < host.columnCount(); i++) {
        HostColumn c = host.column(i);
        columns.add(ColumnTransfer.toDevice(gpu, c.vector(), c.type(), c.nullCount(), stream));
      }
      stream.synchronize();
    } catch (RuntimeException e) {
      columns.forEach(DeviceColumn::close);
      throw e;
    }
    return new DeviceTable(gpu, host.names(), columns, host.rowCount());
  }

  /** The device this table lives on. */
  public Gpu gpu() {
    return gpu;
  }

  /**
   * Copies the table to Arrow vectors from {@code allocator} (a pinned allocator avoids the
   * staging copy) and waits for the copy; the caller closes the root. The copy runs on a stream of
   * its own, ordered after nothing: for a table at rest (resident, or its stream waited for); a
   * table that kernels may still be writing is copied on their stream ({@link #toArrow(BufferAllocator,
   * CudaStream)}).
   */
  @Override
  public VectorSchemaRoot toArrow(BufferAllocator allocator) {
    try (CudaStream stream = gpu.newStream()) {
      return toArrow(allocator, stream);
    }
  }

  /** {@link #toArrow(BufferAllocator)} on the caller's stream. */
  public VectorSchemaRoot toArrow(BufferAllocator allocator, CudaStream stream) {
    List<DeviceColumn> columns = new ArrayList<>(columnCount());
    for (int i = 0; i < columnCount(); i++) {
      columns.add(column(i));
    }
    List<FieldVector> vectors = ColumnTransfer.toHost(gpu, names(), columns, allocator, stream);
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(rowCount());
    return root;
  }

  /** Copies the table to a {@link HostTable} over buffers from {@code allocator}; the caller closes it. At rest only, as {@link #toArrow(BufferAllocator)}. */
  public HostTable toHost(BufferAllocator allocator) {
    try (VectorSchemaRoot root = toArrow(allocator)) {
      return HostTable.fromArrow(root);
    }
  }

  /** {@link #toHost(BufferAllocator)} on {@code stream}, after the work queued there (the kernels that made the table). */
  public HostTable toHost(BufferAllocator allocator, CudaStream stream) {
    try (VectorSchemaRoot root = toArrow(allocator, stream)) {
      return HostTable.fromArrow(root);
    }
  }
}
