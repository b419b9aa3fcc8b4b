package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.List;
import org.apache.arrow.vector.IntVector;

/**
 * Stable multi-column sort, argsort and top-N ({@code ORDER BY ... LIMIT n}) of a table, every
 * key of any gpudf type, each ascending or descending with nulls first or last (see
 * {@link SortKey} for NaN and -0.0). The GPU sorts by radix passes ({@link GpuSort}); the CPU
 * twin by a parallel stable merge sort ({@link CpuSort}).
 */
public final class Sort {
  private Sort() {}

  /** The stable sorting permutation, as an INT32 column; the caller owns it. */
  public static DeviceColumn argsort(Exec exec, DeviceTable table, List<SortKey> keys) {
    check(table, keys);
    DeviceBuffer perm = GpuSort.argsort(exec, table, keys);
    return new DeviceColumn(DataType.INT32, table.rowCount(), 0, perm, null, null);
  }

  /** The table sorted; the caller owns it. */
  public static DeviceTable sort(Exec exec, DeviceTable table, List<SortKey> keys) {
    check(table, keys);
    if (table.columnCount() == 1 && keys.size() == 1) {
      DeviceColumn lone = GpuSort.sortLoneColumn(exec, table.column(0), keys.get(0));
      if (lone != null) {
        return new DeviceTable(exec.gpu(), table.names(), List.of(lone), table.rowCount());
      }
    }
    try (DeviceBuffer perm = GpuSort.argsort(exec, table, keys)) {
      return GpuGather.table(exec, table, perm, table.rowCount());
    }
  }

  /** The first {@code limit} rows in sorted order, without a full sort when the limit is small. */
  public static DeviceTable topN(Exec exec, DeviceTable table, List<SortKey> keys, int limit) {
    check(table, keys);
    checkLimit(limit);
    if (limit >= table.rowCount() / 2 || limit == 0) {
      try (DeviceTable sorted = sort(exec, table, keys)) {
        return Slice.slice(exec, sorted, 0, Math.min(limit, table.rowCount()));
      }
    }
    return GpuSort.topN(exec, table, keys, limit);
  }

  /** CPU twin of {@link #argsort(Exec, DeviceTable, List)}. */
  public static HostColumn argsort(Exec exec, HostTable table, List<SortKey> keys) {
    check(table, keys);
    int[] perm = CpuSort.argsort(exec::checkpoint, table, keys);
    IntVector v = new IntVector("row", exec.allocator());
    v.allocateNew(perm.length);
    for (int i = 0; i < perm.length; i++) {
      v.set(i, perm[i]);
    }
    v.setValueCount(perm.length);
    return new HostColumn(v);
  }

  /** CPU twin of {@link #sort(Exec, DeviceTable, List)}. */
  public static HostTable sort(Exec exec, HostTable table, List<SortKey> keys) {
    check(table, keys);
    return CpuGather.table(exec.allocator(), table, CpuSort.argsort(exec::checkpoint, table, keys));
  }

  /** CPU twin of {@link #topN(Exec, DeviceTable, List, int)}: bounded heaps per chunk, then a merge. */
  public static HostTable topN(Exec exec, HostTable table, List<SortKey> keys, int limit) {
    check(table, keys);
    checkLimit(limit);
    return CpuGather.table(exec.allocator(), table, CpuSort.topN(table, keys, limit));
  }

  private static void check(Table<?> table, List<SortKey> keys) {
    if (keys.isEmpty()) {
      throw new UserException("a sort needs at least one key");
    }
    for (SortKey k : keys) {
      if (k.column() < 0 || k.column() >= table.columnCount()) {
        throw new UserException("sort key column " + k.column() + " is not in " + table.names());
      }
    }
  }

  private static void checkLimit(int limit) {
    if (limit < 0) {
      throw new UserException("a top-N limit cannot be negative: " + limit);
    }
  }
}
