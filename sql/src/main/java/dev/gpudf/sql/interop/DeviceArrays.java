package dev.gpudf.sql.interop;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.RefCounted;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceMemoryPool;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.InputCheck;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.c.jni.JniWrapper;
import org.apache.arrow.c.jni.PrivateData;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The Arrow C Device Data Interface for device tables, both ways, with no copy through host
 * memory: a {@link DeviceTable} exported as an {@code ArrowDeviceArray} (a record batch: a struct
 * array of its columns, whose buffers are the table's device memory) with its {@code ArrowSchema},
 * for another library in this process (a CUDA library, cuDF, a JNI consumer); and such an array
 * from another library imported as a device table over the producer's memory, which goes back to
 * the producer (its release callback) when the table's last column closes (a buffer that does
 * not start on a 256-byte boundary, a slice, is copied into gpudf's pool instead).
 *
 * <p>The {@code ArrowArray} and {@code ArrowSchema} halves are Arrow Java's C Data module's
 * (structs, release callbacks, schema formats); the device half is laid out here as the
 * specification defines it: the array, then {@code int64 device_id}, {@code int32 device_type},
 * {@code void* sync_event}, three reserved {@code int64}s. Only CUDA device memory ({@code
 * ARROW_DEVICE_CUDA}) on the table's own device is accepted. DECIMALs of up to 18 digits, kept
 * in 8 bytes on the device, travel as Arrow's decimal64 ({@code d:p,s,64}).
 */
public final class DeviceArrays {
  /** Bytes of an {@code ArrowDeviceArray}. */
  public static final int DEVICE_ARRAY_BYTES = 128;
  /** {@code ArrowDeviceType} of CUDA device memory. */
  public static final int ARROW_DEVICE_CUDA = 2;
  private static final int DEVICE_ID = 80;
  private static final int DEVICE_TYPE = 88;
  private static final int SYNC_EVENT = 96;
  // the ArrowArray struct's release callback (offset of its 9th field)
  private static final int RELEASE = 64;
  /** The most columns an imported batch may have. */
  static final int MOST_COLUMNS = 1 << 16;

  private DeviceArrays() {}

  /**
   * Exports {@code table} into the {@code ArrowDeviceArray} at address {@code deviceArray} (128
   * bytes the caller provides) and its schema into {@code schema}. The array holds a reference to
   * the table until its consumer calls the array's release callback; the consumer may read the
   * buffers at once (the table's work is done: {@code sync_event} is null). Host structs come from
   * {@code allocator} and are freed by the release.
   */
  public static void exportTable(DeviceTable table, BufferAllocator allocator, long deviceArray, ArrowSchema schema) {
    exportSchema(table.names(), table.types(), allocator, schema);
    exportArray(table, allocator, deviceArray);
  }

  /** The schema of a record batch of columns {@code names} of {@code types}, exported into {@code schema}. */
  public static void exportSchema(List<String> names, List<DataType> types, BufferAllocator allocator, ArrowSchema schema) {
    Data.exportField(allocator, struct(names, types), null, schema);
  }

  /** The Arrow field of a record batch of columns {@code names} of {@code types} (a struct), as an export describes it. */
  static Field struct(List<String> names, List<DataType> types) {
    List<Field> fields = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      fields.add(field(names.get(i), types.get(i)));
    }
    return new Field("", FieldType.notNullable(ArrowType.Struct.INSTANCE), fields);
  }

  /** {@link #exportTable} without the schema: the batch alone, into the {@code ArrowDeviceArray} at {@code deviceArray}. */
  public static void exportArray(DeviceTable table, BufferAllocator allocator, long deviceArray) {
    List<AutoCloseable> held = new ArrayList<>();
    table.retain();
    held.add(table);
    try {
      ArrowBuf children = allocator.buffer(8L * Math.max(1, table.columnCount()));
      held.add(children);
      for (int i = 0; i < table.columnCount(); i++) {
        DeviceColumn c = table.column(i);
        ArrowArray child = ArrowArray.allocateNew(allocator);
        // released (if the batch's release has not released it) before its struct is freed
        held.add(() -> {
          child.release();
          child.close();
        });
        long[] addresses = c.type().id() == TypeId.STRING
            ? new long[] {address(c.validity()), c.offsets().address(), c.data().address()}
            : new long[] {address(c.validity()), c.data().address()};
        ArrowBuf buffers = pointers(allocator, addresses);
        ArrowArray.Snapshot s = new ArrowArray.Snapshot();
        s.length = table.rowCount();
        s.null_count = c.nullCount();
        s.n_buffers = addresses.length;
        s.buffers = buffers.memoryAddress();
        child.save(s);
        // a child's release frees its buffer list; the batch's release releases the children first
        JniWrapper.get().exportArray(child.memoryAddress(), buffers::close);
        children.setLong(8L * i, child.memoryAddress());
      }
      ArrowBuf top = pointers(allocator, new long[] {0});
      held.add(top);
      ArrowArray.Snapshot s = new ArrowArray.Snapshot();
      s.length = table.rowCount();
      s.n_buffers = 1;
      s.buffers = top.memoryAddress();
      s.n_children = table.columnCount();
      s.children = children.memoryAddress();
      ArrowArray.wrap(deviceArray).save(s);
      MemoryUtil.putLong(deviceArray + DEVICE_ID, table.gpu().device().ordinal());
      MemoryUtil.putInt(deviceArray + DEVICE_TYPE, ARROW_DEVICE_CUDA);
      MemoryUtil.putInt(deviceArray + DEVICE_TYPE + 4, 0);
      MemoryUtil.putLong(deviceArray + SYNC_EVENT, 0);
      for (int r = 0; r < 3; r++) {
        MemoryUtil.putLong(deviceArray + SYNC_EVENT + 8 + 8L * r, 0);
      }
      JniWrapper.get().exportArray(deviceArray, closeAll(held));
    } catch (RuntimeException e) {
      closeAll(held).close();
      throw e;
    }
  }

  private static long address(DeviceBuffer b) {
    return b == null ? 0 : b.address();
  }

  private static ArrowBuf pointers(BufferAllocator allocator, long[] addresses) {
    ArrowBuf b = allocator.buffer(8L * addresses.length);
    for (int i = 0; i < addresses.length; i++) {
      b.setLong(8L * i, addresses[i]);
    }
    return b;
  }

  /** Private data that closes {@code held}, last first (the children's structs before the list of them, the table last). */
  private static PrivateData closeAll(List<AutoCloseable> held) {
    return () -> {
      RuntimeException failure = null;
      for (int i = held.size() - 1; i >= 0; i--) {
        try {
          held.get(i).close();
        } catch (Exception e) {
          failure = failure == null ? new IllegalStateException("releasing an exported device array", e) : failure;
        }
      }
      if (failure != null) {
        throw failure;
      }
    };
  }

  /** The Arrow field of a gpudf column on the device: as {@link ArrowTypes#toArrowField}, a DECIMAL of 8 bytes as decimal64. */
  private static Field field(String name, DataType type) {
    Field f = ArrowTypes.toArrowField(name, type);
    if (type.isDecimal64()) {
      return new Field(name, new FieldType(true, new ArrowType.Decimal(type.precision(), type.scale(), 64), null), null);
    }
    return f;
  }

  /**
   * A device table over the record batch in the {@code ArrowDeviceArray} at {@code deviceArray},
   * described by {@code schema} (both another library's, in this process), on {@code exec}'s GPU.
   * The batch is moved (its struct released for its producer's part, so the caller may free it):
   * the table's columns view the producer's memory, and the last of them to close calls the
   * batch's release. Every column is checked as an import from another process is ({@link
   * InputCheck}); a STRING column whose offsets do not start at 0 is copied. The schema is
   * released here. The caller closes the table.
   */
  public static DeviceTable importTable(Exec exec, long deviceArray, ArrowSchema schema) {
    Field struct;
    try {
      struct = importField(exec.allocator(), schema);
    } catch (RuntimeException e) {
      // the batch goes back to its producer whatever is wrong with its schema
      if (ArrowArray.wrap(deviceArray).snapshot().release != 0) {
        new Batch(exec.allocator(), deviceArray).close();
      }
      throw e;
    }
    return importTable(exec, deviceArray, struct);
  }

  /** The field another library's {@code schema} describes; the schema is released here. */
  static Field importField(BufferAllocator allocator, ArrowSchema schema) {
    try {
      return Data.importField(allocator, schema, null);
    } catch (RuntimeException e) {
      throw new UserException("an imported device array's schema cannot be read: " + e.getMessage(), e);
    }
  }

  /** {@link #importTable(Exec, long, ArrowSchema)} with the schema already read: {@code struct}, a record batch's field. */
  static DeviceTable importTable(Exec exec, long deviceArray, Field struct) {
    ArrowArray.Snapshot top = ArrowArray.wrap(deviceArray).snapshot();
    if (top.release == 0) {
      throw new UserException("an imported device array was released already");
    }
    // moved first: whatever is wrong with it, the batch goes back to its producer
    Batch batch = new Batch(exec.allocator(), deviceArray);
    List<DeviceColumn> columns = new ArrayList<>();
    try (batch) {
      if (!exec.hasGpu()) {
        throw new NotSupportedException("an Arrow C Device array needs the GPU backend: device memory does not become a"
            + " table of the CPU backend");
      }
      Gpu gpu = exec.gpu();
      int type = MemoryUtil.getInt(deviceArray + DEVICE_TYPE);
      long device = MemoryUtil.getLong(deviceArray + DEVICE_ID);
      if (type != ARROW_DEVICE_CUDA) {
        throw new NotSupportedException("an imported device array of device type " + type + ": gpudf takes CUDA device"
            + " memory (" + ARROW_DEVICE_CUDA + ")");
      }
      if (device != gpu.device().ordinal()) {
        throw new UserException("an imported device array on device " + device + ", this session's GPU is "
            + gpu.device().ordinal());
      }
      long sync = MemoryUtil.getLong(deviceArray + SYNC_EVENT);
      if (sync != 0) {
        exec.stream().waitFor(MemoryUtil.getLong(sync));
      }
      List<Field> fields = struct.getChildren();
      if (!(struct.getType() instanceof ArrowType.Struct) || top.n_children != fields.size() || top.null_count > 0
          || fields.size() > MOST_COLUMNS || top.length < 0 || top.length >= Integer.MAX_VALUE || top.offset != 0) {
        throw new UserException("an imported device array is a record batch (a struct without NULLs, offset 0, one child"
            + " per schema field), not " + struct.getType() + " of " + top.n_children + " children, " + top.null_count
            + " NULLs, offset " + top.offset + " for " + fields.size() + " fields");
      }
      int rows = (int) top.length;
      List<String> names = new ArrayList<>();
      for (int i = 0; i < fields.size(); i++) {
        Field f = fields.get(i);
        names.add(f.getName());
        DeviceColumn c = column(exec, batch, f, ArrowArray.wrap(MemoryUtil.getLong(top.children + 8L * i)).snapshot(), rows);
        columns.add(c);
        InputCheck.check(exec, c, "an imported device array's column '" + f.getName() + "'");
        DeviceColumn laidOut = InputCheck.laidOut(exec, c);
        if (laidOut != c) {
          columns.set(i, laidOut).close();
        }
      }
      exec.stream().synchronize();
      return new DeviceTable(gpu, names, columns, rows);
    } catch (RuntimeException e) {
      columns.forEach(DeviceColumn::close);
      throw e;
    }
  }

  /** One child of an imported batch as a device column over its buffers (each view holds a reference to the batch). */
  private static DeviceColumn column(Exec exec, Batch batch, Field f, ArrowArray.Snapshot a, int rows) {
    DataType type = type(f);
    String what = "an imported device array's column '" + f.getName() + "'";
    int buffers = type.id() == TypeId.STRING ? 3 : 2;
    if (a.length != rows || a.n_buffers != buffers || a.n_children != 0 || a.dictionary != 0 || a.offset < 0
        || a.offset > Integer.MAX_VALUE - rows) {
      throw new UserException(what + " has " + a.length + " rows, " + a.n_buffers + " buffers, " + a.n_children
          + " children, offset " + a.offset + " (a batch of " + rows + " rows; " + type + " has " + buffers + " buffers)");
    }
    long offset = a.offset;
    long validityAt = MemoryUtil.getLong(a.buffers);
    boolean bits = type.id() == TypeId.BOOL || validityAt != 0;
    if (bits && offset % 8 != 0) {
      throw new NotSupportedException(what + " starts at row " + offset + " of its buffers: gpudf takes bitmaps from a"
          + " multiple of 8 rows");
    }
    List<DeviceBuffer> views = new ArrayList<>(3);
    try {
      DeviceBuffer validity = validityAt == 0 ? null
          : batch.view(exec, validityAt + offset / 8, DeviceColumn.bitmapBytes(rows), views);
      long dataAt = MemoryUtil.getLong(a.buffers + 8);
      DeviceBuffer offsets = null;
      DeviceBuffer data;
      if (type.id() == TypeId.STRING) {
        offsets = batch.view(exec, dataAt + 4 * offset, 4L * (rows + 1), views);
        if (exec.readInt(offsets, 0) != 0) {
          // offsets from past 0 (a slice's, or so made) are rebased in place: never in the producer's memory
          views.remove(offsets);
          offsets.close();
          offsets = batch.copy(exec, dataAt + 4 * offset, 4L * (rows + 1), views);
        }
        // the text runs to the last offset (checked with the others once the column is made)
        int last = exec.readInt(offsets, 4L * rows);
        data = batch.view(exec, MemoryUtil.getLong(a.buffers + 16), Math.max(0, last), views);
      } else if (type.id() == TypeId.BOOL) {
        data = batch.view(exec, dataAt + offset / 8, DeviceColumn.bitmapBytes(rows), views);
      } else {
        data = batch.view(exec, dataAt + offset * type.byteWidth(), (long) rows * type.byteWidth(), views);
      }
      long nulls = a.null_count;
      if (nulls < 0) {
        // -1: the producer did not count them
        nulls = validity == null ? 0 : rows - dev.gpudf.kernels.Bitmaps.countSet(exec.gpu(), validity, rows, exec.stream());
      }
      if (nulls > rows || (nulls > 0 && validity == null)) {
        throw new UserException(what + " says it has " + nulls + " NULL rows of " + rows
            + (validity == null ? " and has no validity bitmap" : ""));
      }
      return new DeviceColumn(type, rows, (int) nulls, data, offsets, validity);
    } catch (RuntimeException e) {
      views.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /** The gpudf type of an imported field: as {@link ArrowTypes#fromArrow}, and decimal64 as an 8-byte DECIMAL. */
  private static DataType type(Field f) {
    if (f.getType() instanceof ArrowType.Decimal d) {
      if (d.getBitWidth() == 64 && d.getPrecision() >= 1 && d.getPrecision() <= 18 && d.getScale() >= 0
          && d.getScale() <= d.getPrecision()) {
        return DataType.decimal(d.getPrecision(), d.getScale());
      }
      if (d.getBitWidth() == 128 && d.getPrecision() <= 18) {
        throw new NotSupportedException("column '" + f.getName() + "' is a 128-bit DECIMAL(" + d.getPrecision() + ", "
            + d.getScale() + "): gpudf keeps up to 18 digits in 8 bytes on the device; hand it over as decimal64 (d:p,s,64)");
      }
    }
    // every other fixed-width type gpudf takes has Arrow's width on the device too
    return ArrowTypes.fromArrow(f);
  }

  /**
   * An imported batch, moved into a struct of its own: each buffer view holds a reference, and
   * the last release calls the producer's release callback.
   */
  private static final class Batch extends RefCounted {
    private final ArrowArray moved;

    /** Moves the batch at {@code deviceArray} into a struct from {@code allocator} (the source is marked released). */
    Batch(BufferAllocator allocator, long deviceArray) {
      moved = ArrowArray.allocateNew(allocator);
      MemoryUtil.copyMemory(deviceArray, moved.memoryAddress(), 80);
      MemoryUtil.putLong(deviceArray + RELEASE, 0);
    }

    /**
     * The {@code size} bytes at {@code address}: a view holding a reference to this batch, or,
     * where the address is not on a {@link DeviceMemoryPool#ALIGNMENT} boundary (a slice of the
     * producer's buffer), a copy in the pool, as every kernel may load whole words from a
     * buffer's start. Goes into {@code views}, which the caller closes on failure.
     */
    DeviceBuffer view(Exec exec, long address, long size, List<DeviceBuffer> views) {
      if (address == 0 && size > 0) {
        throw new UserException("an imported device array has a null buffer where " + size + " bytes are needed");
      }
      if (address % DeviceMemoryPool.ALIGNMENT != 0) {
        return copy(exec, address, size, views);
      }
      DeviceBuffer b = DeviceBuffer.foreign(address, size, exec.stream(), this);
      views.add(b);
      return b;
    }

    /** A copy in the pool of the {@code size} bytes at {@code address}; goes into {@code views}. */
    DeviceBuffer copy(Exec exec, long address, long size, List<DeviceBuffer> views) {
      if (address == 0 && size > 0) {
        throw new UserException("an imported device array has a null buffer where " + size + " bytes are needed");
      }
      DeviceBuffer copy = exec.allocate(size);
      views.add(copy);
      try (DeviceBuffer from = DeviceBuffer.foreign(address, size, exec.stream(), this)) {
        exec.copy(copy, 0, from, 0, size);
      }
      return copy;
    }

    @Override
    protected void release() {
      try {
        moved.release();
      } finally {
        moved.close();
      }
    }
  }
}
