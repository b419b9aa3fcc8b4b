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

  /**
   * The rows a filter keeps, counted, on either backend, for a caller that decides from their
   * number whether to compact a table to them ({@link #filter(Exec, Table, Selection)}) or to read
   * them in place (a grouping over the filter, {@link GroupBy#aggregateSelected}). On the CPU it
   * holds the kept rows' ids; on the GPU the BOOL mask (a reference of its own) and its per-block
   * counts, scanned, from which the ids are written only when a compaction needs them. Whoever
   * takes one closes it.
   */
  public static final class Selection implements AutoCloseable {
    private final int rowCount;
    private final int count;
    private final int[] hostRows;
    private final DeviceColumn mask;
    private final DeviceBuffer offsets;
    private final long[] grid;

    private Selection(int rowCount, int count, int[] hostRows, DeviceColumn mask, DeviceBuffer offsets, long[] grid) {
      this.rowCount = rowCount;
      this.count = count;
      this.hostRows = hostRows;
      this.mask = mask;
      this.offsets = offsets;
      this.grid = grid;
    }

    /** Rows of the table selected from. */
    public int rowCount() {
      return rowCount;
    }

    /** Rows kept. */
    public int count() {
      return count;
    }

    /** The kept rows' ids in ascending order, on the CPU; null on the GPU. */
    public int[] hostRows() {
      return hostRows;
    }

    /** The BOOL mask of the kept rows (null counts as false), on the GPU; null on the CPU. Borrowed. */
    public DeviceColumn mask() {
      return mask;
    }

    /** That this selects from {@code table}'s rows: a caller's bug otherwise. */
    void checkFits(Table<?> table) {
      if (table.rowCount() != rowCount || (hostRows == null) != (table instanceof DeviceTable)) {
        throw new dev.gpudf.columnar.error.InternalException("a selection of " + rowCount + (hostRows == null ? " device" : " host")
            + " rows applied to a table of " + table.rowCount());
      }
    }

    @Override
    public void close() {
      if (mask != null) {
        try (DeviceBuffer o = offsets) {
          mask.close();
        }
      }
    }
  }

  /** A selection of the {@code rows} (ascending ids, as {@link #keptRows(Exec, HostTable, Expr)} gives them) of a host table of {@code rowCount} rows. */
  public static Selection select(int[] rows, int rowCount) {
    return new Selection(rowCount, rows.length, rows, null, null, null);
  }

  /**
   * A selection of the rows where {@code mask} (a BOOL device column, borrowed; the selection
   * takes a reference of its own) holds: counted on the device, with one wait for the count.
   */
  public static Selection select(Exec exec, DeviceColumn mask) {
    checkBool(mask);
    int n = mask.rowCount();
    long[] g = DeviceScan.grid(exec, n, 32);
    DeviceBuffer offsets = exec.allocate(8L * (g[0] + 1));
    try {
      int kept = count(exec, mask.data(), mask.validity(), n, g, offsets);
      mask.retain();
      return new Selection(n, kept, null, mask, offsets, g);
    } catch (RuntimeException e) {
      offsets.close();
      throw e;
    }
  }

  /**
   * A selection of the rows of {@code table} (borrowed) where {@code condition} holds: the rows
   * are counted before the condition's one wait, which reads back their count with the
   * condition's errors and NULLs (a wait each before), unless the condition does not run as one
   * program ({@link Evaluate#evaluate(Exec, DeviceTable, Expr, Evaluate.Then)}). The caller closes
   * the selection.
   */
  public static Selection select(Exec exec, DeviceTable table, Expr condition) {
    int n = table.rowCount();
    long[] g = DeviceScan.grid(exec, n, 32);
    DeviceBuffer offsets = exec.allocate(8L * (g[0] + 1));
    try {
      long[] counted = {-1};
      Evaluate.Then count = new Evaluate.Then() {
        @Override
        public void queue(DeviceBuffer data, DeviceBuffer validity, int rows, DeviceBuffer results, long at) {
          if (rows > 0) {
            launchCount(exec, data, validity, rows, g, offsets);
            exec.copy(results, at, offsets, 8L * g[0], 8);
          }
        }

        @Override
        public void read(long value) {
          counted[0] = value;
        }
      };
      try (DeviceColumn mask = Evaluate.evaluate(exec, table, condition, count)) {
        checkBool(mask);
        int kept = counted[0] >= 0 ? (int) counted[0] : count(exec, mask.data(), mask.validity(), n, g, offsets);
        mask.retain();
        return new Selection(n, kept, null, mask, offsets, g);
      }
    } catch (RuntimeException e) {
      offsets.close();
      throw e;
    }
  }

  /** The rows of {@code table} that {@code kept} (of its rows) selects, on either backend; the caller owns the result. */
  public static Table<?> filter(Exec exec, Table<?> table, Selection kept) {
    kept.checkFits(table);
    if (kept.hostRows != null) {
      return filter(exec, (HostTable) table, kept.hostRows);
    }
    try (DeviceRows rows = keptRows(exec, kept.mask.data(), kept.mask.validity(), kept.rowCount, kept.grid, kept.offsets,
        kept.count)) {
      return GpuGather.table(exec, (DeviceTable) table, rows.rows(), rows.count());
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
    try (DeviceBuffer offsets = exec.allocate(8L * (g[0] + 1))) {
      return keptRows(exec, mask, validity, n, g, offsets, count(exec, mask, validity, n, g, offsets));
    }
  }

  /**
   * Counts the kept rows per block of grid {@code g} ({@link DeviceScan#grid}) into {@code offsets}
   * and scans them: block b's first id goes to offsets[b]; waits for and returns the total.
   */
  private static int count(Exec exec, DeviceBuffer mask, DeviceBuffer validity, int n, long[] g, DeviceBuffer offsets) {
    if (n == 0) {
      return 0;
    }
    launchCount(exec, mask, validity, n, g, offsets);
    return (int) exec.readLongs(offsets, 8L * g[0], 1)[0];
  }

  /** Queues {@link #count}'s work: the kept rows per block into {@code offsets}, scanned, the total last. */
  private static void launchCount(Exec exec, DeviceBuffer mask, DeviceBuffer validity, int n, long[] g,
      DeviceBuffer offsets) {
    int blocks = (int) g[0];
    KernelLaunch.launch("filter_count_kernel", blocks, exec.stream(), mask, validity, (long) n, g[1], offsets);
    KernelLaunch.launch("scan_offsets_i64_kernel", 1, exec.stream(), offsets, blocks);
  }

  /** The ids of the {@code kept} rows that {@link #count} counted into {@code offsets}; the caller closes them. */
  private static DeviceRows keptRows(Exec exec, DeviceBuffer mask, DeviceBuffer validity, int n, long[] g,
      DeviceBuffer offsets, int kept) {
    DeviceBuffer indices = exec.allocate(4L * kept);
    try {
      if (kept > 0) {
        KernelLaunch.launch("filter_indices_kernel", (int) g[0], exec.stream(), mask, validity, (long) n, g[1], offsets,
            indices);
      }
    } catch (RuntimeException e) {
      indices.close();
      throw e;
    }
    return new DeviceRows(indices, kept);
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
    checkBool(mask);
    if (mask.rowCount() != table.rowCount()) {
      throw new UserException("the mask has " + mask.rowCount() + " rows, the table " + table.rowCount());
    }
  }

  private static void checkBool(Column mask) {
    if (!mask.type().equals(DataType.BOOL)) {
      throw new UserException("a filter mask must be BOOL, not " + mask.type());
    }
  }
}
