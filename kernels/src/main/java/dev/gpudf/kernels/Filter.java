package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.stream.IntStream;

/**
 * Stream compaction: the rows of a table where a BOOL mask is true (null counts as false), all
 * columns at once, order kept. On the GPU the kept row ids come from {@code filter.cu} and the
 * columns from {@link GpuGather}.
 */
public final class Filter {
  private Filter() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceTable filter(Exec exec, DeviceTable table, DeviceColumn mask) {
    check(table, mask);
    try (DeviceRows kept = keptRows(exec, mask.data(), mask.validity(), table.rowCount())) {
      return GpuGather.table(exec, table, kept.rows(), kept.count());
    }
  }

  /** Row ids on the device, {@code count} of them; closing frees them. */
  record DeviceRows(DeviceBuffer rows, int count) implements AutoCloseable {
    @Override
    public void close() {
      rows.close();
    }
  }

  /**
   * Ids, in order, of the rows among {@code n} whose bit is set in {@code mask} and in
   * {@code validity} (null: all valid); the caller closes them.
   */
  static DeviceRows keptRows(Exec exec, DeviceBuffer mask, DeviceBuffer validity, int n) {
    long[] g = DeviceScan.grid(exec, n, 32);
    int blocks = (int) g[0];
    try (DeviceBuffer offsets = exec.allocate(8L * (blocks + 1))) {
      int kept = 0;
      if (n > 0) {
        KernelLaunch.launch("filter_count_kernel", blocks, exec.stream(), mask, validity, (long) n, g[1], offsets);
        KernelLaunch.launch("scan_offsets_i64_kernel", 1, exec.stream(), offsets, blocks);
        kept = (int) exec.readLongs(offsets, 8L * blocks, 1)[0];
      }
      DeviceBuffer indices = exec.allocate(4L * kept);
      try {
        if (kept > 0) {
          KernelLaunch.launch("filter_indices_kernel", blocks, exec.stream(), mask, validity, (long) n, g[1], offsets,
              indices);
        }
      } catch (RuntimeException e) {
        indices.close();
        throw e;
      }
      return new DeviceRows(indices, kept);
    }
  }

  /** On the CPU; the caller owns the result. */
  public static HostTable filter(Exec exec, HostTable table, HostColumn mask) {
    check(table, mask);
    return CpuGather.table(exec.allocator(), table, keptRows(mask));
  }

  /** Ids of the rows a BOOL host column keeps, in order: counted, then written, in parallel chunks. */
  static int[] keptRows(HostColumn mask) {
    int n = mask.rowCount();
    long data = mask.vector().getDataBuffer().memoryAddress();
    long validity = mask.nullCount() > 0 ? mask.vector().getValidityBuffer().memoryAddress() : 0;
    int chunk = 1 << 16;
    int chunks = (n + chunk - 1) / chunk;
    int[] counts = new int[chunks + 1];
    IntStream.range(0, chunks).parallel().forEach(c -> {
      int k = 0;
      for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk); i++) {
        k += keep(data, validity, i) ? 1 : 0;
      }
      counts[c + 1] = k;
    });
    for (int c = 0; c < chunks; c++) {
      counts[c + 1] += counts[c];
    }
    int[] rows = new int[counts[chunks]];
    IntStream.range(0, chunks).parallel().forEach(c -> {
      int at = counts[c];
      for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk); i++) {
        if (keep(data, validity, i)) {
          rows[at++] = i;
        }
      }
    });
    return rows;
  }

  private static boolean keep(long data, long validity, long i) {
    return HostBitmaps.isSet(data, i) && (validity == 0 || HostBitmaps.isSet(validity, i));
  }

  private static void check(Table<?> table, Column mask) {
    if (!mask.type().equals(DataType.BOOL)) {
      throw new UserException("a filter mask must be BOOL, not " + mask.type());
    }
    if (mask.rowCount() != table.rowCount()) {
      throw new UserException("the mask has " + mask.rowCount() + " rows, the table " + table.rowCount());
    }
  }
}
