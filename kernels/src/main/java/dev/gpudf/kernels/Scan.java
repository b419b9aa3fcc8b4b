package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Prefix sums of a numeric column, inclusive or exclusive. Integers sum into INT64, floats into
 * FLOAT64; a null row stays null and adds nothing. INT64 input whose values could overflow a
 * 64-bit running sum is refused ({@link NotSupportedException}) rather than wrapped.
 */
public final class Scan {
  private Scan() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceColumn scan(Exec exec, DeviceColumn column, boolean inclusive) {
    PhysicalType p = check(exec, column);
    int n = column.rowCount();
    List<DeviceBuffer> owned = new ArrayList<>(2);
    try {
      DeviceBuffer out = exec.allocate(8L * n);
      owned.add(out);
      DeviceScan.scan(exec, p, column.data(), column.validity(), n, out, inclusive, false);
      DeviceBuffer validity = null;
      if (column.validity() != null) {
        validity = exec.allocate(DeviceColumn.bitmapBytes(n));
        owned.add(validity);
        exec.copy(validity, 0, column.validity(), 0, DeviceColumn.bitmapBytes(n));
      }
      return new DeviceColumn(resultType(p), n, column.nullCount(), out, null, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /** On the CPU; the caller owns the result. */
  public static HostColumn scan(Exec exec, HostColumn column, boolean inclusive) {
    PhysicalType p = check(exec, column);
    int n = column.rowCount();
    BufferAllocator a = exec.allocator();
    CpuReduce.HostRows in = new CpuReduce.HostRows(column.vector(), p, column.nullCount() > 0);
    int chunk = 1 << 16;
    int chunks = (n + chunk - 1) / chunk;
    List<ArrowBuf> bufs = new ArrayList<>(2);
    try {
      ArrowBuf validity = column.nullCount() > 0 ? a.buffer(DeviceColumn.bitmapBytes(n)) : a.getEmpty();
      bufs.add(validity);
      if (column.nullCount() > 0) {
        MemoryUtil.copyMemory(column.vector().getValidityBuffer().memoryAddress(), validity.memoryAddress(),
            DeviceColumn.bitmapBytes(n));
      }
      ArrowBuf out = a.buffer(Math.max(8, 8L * n));
      bufs.add(out);
      long o = out.memoryAddress();
      // pass 1: chunk totals; pass 2: each chunk from its offset (same shape as the kernels)
      double[] fTotals = new double[chunks + 1];
      long[] iTotals = new long[chunks + 1];
      IntStream.range(0, chunks).parallel().forEach(c -> {
        for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk); i++) {
          if (in.valid(i)) {
            if (p.isFloat()) {
              fTotals[c + 1] += in.doubleAt(i);
            } else {
              iTotals[c + 1] += in.longAt(i);
            }
          }
        }
      });
      for (int c = 0; c < chunks; c++) {
        fTotals[c + 1] += fTotals[c];
        iTotals[c + 1] += iTotals[c];
      }
      IntStream.range(0, chunks).parallel().forEach(c -> {
        double f = fTotals[c];
        long s = iTotals[c];
        for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk); i++) {
          boolean valid = in.valid(i);
          if (p.isFloat()) {
            double x = valid ? in.doubleAt(i) : 0;
            MemoryUtil.putLong(o + 8L * i, Double.doubleToRawLongBits(inclusive ? f + x : f));
            f += x;
          } else {
            long x = valid ? in.longAt(i) : 0;
            MemoryUtil.putLong(o + 8L * i, inclusive ? s + x : s);
            s += x;
          }
        }
      });
      return new HostColumn(CpuGather.load(a, column.vector().getName(), resultType(p), n, column.nullCount(), bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  private static DataType resultType(PhysicalType p) {
    return p.isFloat() ? DataType.FLOAT64 : DataType.INT64;
  }

  private static PhysicalType check(Exec exec, Column column) {
    TypeId id = column.type().id();
    PhysicalType p = PhysicalType.of(column.type());
    boolean numeric = id == TypeId.INT8 || id == TypeId.INT16 || id == TypeId.INT32 || id == TypeId.INT64
        || p.isFloat();
    if (!numeric) {
      throw new UserException("a prefix sum needs an integer or float column, not " + column.type());
    }
    if (id == TypeId.INT64 && column.rowCount() > column.nullCount()) {
      // exact bound: |running sum| <= rows * max|x|; beyond 2^63 a wrap is possible
      long min = (Long) Reduce.reduce(exec, column, Reduction.MIN).value();
      long max = (Long) Reduce.reduce(exec, column, Reduction.MAX).value();
      double bound = Math.max(Math.abs((double) min), Math.abs((double) max)) * column.rowCount();
      if (bound >= 0x1p63) {
        throw new NotSupportedException("a prefix sum of these INT64 values could overflow 64 bits (values up to "
            + Math.max(Math.abs((double) min), Math.abs((double) max)) + " over " + column.rowCount() + " rows)");
      }
    }
    return p;
  }
}
