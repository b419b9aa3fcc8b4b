package dev.gpudf.kernels;

import dev.gpudf.columnar.cuda.DeviceBuffer;

/**
 * Device-wide prefix sums over raw buffers, the building block of compaction and string
 * gathers: reduce-then-scan in three launches ({@code scan.cu}).
 */
final class DeviceScan {
  /** Most blocks whose totals one block can scan ({@code scan_offsets_*_kernel}). */
  static final int MAX_BLOCKS = 256 * 16;
  /** Most rows scanned by one block in one launch: 16 of its steps of 256 rows. */
  static final long ONE_LAUNCH_ROWS = 256 * 16;

  private DeviceScan() {}

  /** Blocks, and rows per block (a multiple of {@code align}), for {@code rows} rows. */
  static long[] grid(Exec exec, long rows, int align) {
    long blocks = Math.max(1, Math.min(Math.min(MAX_BLOCKS, exec.stream().device().multiprocessors() * 8L),
        (rows + KernelLaunch.BLOCK - 1) / KernelLaunch.BLOCK));
    long chunk = (rows + blocks - 1) / blocks;
    chunk = Math.max(align, (chunk + align - 1) / align * align);
    blocks = Math.max(1, (rows + chunk - 1) / chunk);
    return new long[] {blocks, chunk};
  }

  /**
   * Queues the scan of {@code rows} values of physical type {@code p} from {@code data} (nulls,
   * per {@code validity}, add nothing) into {@code out} (int64 for integers, float64 for floats),
   * inclusive or exclusive; the total (double bits for floats) goes to {@code totalTo} at byte
   * {@code totalAt} unless {@code totalTo} is null. {@code out} may be {@code data} for int64 and
   * float64 input. Nothing waits.
   */
  static void scanAsync(Exec exec, PhysicalType p, DeviceBuffer data, DeviceBuffer validity, long rows, DeviceBuffer out,
      boolean inclusive, DeviceBuffer totalTo, long totalAt) {
    long[] g = grid(exec, rows, 1);
    int blocks = (int) g[0];
    String acc = p.isFloat() ? "f64" : "i64";
    try (DeviceBuffer offsets = exec.allocate(8L * (blocks + 1))) {
      if (rows == 0) {
        exec.zero(offsets, 8L * blocks, 8);
      } else if (rows <= ONE_LAUNCH_ROWS) {
        // one block walks every row: one launch instead of three, which is most of a small scan's cost
        KernelLaunch.launch("scan_apply_" + p.suffix() + "_kernel", 1, exec.stream(), data, validity, rows, rows, null,
            out, inclusive ? 1 : 0, offsets.address() + 8L * blocks);
      } else {
        KernelLaunch.launch("scan_partials_" + p.suffix() + "_kernel", blocks, exec.stream(), data, validity, rows, g[1],
            offsets);
        KernelLaunch.launch("scan_offsets_" + acc + "_kernel", 1, exec.stream(), offsets, blocks);
        KernelLaunch.launch("scan_apply_" + p.suffix() + "_kernel", blocks, exec.stream(), data, validity, rows, g[1],
            offsets, out, inclusive ? 1 : 0, null);
      }
      if (totalTo != null) {
        exec.copy(totalTo, totalAt, offsets, 8L * blocks, 8);
      }
    }
  }

  /**
   * {@link #scanAsync} that waits and returns the total; with {@code totalAtEnd} the total is also
   * stored at {@code out[rows]}, which must exist.
   */
  static long scan(Exec exec, PhysicalType p, DeviceBuffer data, DeviceBuffer validity, long rows, DeviceBuffer out,
      boolean inclusive, boolean totalAtEnd) {
    try (DeviceBuffer total = exec.allocate(8)) {
      scanAsync(exec, p, data, validity, rows, out, inclusive, total, 0);
      if (totalAtEnd) {
        exec.copy(out, 8L * rows, total, 0, 8);
      }
      return exec.readLongs(total, 1)[0];
    }
  }
}
