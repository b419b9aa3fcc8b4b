package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.error.UserException;
import org.apache.arrow.vector.IntVector;

/**
 * Gather: the table's rows in the order of a row map, {@code out[i] = table[map[i]]}, every
 * column at once (strings included). The map is an INT32 column without nulls; an index outside
 * the table is a {@link UserException}, never garbage.
 */
public final class Gather {
  private Gather() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceTable gather(Exec exec, DeviceTable table, DeviceColumn map) {
    checkMap(map);
    return GpuGather.table(exec, table, map.data(), map.rowCount());
  }

  /** On the CPU; the caller owns the result. */
  public static HostTable gather(Exec exec, HostTable table, HostColumn map) {
    checkMap(map);
    return CpuGather.table(exec.allocator(), table, toArray(map));
  }

  static void checkMap(Column map) {
    if (!map.type().equals(DataType.INT32) || map.nullCount() > 0) {
      throw new UserException("a row map must be INT32 without nulls, not " + map.type()
          + (map.nullCount() > 0 ? " with " + map.nullCount() + " nulls" : ""));
    }
  }

  static int[] toArray(HostColumn map) {
    IntVector v = (IntVector) map.vector();
    int[] out = new int[map.rowCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = v.get(i);
    }
    return out;
  }
}
