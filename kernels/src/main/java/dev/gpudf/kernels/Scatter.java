package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;

/**
 * Scatter: a copy of {@code target} whose row {@code indices[j]} is replaced by row {@code j} of
 * {@code source}. When an index repeats, the last source row wins, as in a sequential loop. Done
 * as a gather over [target; source], so strings and bitmaps need no special path.
 */
public final class Scatter {
  private Scatter() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceTable scatter(Exec exec, DeviceTable source, DeviceColumn indices, DeviceTable target) {
    check(source, indices, target);
    int n = target.rowCount();
    try (DeviceTable both = Concat.concat(exec, target, source);
        DeviceBuffer map = exec.allocate(4L * n);
        DeviceBuffer bad = exec.allocateZeroed(8)) {
      if (n > 0) {
        KernelLaunch.launch("iota_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(), map, (long) n, 0);
      }
      if (indices.rowCount() > 0) {
        KernelLaunch.launch("scatter_map_kernel", KernelLaunch.gridFor(exec.stream().device(), indices.rowCount()),
            exec.stream(), indices.data(), (long) indices.rowCount(), n, map, (long) n, bad);
      }
      if (exec.readLongs(bad, 1)[0] != 0) {
        throw outOfRange(n);
      }
      return GpuGather.table(exec, both, map, n);
    }
  }

  /** On the CPU; the caller owns the result. */
  public static HostTable scatter(Exec exec, HostTable source, HostColumn indices, HostTable target) {
    check(source, indices, target);
    int n = target.rowCount();
    int[] idx = Gather.toArray(indices);
    int[] map = new int[n];
    for (int i = 0; i < n; i++) {
      map[i] = i;
    }
    for (int j = 0; j < idx.length; j++) {
      if (idx[j] < 0 || idx[j] >= n) {
        throw outOfRange(n);
      }
      map[idx[j]] = n + j;
    }
    try (HostTable both = Concat.concat(exec, target, source)) {
      return CpuGather.table(exec.allocator(), both, map);
    }
  }

  private static void check(Table<?> source, Column indices, Table<?> target) {
    Gather.checkMap(indices);
    if (indices.rowCount() != source.rowCount()) {
      throw new UserException(indices.rowCount() + " scatter indices for " + source.rowCount() + " source rows");
    }
    if (!source.types().equals(target.types())) {
      throw new UserException("cannot scatter " + source.types() + " into " + target.types());
    }
  }

  private static UserException outOfRange(int n) {
    return new UserException("scatter index outside the target's [0, " + n + ")");
  }
}
