package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import java.util.ArrayList;
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
  private final List<HostColumn> keys;
  private final List<CpuReduce.HostRows> rows = new ArrayList<>();
  private final List<PhysicalType> types = new ArrayList<>();

  HostKeys(List<HostColumn> keys) {
    this.keys = keys;
    for (HostColumn k : keys) {
      PhysicalType p = PhysicalType.of(k.type());
      types.add(p);
      rows.add(p == PhysicalType.STRING || p == PhysicalType.BITS ? null : new CpuReduce.HostRows(k.vector(), p, k.nullCount() > 0));
    }
  }

  /** True when any key of row {@code i} is NULL. */
  boolean anyNull(int i) {
    for (HostColumn k : keys) {
      if (k.nullCount() > 0 && k.vector().isNull(i)) {
        return true;
      }
    }
    return false;
  }

  long hash(int i) {
    long h = 0x9E3779B97F4A7C15L;
    for (int c = 0; c < keys.size(); c++) {
      h = (h ^ cell(c, i)) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    return h;
  }

  private long cell(int c, int i) {
    FieldVector v = keys.get(c).vector();
    if (keys.get(c).nullCount() > 0 && v.isNull(i)) {
      return 0x5bd1e995L;
    }
    return switch (types.get(c)) {
      case STRING -> {
        long off = v.getOffsetBuffer().memoryAddress();
        long chars = v.getDataBuffer().memoryAddress();
        int s = MemoryUtil.getInt(off + 4L * i);
        int e = MemoryUtil.getInt(off + 4L * i + 4);
        long h = 1;
        for (int b = s; b < e; b++) {
          h = 31 * h + MemoryUtil.getByte(chars + b);
        }
        yield h;
      }
      case BITS -> HostBitmaps.isSet(v.getDataBuffer().memoryAddress(), i) ? 1 : 2;
      case D128 -> rows.get(c).longAt(i) * 31 + rows.get(c).highAt(i);
      case F32, F64 -> {
        double x = rows.get(c).doubleAt(i);
        yield Double.isNaN(x) ? 0x7FF8000000000000L : Double.doubleToLongBits(x == 0 ? 0.0 : x);
      }
      default -> rows.get(c).longAt(i);
    };
  }

  /**
   * Whether row {@code i} here and row {@code j} of {@code other} have equal keys; with
   * {@code nullsEqual} two NULLs are equal (grouping), else a NULL equals nothing (joins).
   */
  boolean matches(int i, HostKeys other, int j, boolean nullsEqual) {
    for (int c = 0; c < keys.size(); c++) {
      boolean ni = keys.get(c).nullCount() > 0 && keys.get(c).vector().isNull(i);
      boolean nj = other.keys.get(c).nullCount() > 0 && other.keys.get(c).vector().isNull(j);
      if (ni || nj) {
        if (!nullsEqual || ni != nj) {
          return false;
        }
        continue;
      }
      boolean eq = switch (types.get(c)) {
        case STRING -> {
          FieldVector a = keys.get(c).vector();
          FieldVector b = other.keys.get(c).vector();
          long oa = a.getOffsetBuffer().memoryAddress();
          long ob = b.getOffsetBuffer().memoryAddress();
          int sa = MemoryUtil.getInt(oa + 4L * i);
          int sb = MemoryUtil.getInt(ob + 4L * j);
          yield CpuEval.compareBytes(a.getDataBuffer().memoryAddress() + sa, MemoryUtil.getInt(oa + 4L * i + 4) - sa,
              b.getDataBuffer().memoryAddress() + sb, MemoryUtil.getInt(ob + 4L * j + 4) - sb) == 0;
        }
        case D128 -> rows.get(c).longAt(i) == other.rows.get(c).longAt(j)
            && rows.get(c).highAt(i) == other.rows.get(c).highAt(j);
        default -> cell(c, i) == other.cell(c, j);
      };
      if (!eq) {
        return false;
      }
    }
    return true;
  }
}
