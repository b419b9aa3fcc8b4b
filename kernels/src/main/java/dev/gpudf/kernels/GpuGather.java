package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;

/**
 * Gathers device columns by an int32 row map ({@code gather.cu}); the shared last step of filter,
 * scatter, slice-free reordering and sort. Out-of-range indices raise {@link UserException} and
 * leave nothing allocated.
 */
final class GpuGather {
  private GpuGather() {}

  /** The rows {@code map[0..n)} of {@code table}; the caller owns the result. */
  static DeviceTable table(Exec exec, DeviceTable table, DeviceBuffer map, int n) {
    return table(exec, table, map, n, false);
  }

  /**
   * The rows {@code map[0..n)} of {@code table}, where with {@code nullable} the index -1 gives a
   * row of nulls (an outer join's missing side); the caller owns the result.
   */
  static DeviceTable table(Exec exec, DeviceTable table, DeviceBuffer map, int n, boolean nullable) {
    List<DeviceColumn> out = new ArrayList<>();
    try (DeviceBuffer bad = exec.allocateZeroed(8)) {
      for (int i = 0; i < table.columnCount(); i++) {
        out.add(column(exec, table.column(i), map, n, nullable, bad));
      }
      if (exec.readLongs(bad, 1)[0] != 0) {
        throw new UserException("gather map holds an index outside [0, " + table.rowCount() + ")");
      }
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
    return new DeviceTable(exec.gpu(), table.names(), out, n);
  }

  static DeviceColumn column(Exec exec, DeviceColumn src, DeviceBuffer map, int n, DeviceBuffer bad) {
    return column(exec, src, map, n, false, bad);
  }

  /** {@link #column(Exec, DeviceColumn, DeviceBuffer, int, DeviceBuffer)} where, with {@code nullable}, -1 gives a null. */
  static DeviceColumn column(Exec exec, DeviceColumn src, DeviceBuffer map, int n, boolean nullable,
      DeviceBuffer bad) {
    int orNull = nullable ? 1 : 0;
    long srcRows = src.rowCount();
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    List<DeviceBuffer> owned = new ArrayList<>(3);
    try {
      DeviceBuffer data;
      DeviceBuffer offsets = null;
      if (src.type().id() == TypeId.BOOL) {
        data = bits(exec, src.data(), srcRows, map, n, orNull, bad, owned);
      } else if (src.type().id() == TypeId.STRING) {
        DeviceBuffer wide = exec.allocate(8L * (n + 1));
        owned.add(wide);
        KernelLaunch.launch("gather_string_lengths_kernel", grid, exec.stream(), src.offsets(), srcRows, map, (long) n,
            wide, orNull, bad);
        long total = DeviceScan.scan(exec, PhysicalType.I64, wide, null, n, wide, false, true);
        if (total > Integer.MAX_VALUE) {
          throw new UserException("gathered strings hold " + total + " bytes, more than a column's 2 GiB limit");
        }
        offsets = exec.allocate(4L * (n + 1));
        owned.add(offsets);
        KernelLaunch.launch("narrow_offsets_kernel", KernelLaunch.gridFor(exec.stream().device(), n + 1L), exec.stream(),
            wide, n + 1L, offsets);
        data = exec.allocate(total);
        owned.add(data);
        // short strings a thread each, long ones a warp each (its lanes copy bytes side by side)
        KernelLaunch.launch(total < SHORT_STRING_BYTES * n ? "gather_string_chars_thread_kernel" : "gather_string_chars_kernel",
            grid, exec.stream(), src.offsets(), src.data(), srcRows, map, (long) n, offsets, data);
        owned.remove(wide);
        wide.close();
      } else {
        int width = src.type().byteWidth();
        data = exec.allocate((long) n * width);
        owned.add(data);
        KernelLaunch.launch("gather_w" + width + "_kernel", grid, exec.stream(), src.data(), srcRows, map, (long) n,
            data, orNull, bad);
      }
      DeviceBuffer validity = null;
      int nulls = 0;
      if (src.validity() != null || nullable) {
        validity = bits(exec, src.validity(), srcRows, map, n, orNull, bad, owned);
        nulls = n - (int) Bitmaps.countSet(exec.gpu(), validity, n, exec.stream());
      }
      return new DeviceColumn(src.type(), n, nulls, data, offsets, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /** Mean gathered string length under which a thread copies a string alone. */
  static final long SHORT_STRING_BYTES = 24;

  private static DeviceBuffer bits(Exec exec, DeviceBuffer src, long srcRows, DeviceBuffer map, int n, int nullable,
      DeviceBuffer bad, List<DeviceBuffer> owned) {
    long words = (n + 31L) / 32;
    DeviceBuffer out = exec.allocate(4 * words);
    owned.add(out);
    KernelLaunch.launch("gather_bits_kernel", KernelLaunch.gridFor(exec.stream().device(), words), exec.stream(), src,
        srcRows, map, (long) n, out, nullable, bad);
    return out;
  }
}
