package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import java.util.List;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * Rows of a host table seen through its key columns: a hash of the keys and key equality, within
 * a table (GROUP BY, where NULL keys equal each other) or across two tables with key columns of
 * the same types (joins, where they do not). Floats compare as numbers: -0.0 equals 0.0 and
 * NaNs equal each other.
 */
final class HostKeys {
  // per key column, read once: rows are hashed and compared millions of times
  private final int count;
  private final PhysicalType[] types;
  private final CpuReduce.HostRows[] rows;
  /** Validity bitmap address, 0 when the column has no nulls. */
  private final long[] validity;
  /** Data address (for strings, their bytes) and offsets address (strings only). */
  private final long[] data;
  private final long[] offsets;

  HostKeys(List<HostColumn> keys) {
    count = keys.size();
    types = new PhysicalType[count];
    rows = new CpuReduce.HostRows[count];
    validity = new long[count];
    data = new long[count];
    offsets = new long[count];
    for (int c = 0; c < count; c++) {
      HostColumn k = keys.get(c);
      FieldVector v = k.vector();
      PhysicalType p = PhysicalType.of(k.type());
      types[c] = p;
      rows[c] = p == PhysicalType.STRING || p == PhysicalType.BITS ? null : new CpuReduce.HostRows(v, p, k.nullCount() > 0);
      validity[c] = k.nullCount() > 0 ? v.getValidityBuffer().memoryAddress() : 0;
      data[c] = v.getDataBuffer().memoryAddress();
      offsets[c] = p == PhysicalType.STRING ? v.getOffsetBuffer().memoryAddress() : 0;
    }
  }

  private boolean isNull(int c, int i) {
    return validity[c] != 0 && !HostBitmaps.isSet(validity[c], i);
  }

  /** True when any key of row {@code i} is NULL. */
  boolean anyNull(int i) {
    for (int c = 0; c < count; c++) {
      if (isNull(c, i)) {
        return true;
      }
    }
    return false;
  }

  long hash(int i) {
    long h = 0x9E3779B97F4A7C15L;
    for (int c = 0; c < count; c++) {
      h = (h ^ cell(c, i)) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    return h;
  }

  private long cell(int c, int i) {
    if (isNull(c, i)) {
      return 0x5bd1e995L;
    }
    return switch (types[c]) {
      case STRING -> {
        int s = MemoryUtil.getInt(offsets[c] + 4L * i);
        int e = MemoryUtil.getInt(offsets[c] + 4L * i + 4);
        long chars = data[c] + s;
        int n = e - s;
        // eight bytes a step, then the tail; only this class's two sides of a join compare hashes
        long h = n;
        int b = 0;
        for (; b + 8 <= n; b += 8) {
          h = (h ^ MemoryUtil.getLong(chars + b)) * 0x9E3779B97F4A7C15L;
          h ^= h >>> 29;
        }
        for (; b < n; b++) {
          h = 31 * h + MemoryUtil.getByte(chars + b);
        }
        yield h;
      }
      case BITS -> HostBitmaps.isSet(data[c], i) ? 1 : 2;
      case D128 -> rows[c].longAt(i) * 31 + rows[c].highAt(i);
      case F32, F64 -> {
        double x = rows[c].doubleAt(i);
        yield Double.isNaN(x) ? 0x7FF8000000000000L : Double.doubleToLongBits(x == 0 ? 0.0 : x);
      }
      default -> rows[c].longAt(i);
    };
  }

  /**
   * Whether row {@code i} here and row {@code j} of {@code other} have equal keys; with
   * {@code nullsEqual} two NULLs are equal (grouping), else a NULL equals nothing (joins).
   */
  boolean matches(int i, HostKeys other, int j, boolean nullsEqual) {
    for (int c = 0; c < count; c++) {
      boolean ni = isNull(c, i);
      boolean nj = other.isNull(c, j);
      if (ni || nj) {
        if (!nullsEqual || ni != nj) {
          return false;
        }
        continue;
      }
      boolean eq = switch (types[c]) {
        case STRING -> {
          long oa = offsets[c];
          long ob = other.offsets[c];
          int sa = MemoryUtil.getInt(oa + 4L * i);
          int sb = MemoryUtil.getInt(ob + 4L * j);
          yield bytesEqual(data[c] + sa, MemoryUtil.getInt(oa + 4L * i + 4) - sa,
              other.data[c] + sb, MemoryUtil.getInt(ob + 4L * j + 4) - sb);
        }
        case D128 -> rows[c].longAt(i) == other.rows[c].longAt(j) && rows[c].highAt(i) == other.rows[c].highAt(j);
        default -> cell(c, i) == other.cell(c, j);
      };
      if (!eq) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether two byte strings are equal: lengths first, then eight bytes a step (equality needs
   * no order, so no byte of a differing word is looked at; a grouping compares every row's keys).
   */
  private static boolean bytesEqual(long a, int la, long b, int lb) {
    if (la != lb) {
      return false;
    }
    int i = 0;
    for (; i + 8 <= la; i += 8) {
      if (MemoryUtil.getLong(a + i) != MemoryUtil.getLong(b + i)) {
        return false;
      }
    }
    for (; i < la; i++) {
      if (MemoryUtil.getByte(a + i) != MemoryUtil.getByte(b + i)) {
        return false;
      }
    }
    return true;
  }
}
