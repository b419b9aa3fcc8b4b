package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.stream.IntStream;
import org.apache.arrow.memory.util.MemoryUtil;

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

  /**
   * On the CPU: the rows of {@code out} where {@code condition} over {@code table} holds (the two
   * tables have the same rows; {@code out} may hold fewer columns), a conjunction evaluated
   * conjunct by conjunct ({@link ConjunctFilter}), any other condition as a mask. The caller owns
   * the result; the tables are borrowed.
   */
  public static HostTable filter(Exec exec, HostTable table, Expr condition, HostTable out) {
    if (out.rowCount() != table.rowCount()) {
      throw new UserException("the filtered table has " + out.rowCount() + " rows, the condition's " + table.rowCount());
    }
    return CpuGather.table(exec.allocator(), out, keptRows(exec, table, condition));
  }

  /** On the CPU: the rows {@code rows} of {@code table} (from {@link #keptRows(Exec, HostTable, Expr)}); the caller owns the result. */
  public static HostTable filter(Exec exec, HostTable table, int[] rows) {
    return CpuGather.table(exec.allocator(), table, rows);
  }

  /**
   * On the CPU: ids, in ascending order, of the rows of {@code table} where {@code condition}
   * holds (a conjunction conjunct by conjunct, as {@link #filter(Exec, HostTable, Expr, HostTable)}
   * does); the table is borrowed.
   */
  public static int[] keptRows(Exec exec, HostTable table, Expr condition) {
    int[] rows = ConjunctFilter.keptRows(exec, table, condition);
    if (rows == null) {
      try (HostColumn mask = Evaluate.evaluate(exec, table, condition)) {
        check(table, mask);
        rows = keptRows(mask);
      }
    }
    return rows;
  }

  /**
   * Ids of the rows a BOOL host column keeps, in order: counted, then written, in parallel chunks,
   * a word of 64 rows at a time (a row's mask bit and its validity bit, anded).
   */
  static int[] keptRows(HostColumn mask) {
    int n = mask.rowCount();
    long data = mask.vector().getDataBuffer().memoryAddress();
    long validity = mask.nullCount() > 0 ? mask.vector().getValidityBuffer().memoryAddress() : 0;
    // a multiple of 64: no word is split between chunks
    int chunk = 1 << 16;
    int chunks = (n + chunk - 1) / chunk;
    int[] counts = new int[chunks + 1];
    IntStream.range(0, chunks).parallel().forEach(c -> {
      int k = 0;
      int end = Math.min(n, (c + 1) * chunk);
      for (int w = c * chunk; w < end; w += 64) {
        k += Long.bitCount(keptWord(data, validity, w, end));
      }
      counts[c + 1] = k;
    });
    for (int c = 0; c < chunks; c++) {
      counts[c + 1] += counts[c];
    }
    int[] rows = new int[counts[chunks]];
    IntStream.range(0, chunks).parallel().forEach(c -> {
      int at = counts[c];
      int end = Math.min(n, (c + 1) * chunk);
      for (int w = c * chunk; w < end; w += 64) {
        for (long bits = keptWord(data, validity, w, end); bits != 0; bits &= bits - 1) {
          rows[at++] = w + Long.numberOfTrailingZeros(bits);
        }
      }
    });
    return rows;
  }

  /**
   * The kept bits of rows {@code w} .. {@code w + 63} ({@code w} a multiple of 64), none at or past
   * {@code end}. The last word is read a byte at a time: a bitmap may end there (one from a file
   * holds the bytes its rows need, no more).
   */
  private static long keptWord(long data, long validity, int w, int end) {
    if (end - w >= 64) {
      long bits = MemoryUtil.getLong(data + w / 8);
      return validity == 0 ? bits : bits & MemoryUtil.getLong(validity + w / 8);
    }
    long bits = 0;
    for (int b = 0; b < (end - w + 7) / 8; b++) {
      long v = validity == 0 ? 0xFF : MemoryUtil.getByte(validity + w / 8 + b) & 0xFF;
      bits |= ((MemoryUtil.getByte(data + w / 8 + b) & 0xFF) & v) << (8 * b);
    }
    // the last byte's bits past the rows may hold anything
    return bits & ((1L << (end - w)) - 1);
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
