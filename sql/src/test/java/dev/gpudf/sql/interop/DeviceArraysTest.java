package dev.gpudf.sql.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.kernels.Exec;
import dev.gpudf.sql.GpuSession;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Arrow C Device Data Interface with a native library in this process ({@link NativePeer}):
 * every gpudf type exported and read by C code from the device, its figures equal to the table's;
 * a C producer's batch imported as a table and queried in SQL; no byte of data copied to the
 * host by gpudf either way; every batch released to its producer (also when an import is refused).
 */
class DeviceArraysTest {

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 70_001})
  void aNativeLibraryReadsAnExportedTableOnTheDevice(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        CudaStream stream = gpu.newStream();
        VectorSchemaRoot root = TestTables.allTypes(a, rows, TestTables.Nulls.every(3), 11)) {
      long poolBefore = gpu.pool().stats().allocated();
      String described;
      try (DeviceTable table = DeviceTable.fromArrow(gpu, root, stream);
          ArrowBuf array = a.buffer(DeviceArrays.DEVICE_ARRAY_BYTES); ArrowSchema schema = ArrowSchema.allocateNew(a)) {
        long toHost = gpu.copier().bytesToHost();
        DeviceArrays.exportTable(table, a, array.memoryAddress(), schema);
        assertEquals(toHost, gpu.copier().bytesToHost(), "an export copies nothing to the host");
        gpu.device().makeCurrent();
        described = NativePeer.consume(array.memoryAddress(), schema.memoryAddress());
      }
      assertEquals(expected(root), described);
      assertEquals(poolBefore, gpu.pool().stats().allocated(), "the release gave the table back");
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 70_001})
  void aNativeLibrarysBatchBecomesATable(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        GpuSession session = GpuSession.gpu(gpu, a); Exec exec = Exec.onGpu(gpu, a);
        ArrowBuf array = a.buffer(DeviceArrays.DEVICE_ARRAY_BYTES); ArrowSchema schema = ArrowSchema.allocateNew(a)) {
      gpu.device().makeCurrent();
      assertEquals(0, NativePeer.produce(rows, array.memoryAddress(), schema.memoryAddress()));
      long toHost = gpu.copier().bytesToHost();
      try (DeviceTable t = DeviceArrays.importTable(exec, array.memoryAddress(), schema)) {
        assertEquals(toHost, gpu.copier().bytesToHost(), "an import copies nothing to the host");
        assertEquals(rows, t.rowCount());
        session.catalog().register("native", t);
      }
      assertTrue(rows == 0 || NativePeer.producedBytesLive() > 0, "the table still views the producer's memory");
      assertEquals(expectedSums(0, rows), sums(session));
      session.catalog().drop("native");
      assertEquals(0, NativePeer.producedBytesLive(), "dropping the table released the producer's batch");
    }
  }

  /** A batch whose columns start at row 8 of their buffers: bitmaps and values off their alignment are copied, the rest viewed. */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {9, 33, 70_001})
  void aSliceOfANativeBatchIsTaken(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        GpuSession session = GpuSession.gpu(gpu, a); Exec exec = Exec.onGpu(gpu, a);
        ArrowBuf array = a.buffer(DeviceArrays.DEVICE_ARRAY_BYTES); ArrowSchema schema = ArrowSchema.allocateNew(a)) {
      gpu.device().makeCurrent();
      assertEquals(0, NativePeer.produce(rows, array.memoryAddress(), schema.memoryAddress()));
      int from = 8;
      array.setLong(0, rows - from);
      long children = array.getLong(48);
      for (int c = 0; c < 4; c++) {
        long child = MemoryUtil.getLong(children + 8L * c);
        MemoryUtil.putLong(child, rows - from);
        MemoryUtil.putLong(child + 16, from);
        if (c == 2) {
          // the string column's NULLs among the rows left
          long nulls = 0;
          for (int i = from; i < rows; i++) {
            nulls += i % 5 == 4 ? 1 : 0;
          }
          MemoryUtil.putLong(child + 8, nulls);
        }
      }
      try (DeviceTable t = DeviceArrays.importTable(exec, array.memoryAddress(), schema)) {
        session.catalog().register("native", t);
      }
      assertEquals(expectedSums(from, rows), sums(session));
      session.catalog().drop("native");
      assertEquals(0, NativePeer.producedBytesLive(), "dropping the table released the producer's batch");
    }
  }

  /** On the CPU backend a device array is refused, and still goes back to its producer (a leak would fail the allocator's close). */
  @Test
  void aCpuBackendRefusesADeviceArrayAndReleasesIt() {
    try (RootAllocator a = new RootAllocator();
        VectorSchemaRoot root = TestTables.allTypes(a, 10, TestTables.Nulls.every(3), 3);
        ArrowBuf array = a.buffer(DeviceArrays.DEVICE_ARRAY_BYTES); ArrowSchema schema = ArrowSchema.allocateNew(a);
        Exec cpu = Exec.onCpu(a)) {
      array.setZero(0, DeviceArrays.DEVICE_ARRAY_BYTES);
      Data.exportVectorSchemaRoot(a, root, null, ArrowArray.wrap(array.memoryAddress()), schema);
      array.setInt(88, DeviceArrays.ARROW_DEVICE_CUDA);
      NotSupportedException e = assertThrows(NotSupportedException.class,
          () -> DeviceArrays.importTable(cpu, array.memoryAddress(), schema));
      assertTrue(e.getMessage().contains("needs the GPU backend"), e.getMessage());
      assertEquals(0, array.getLong(64), "the batch was moved out of the caller's struct");
      UserException again = assertThrows(UserException.class, () -> {
        try (ArrowSchema other = ArrowSchema.allocateNew(a)) {
          Data.exportField(a, root.getSchema().getFields().get(0), null, other);
          DeviceArrays.importTable(cpu, array.memoryAddress(), other);
        }
      });
      assertTrue(again.getMessage().contains("released already"), again.getMessage());
    }
  }

  static String sums(GpuSession session) {
    try (VectorSchemaRoot r = session.query("SELECT COUNT(*), SUM(id), SUM(x), COUNT(s), SUM(price), SUM(CHAR_LENGTH(s)),"
        + " MIN(s), MAX(s) FROM native")) {
      return row(r);
    }
  }

  /** What {@link #sums} gives over rows {@code from} to {@code rows - 1} of the native producer's batch. */
  static String expectedSums(int from, int rows) {
    long count = rows - from;
    long ids = 0;
    long valid = 0;
    long chars = 0;
    String first = null;
    String last = null;
    for (int i = from; i < rows; i++) {
      ids += i;
      if (i % 5 == 4) {
        continue;
      }
      valid++;
      String s = (i % 3 == 0 ? "é" : "r") + i;
      chars += s.length();
      first = first == null || s.compareTo(first) < 0 ? s : first;
      last = last == null || s.compareTo(last) > 0 ? s : last;
    }
    return count + " | " + (count == 0 ? "NULL" : ids) + " | " + (count == 0 ? "NULL" : ids / 2.0) + " | " + valid + " | "
        + (count == 0 ? "NULL" : new java.math.BigDecimal(java.math.BigInteger.valueOf(ids * 3), 2)) + " | "
        + (valid == 0 ? "NULL" : chars) + " | " + (first == null ? "NULL" : first) + " | " + (last == null ? "NULL" : last);
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {1, 33})
  void aBatchOnAnotherKindOfDeviceIsRefusedAndGoesBack(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); Exec exec = Exec.onGpu(gpu, a);
        ArrowBuf array = a.buffer(DeviceArrays.DEVICE_ARRAY_BYTES); ArrowSchema schema = ArrowSchema.allocateNew(a)) {
      gpu.device().makeCurrent();
      assertEquals(0, NativePeer.produce(rows, array.memoryAddress(), schema.memoryAddress()));
      array.setInt(88, 1);
      NotSupportedException e = assertThrows(NotSupportedException.class,
          () -> DeviceArrays.importTable(exec, array.memoryAddress(), schema));
      assertTrue(e.getMessage().contains("device type 1"), e.getMessage());
      assertEquals(0, NativePeer.producedBytesLive(), "a refused batch is released to its producer");
    }
  }

  private static String row(VectorSchemaRoot r) {
    StringBuilder b = new StringBuilder();
    for (FieldVector v : r.getFieldVectors()) {
      Object o = v.getObject(0);
      b.append(b.length() == 0 ? "" : " | ").append(o == null ? "NULL" : o.toString());
    }
    return b.toString();
  }

  /** What the native consumer prints for {@code root}: per column its C format, NULLs and figures (see device_array_peer.c). */
  static String expected(VectorSchemaRoot root) {
    StringBuilder b = new StringBuilder("device_type=2 device_id=0 sync_event=null rows=" + root.getRowCount() + " format=+s");
    for (FieldVector v : root.getFieldVectors()) {
      String format = format(v);
      b.append(" | ").append(v.getName()).append(' ').append(format);
      if (format.equals("d:38,10")) {
        b.append(": not summed");
        continue;
      }
      b.append(" nulls=").append(v.getNullCount()).append(' ');
      int n = v.getValueCount();
      if (v instanceof VarCharVector s) {
        long hash = 0xcbf29ce484222325L;
        long total = 0;
        for (int i = 0; i < n; i++) {
          if (!s.isNull(i)) {
            for (byte x : s.get(i)) {
              hash = (hash ^ (x & 0xff)) * 0x100000001b3L;
            }
            total += s.get(i).length;
          }
        }
        b.append("bytes=").append(total).append(" fnv=").append(Long.toUnsignedString(hash));
      } else if (v instanceof BitVector bits) {
        long trues = 0;
        for (int i = 0; i < n; i++) {
          trues += !bits.isNull(i) && bits.get(i) == 1 ? 1 : 0;
        }
        b.append("trues=").append(trues);
      } else if (v instanceof Float8Vector || v instanceof Float4Vector) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
          if (!v.isNull(i)) {
            sum += v instanceof Float8Vector d ? d.get(i) : (double) ((Float4Vector) v).get(i);
          }
        }
        b.append("bits=").append(String.format("%016x", Double.doubleToRawLongBits(sum)));
      } else {
        long sum = 0;
        for (int i = 0; i < n; i++) {
          if (!v.isNull(i)) {
            sum += v instanceof DecimalVector d ? d.getObject(i).unscaledValue().longValue() : rawLong(v, i);
          }
        }
        b.append("sum=").append(sum);
      }
    }
    return b.append(" | released=yes").toString();
  }

  /** Value {@code i} of a fixed-width integer-like vector as the C side reads it: its raw bytes as a signed integer. */
  private static long rawLong(FieldVector v, int i) {
    int width = v.getField().getType() instanceof ArrowType.Date ? 4 : ((org.apache.arrow.vector.BaseFixedWidthVector) v)
        .getTypeWidth();
    long at = v.getDataBuffer().memoryAddress() + (long) i * width;
    return switch (width) {
      case 1 -> MemoryUtil.getByte(at);
      case 2 -> MemoryUtil.getShort(at);
      case 4 -> MemoryUtil.getInt(at);
      default -> MemoryUtil.getLong(at);
    };
  }

  private static String format(FieldVector v) {
    ArrowType t = v.getField().getType();
    if (t instanceof ArrowType.Decimal d) {
      return d.getPrecision() <= 18 ? "d:" + d.getPrecision() + "," + d.getScale() + ",64"
          : "d:" + d.getPrecision() + "," + d.getScale();
    }
    return switch (v.getName()) {
      case "bool" -> "b";
      case "i8" -> "c";
      case "i16" -> "s";
      case "i32" -> "i";
      case "i64" -> "l";
      case "f32" -> "f";
      case "f64" -> "g";
      case "date" -> "tdD";
      case "ts_utc" -> "tsu:UTC";
      case "ts_nano" -> "tsn:";
      case "str" -> "u";
      default -> throw new IllegalArgumentException(v.getName());
    };
  }
}
