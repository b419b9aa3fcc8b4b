package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.util.List;

/**
 * Drives {@code merge_sort.cu}: the stable sorting permutation of a table by comparing its rows
 * through every sort key, tiles sorted in shared memory then merged pairwise, one launch per
 * doubling of the run length. {@link GpuSort} picks it for few rows with keys that need many
 * radix passes; it orders rows exactly as the radix sort does.
 */
final class MergeSort {
  /** Rows per tile that one block sorts (merge_sort.cu's {@code kTile}). */
  static final int TILE = KernelLaunch.BLOCK * 8;

  private MergeSort() {}

  /** The stable sorting permutation of {@code table} by {@code keys}, as an owned int32 buffer. */
  static DeviceBuffer argsort(Exec exec, DeviceTable table, List<SortKey> keys) {
    int n = table.rowCount();
    DeviceBuffer in = exec.allocate(4L * Math.max(1, n));
    DeviceBuffer out = null;
    try (DeviceBuffer cols = describe(exec, table, keys)) {
      out = exec.allocate(4L * Math.max(1, n));
      if (n > 0) {
        KernelLaunch.launch("merge_sort_tiles_kernel", (n + TILE - 1) / TILE, exec.stream(), cols, keys.size(), null,
            (long) n, in);
      }
      for (long width = TILE; width < n; width *= 2) {
        KernelLaunch.launch("merge_sort_pass_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(), cols,
            keys.size(), in, (long) n, width, out);
        DeviceBuffer t = in;
        in = out;
        out = t;
      }
    } catch (RuntimeException e) {
      in.close();
      if (out != null) {
        out.close();
      }
      throw e;
    }
    out.close();
    return in;
  }

  /** The {@code SortCol} array of merge_sort.cu for {@code keys}; the caller closes it. */
  private static DeviceBuffer describe(Exec exec, DeviceTable table, List<SortKey> keys) {
    long[] words = new long[6 * Math.max(1, keys.size())];
    for (int k = 0; k < keys.size(); k++) {
      SortKey key = keys.get(k);
      DeviceColumn c = table.column(key.column());
      words[6 * k] = GpuKeys.kind(PhysicalType.of(c.type()));
      words[6 * k + 1] = GpuKeys.address(c.data());
      words[6 * k + 2] = GpuKeys.address(c.validity());
      words[6 * k + 3] = GpuKeys.address(c.offsets());
      words[6 * k + 4] = key.ascending() ? 0 : 1;
      words[6 * k + 5] = key.nullsFirst() ? 1 : 0;
    }
    return exec.upload(words);
  }
}
