package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import java.util.stream.IntStream;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * The CPU twin of {@link GpuReduce}: the same partial layouts, one per chunk of
 * {@value #CHUNK} rows, chunks reduced in parallel and returned in row order.
 */
final class CpuReduce {
  static final int CHUNK = 1 << 16;

  private CpuReduce() {}

  static long[] partials(HostColumn column, Reduce.Partial partial, double scale) {
    FieldVector v = column.vector();
    int rows = column.rowCount();
    PhysicalType p = PhysicalType.of(column.type());
    HostRows in = new HostRows(v, p, column.nullCount() > 0);
    int chunks = (rows + CHUNK - 1) / CHUNK;
    long[] out = new long[chunks * partial.longs];
    IntStream.range(0, chunks).parallel().forEach(c -> {
      int from = c * CHUNK;
      int to = Math.min(rows, from + CHUNK);
      reduceChunk(in, p, partial, scale, from, to, out, c * partial.longs);
    });
    return out;
  }

  private static void reduceChunk(HostRows in, PhysicalType p, Reduce.Partial partial, double scale, int from, int to,
      long[] out, int at) {
    switch (partial) {
      case SUM_INT -> {
        long lo = 0;
        long hi = 0;
        long count = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            long x = in.longAt(i);
            long old = lo;
            lo += x;
            hi += (x < 0 ? -1 : 0) + (Long.compareUnsigned(lo, old) < 0 ? 1 : 0);
            count++;
          }
        }
        out[at] = lo;
        out[at + 1] = hi;
        out[at + 2] = count;
      }
      case SUM_D128 -> {
        long count = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            Int192.add(out, at, in.longAt(i), in.highAt(i));
            count++;
          }
        }
        out[at + 3] = count;
      }
      case SUM_FLOAT -> {
        double s = 0;
        long count = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            s += in.doubleAt(i);
            count++;
          }
        }
        out[at] = Double.doubleToRawLongBits(s);
        out[at + 1] = count;
      }
      case MINMAX_INT -> {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        long count = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            long x = in.longAt(i);
            min = Math.min(min, x);
            max = Math.max(max, x);
            count++;
          }
        }
        out[at] = min;
        out[at + 1] = max;
        out[at + 2] = count;
      }
      case MINMAX_FLOAT -> {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        long count = 0;
        long nans = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            double x = in.doubleAt(i);
            if (Double.isNaN(x)) {
              nans++;
            } else {
              min = Math.min(min, x);
              max = Math.max(max, x);
            }
            count++;
          }
        }
        out[at] = Double.doubleToRawLongBits(min);
        out[at + 1] = Double.doubleToRawLongBits(max);
        out[at + 2] = count;
        out[at + 3] = nans;
      }
      case MINMAX_D128 -> {
        long minLo = -1;
        long minHi = Long.MAX_VALUE;
        long maxLo = 0;
        long maxHi = Long.MIN_VALUE;
        long count = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            long lo = in.longAt(i);
            long hi = in.highAt(i);
            if (hi < minHi || (hi == minHi && Long.compareUnsigned(lo, minLo) < 0)) {
              minLo = lo;
              minHi = hi;
            }
            if (hi > maxHi || (hi == maxHi && Long.compareUnsigned(lo, maxLo) > 0)) {
              maxLo = lo;
              maxHi = hi;
            }
            count++;
          }
        }
        out[at] = minLo;
        out[at + 1] = minHi;
        out[at + 2] = maxLo;
        out[at + 3] = maxHi;
        out[at + 4] = count;
      }
      case MOMENTS -> {
        double n = 0;
        double mean = 0;
        double m2 = 0;
        for (int i = from; i < to; i++) {
          if (in.valid(i)) {
            double x = (p == PhysicalType.D128 ? in.d128AsDouble(i) : p.isFloat() ? in.doubleAt(i) : in.longAt(i)) * scale;
            n += 1;
            double d = x - mean;
            mean += d / n;
            m2 += d * (x - mean);
          }
        }
        out[at] = Double.doubleToRawLongBits(n);
        out[at + 1] = Double.doubleToRawLongBits(mean);
        out[at + 2] = Double.doubleToRawLongBits(m2);
      }
    }
  }

  /** Reads rows of an Arrow vector by physical type, straight from its buffers (bounds known). */
  static final class HostRows {
    private final long data;
    private final long validity;
    private final PhysicalType type;
    private final int hostWidth;

    HostRows(FieldVector v, PhysicalType type, boolean hasNulls) {
      this.type = type;
      this.data = v.getDataBuffer().memoryAddress();
      this.validity = hasNulls ? v.getValidityBuffer().memoryAddress() : 0;
      // DECIMAL is 16 bytes in Arrow whatever its precision; DECIMAL64 reads the low word
      this.hostWidth = v.getField().getType().getTypeID() == org.apache.arrow.vector.types.pojo.ArrowType.ArrowTypeID.Decimal
          ? 16 : type.deviceWidth;
    }

    boolean valid(long i) {
      return validity == 0 || HostBitmaps.isSet(validity, i);
    }

    /**
     * Whether every row is valid and {@link #longAt} reads a whole long at {@link #address} + row
     * times {@link #width}: the rows a loop may read directly, with no call a row (the client
     * compiler, which runs a statement from the command line, does not inline {@link #longAt}).
     */
    boolean plainLongs() {
      return validity == 0 && (type == PhysicalType.I64 || type == PhysicalType.D128);
    }

    long address() {
      return data;
    }

    int width() {
      return hostWidth;
    }

    long longAt(long i) {
      long a = data + i * hostWidth;
      return switch (type) {
        case I8 -> MemoryUtil.getByte(a);
        case I16 -> MemoryUtil.getShort(a);
        case I32 -> MemoryUtil.getInt(a);
        default -> MemoryUtil.getLong(a);
      };
    }

    long highAt(long i) {
      return MemoryUtil.getLong(data + i * hostWidth + 8);
    }

    double doubleAt(long i) {
      return type == PhysicalType.F32 ? Float.intBitsToFloat(MemoryUtil.getInt(data + 4 * i))
          : Double.longBitsToDouble(MemoryUtil.getLong(data + 8 * i));
    }

    double d128AsDouble(long i) {
      long lo = longAt(i);
      return highAt(i) * 18446744073709551616.0 + (lo >= 0 ? (double) lo : (double) (lo >>> 1) * 2.0 + (lo & 1));
    }
  }
}
