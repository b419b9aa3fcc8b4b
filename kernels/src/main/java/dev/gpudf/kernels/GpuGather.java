package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.InternalException;
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
    List<DeviceColumn> srcs = new ArrayList<>(table.columnCount());
    for (int c = 0; c < table.columnCount(); c++) {
      srcs.add(table.column(c));
    }
    List<DeviceColumn> out;
    try (DeviceBuffer bad = exec.allocateZeroed(8)) {
      out = columns(exec, srcs, map, n, nullable, bad, table.rowCount());
    }
    return new DeviceTable(exec.gpu(), table.names(), out, n);
  }

  /**
   * The rows {@code map[0..n)} of {@code src}; an index outside it sets {@code bad}, which the
   * caller checks. The caller owns the result.
   */
  static DeviceColumn column(Exec exec, DeviceColumn src, DeviceBuffer map, int n, DeviceBuffer bad) {
    return column(exec, src, map, n, false, bad);
  }

  /** {@link #column(Exec, DeviceColumn, DeviceBuffer, int, DeviceBuffer)} where, with {@code nullable}, -1 gives a null. */
  static DeviceColumn column(Exec exec, DeviceColumn src, DeviceBuffer map, int n, boolean nullable, DeviceBuffer bad) {
    return columns(exec, List.of(src), map, n, nullable, bad, -1).get(0);
  }

  /**
   * A join's output: the rows {@code leftMap[0..n)} of {@code left}, then {@code rightMap[0..n)}
   * of {@code right}, where with {@code leftHoles} or {@code rightHoles} the index -1 gives that
   * side's row of nulls; both sides in one wait. The caller owns the columns.
   */
  static List<DeviceColumn> pairs(Exec exec, DeviceTable left, DeviceBuffer leftMap, boolean leftHoles,
      DeviceTable right, DeviceBuffer rightMap, boolean rightHoles, int n) {
    List<Source> srcs = new ArrayList<>(left.columnCount() + right.columnCount());
    for (int c = 0; c < left.columnCount(); c++) {
      srcs.add(new Source(left.column(c), leftMap, leftHoles));
    }
    for (int c = 0; c < right.columnCount(); c++) {
      srcs.add(new Source(right.column(c), rightMap, rightHoles));
    }
    try (DeviceBuffer bad = exec.allocateZeroed(8)) {
      return gather(exec, srcs, n, bad).orThrow(() -> new InternalException("join maps hold an index outside [0, "
          + left.rowCount() + ") or [0, " + right.rowCount() + ")"));
    }
  }

  /**
   * The rows {@code map[0..n)} of each of {@code srcs}, waiting for the device once for them all
   * (for the string columns' sizes and every null count together) instead of once per column.
   * An index outside a column sets {@code bad}; with {@code checkRows} >= 0 that is refused here
   * as a {@link UserException} naming [0, checkRows), else the caller checks it. The caller owns
   * the result.
   */
  static List<DeviceColumn> columns(Exec exec, List<DeviceColumn> srcs, DeviceBuffer map, int n, boolean nullable,
      DeviceBuffer bad, long checkRows) {
    List<Source> sources = new ArrayList<>(srcs.size());
    for (DeviceColumn c : srcs) {
      sources.add(new Source(c, map, nullable));
    }
    Gathered out = gather(exec, sources, n, bad);
    return checkRows < 0 ? out.columns()
        : out.orThrow(() -> new UserException("gather map holds an index outside [0, " + checkRows + ")"));
  }

  /** A column to gather, by its own map; with {@code nullable} the index -1 gives a null. */
  private record Source(DeviceColumn column, DeviceBuffer map, boolean nullable) {}

  /**
   * The rows {@code map[0..n)} of each source by its map, in one wait; an index outside a column
   * sets {@code bad} (read after that wait, so checking it costs the caller no second one). The
   * caller owns the result.
   */
  private static Gathered gather(Exec exec, List<Source> sources, int n, DeviceBuffer bad) {
    int k = sources.size();
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    List<DeviceBuffer> owned = new ArrayList<>();
    DeviceBuffer[] data = new DeviceBuffer[k];
    DeviceBuffer[] offsets = new DeviceBuffer[k];
    DeviceBuffer[] validity = new DeviceBuffer[k];
    // per column its valid rows, then per column its gathered string bytes, then the bad flag
    long[] waited;
    try (DeviceBuffer counts = exec.allocateZeroed(8L * (2 * k + 1))) {
      Descriptors fused = new Descriptors(exec, n, bad);
      SmallStrings small = n <= SMALL_GATHER_ROWS ? new SmallStrings(exec, n, bad) : null;
      for (int c = 0; c < k; c++) {
        DeviceColumn src = sources.get(c).column();
        DeviceBuffer map = sources.get(c).map();
        int orNull = sources.get(c).nullable() ? 1 : 0;
        long srcRows = src.rowCount();
        int width;
        if (src.type().id() == TypeId.BOOL) {
          width = 0;
          data[c] = exec.allocate(4 * ((n + 31L) / 32));
          owned.add(data[c]);
        } else if (src.type().id() == TypeId.STRING && small != null) {
          width = -1;
          // few rows: the int32 offsets at once, filled once their total is known
          offsets[c] = exec.allocate(4L * (n + 1));
          owned.add(offsets[c]);
          small.add(src.offsets(), srcRows, map, orNull, offsets[c], counts.address() + 8L * (k + c));
        } else if (src.type().id() == TypeId.STRING) {
          width = -1;
          // string lengths as int64 offsets, scanned; narrowed and filled once their total is known
          offsets[c] = exec.allocate(8L * (n + 1));
          owned.add(offsets[c]);
          KernelLaunch.launch("gather_string_lengths_kernel", grid, exec.stream(), src.offsets(), srcRows, map, (long) n,
              offsets[c], orNull, bad);
          DeviceScan.scanAsync(exec, PhysicalType.I64, offsets[c], null, n, offsets[c], false, counts, 8L * (k + c));
          exec.copy(offsets[c], 8L * n, counts, 8L * (k + c), 8);
        } else {
          width = src.type().byteWidth();
          data[c] = exec.allocate((long) n * width);
          owned.add(data[c]);
        }
        if (src.validity() != null || orNull != 0) {
          validity[c] = exec.allocate(4 * ((n + 31L) / 32));
          owned.add(validity[c]);
        }
        if (width >= 0 || validity[c] != null) {
          fused.add(map, orNull, width >= 0 ? src.data() : null, data[c], src.validity(), validity[c],
              counts.address() + 8L * c, srcRows, width);
        }
      }
      fused.launch();
      if (small != null) {
        small.launch();
      }
      exec.copy(counts, 16L * k, bad, 0, 8);
      waited = exec.readLongs(counts, 2 * k + 1);
      for (int c = 0; c < k; c++) {
        if (offsets[c] != null && waited[k + c] > Integer.MAX_VALUE) {
          throw new UserException("gathered strings hold " + waited[k + c] + " bytes, more than a column's 2 GiB limit");
        }
      }
      for (int c = 0; c < k; c++) {
        if (offsets[c] != null) {
          DeviceColumn src = sources.get(c).column();
          DeviceBuffer map = sources.get(c).map();
          long total = waited[k + c];
          if (small == null) {
            DeviceBuffer wide = offsets[c];
            offsets[c] = exec.allocate(4L * (n + 1));
            owned.add(offsets[c]);
            KernelLaunch.launch("narrow_offsets_kernel", KernelLaunch.gridFor(exec.stream().device(), n + 1L),
                exec.stream(), wide, n + 1L, offsets[c]);
            owned.remove(wide);
            wide.close();
          }
          data[c] = exec.allocate(total);
          owned.add(data[c]);
          if (small != null) {
            small.addChars(src, map, offsets[c], data[c]);
          } else {
            // a warp per 32 rows, its lanes copying the rows' bytes side by side
            KernelLaunch.launch("gather_string_chars_kernel", KernelLaunch.gridFor(exec.stream().device(), n),
                exec.stream(), src.offsets(), src.data(), (long) src.rowCount(), map, (long) n, offsets[c], data[c]);
          }
        }
      }
      if (small != null) {
        small.launchChars();
      }
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
    List<DeviceColumn> out = new ArrayList<>(k);
    for (int c = 0; c < k; c++) {
      int nulls = validity[c] == null ? 0 : n - (int) waited[c];
      out.add(new DeviceColumn(sources.get(c).column().type(), n, nulls, data[c], offsets[c], validity[c]));
    }
    return new Gathered(out, waited[2 * k] != 0);
  }

  /** Gathered columns, and whether a map held an index outside its column (then their bytes are not to be used). */
  private record Gathered(List<DeviceColumn> columns, boolean bad) {
    /** The columns, or, when an index was bad, none: they are closed and {@code error} is thrown. */
    List<DeviceColumn> orThrow(java.util.function.Supplier<RuntimeException> error) {
      if (bad) {
        columns.forEach(DeviceColumn::close);
        throw error.get();
      }
      return columns;
    }
  }

  /**
   * Most rows of a gather whose string offsets a block per column writes in one launch ({@link
   * SmallStrings}): eight of its steps of 1024 threads times 4 rows, about the time of the four
   * launches a scan over the whole grid takes.
   */
  static final int SMALL_GATHER_ROWS = 1 << 15;
  /** Threads of a {@code gather_string_offsets_kernel} block: {@code kStringThreads} in {@code gather.cu}. */
  private static final int STRING_THREADS = 1024;
  /** String columns one {@code gather_string_offsets_kernel} launch takes: {@code kGatherStrings} in {@code gather.cu}. */
  static final int STRINGS_PER_LAUNCH = 16;
  /** Bytes of one column's {@code GatherString} in {@code gather.cu}. */
  static final int STRING_BYTES = 48;
  /** Bytes of one column's {@code GatherChars} in {@code gather.cu}. */
  static final int CHARS_BYTES = 48;

  /**
   * The offsets of a gather's string columns where it has at most {@link #SMALL_GATHER_ROWS} rows,
   * described for {@code gather_string_offsets_kernel}: a block per column computes the
   * lengths, scans them and writes int32 offsets and their total, in one launch for up to {@link
   * #STRINGS_PER_LAUNCH} columns (TPC-H q2 gathers its supplier strings through joins of a few
   * thousand rows, each column in four to six launches and two copies otherwise); once their
   * totals are known and their bytes allocated, {@code gather_strings_chars_kernel} copies the
   * bytes of as many columns in one launch.
   */
  private static final class SmallStrings {
    private final Exec exec;
    private final int n;
    private final DeviceBuffer bad;
    private final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(STRINGS_PER_LAUNCH * STRING_BYTES)
        .order(java.nio.ByteOrder.nativeOrder());
    private final java.nio.ByteBuffer chars = java.nio.ByteBuffer.allocate(STRINGS_PER_LAUNCH * CHARS_BYTES)
        .order(java.nio.ByteOrder.nativeOrder());
    private int count;
    private int charsCount;

    SmallStrings(Exec exec, int n, DeviceBuffer bad) {
      this.exec = exec;
      this.n = n;
      this.bad = bad;
    }

    /** One string column: its source offsets and rows, its map, where its offsets and their total go. */
    void add(DeviceBuffer srcOffsets, long srcRows, DeviceBuffer map, int nullable, DeviceBuffer dstOffsets, long total) {
      int at = count * STRING_BYTES;
      bytes.putLong(at, srcOffsets.address());
      bytes.putLong(at + 8, srcRows);
      bytes.putLong(at + 16, map.address());
      bytes.putLong(at + 24, dstOffsets.address());
      bytes.putLong(at + 32, total);
      bytes.putInt(at + 40, nullable);
      bytes.putInt(at + 44, 0);
      if (++count == STRINGS_PER_LAUNCH) {
        launch();
      }
    }

    /** One string column's bytes to copy from {@code src} by {@code map}, to {@code dst} at {@code dstOffsets}. */
    void addChars(DeviceColumn src, DeviceBuffer map, DeviceBuffer dstOffsets, DeviceBuffer dst) {
      int at = charsCount * CHARS_BYTES;
      chars.putLong(at, src.offsets().address());
      chars.putLong(at + 8, src.data() == null ? 0 : src.data().address());
      chars.putLong(at + 16, src.rowCount());
      chars.putLong(at + 24, map.address());
      chars.putLong(at + 32, dstOffsets.address());
      chars.putLong(at + 40, dst.address());
      if (++charsCount == STRINGS_PER_LAUNCH) {
        launchChars();
      }
    }

    /** Launches the byte copies added since the last launch, a warp per string. */
    void launchChars() {
      if (charsCount > 0 && n > 0) {
        KernelLaunch.launch("gather_strings_chars_kernel", KernelLaunch.gridFor(exec.stream().device(), 32L * n * charsCount),
            exec.stream(), chars.clear(), charsCount, (long) n);
      }
      charsCount = 0;
    }

    /** Launches the columns added since the last launch, a block each (even for no rows: offset 0 and total 0). */
    void launch() {
      if (count > 0) {
        KernelLaunch.launch("gather_string_offsets_kernel", count, STRING_THREADS, exec.stream(), bytes.clear(), (long) n,
            bad);
      }
      count = 0;
    }
  }

  /** Columns one {@code gather_columns_kernel} launch takes: {@code kGatherColumns} in {@code gather.cu}. */
  static final int COLUMNS_PER_LAUNCH = 16;
  /** Bytes of one column's {@code GatherColumn} in {@code gather.cu}. */
  static final int DESCRIPTOR_BYTES = 56;

  /**
   * The fixed-width values, BOOL bitmaps and validity of a gather's columns, described for
   * {@code gather_columns_kernel} and launched {@link #COLUMNS_PER_LAUNCH} columns at a time: one
   * launch reads each row id once for all of them and counts their valid rows.
   */
  private static final class Descriptors {
    private final Exec exec;
    private final int n;
    private final DeviceBuffer bad;
    private final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(COLUMNS_PER_LAUNCH * DESCRIPTOR_BYTES)
        .order(java.nio.ByteOrder.nativeOrder());
    /** The map and nullability the columns since the last launch share. */
    private DeviceBuffer map;
    private int nullable;
    private int count;

    Descriptors(Exec exec, int n, DeviceBuffer bad) {
      this.exec = exec;
      this.n = n;
      this.bad = bad;
    }

    /**
     * One column gathered by {@code map}: {@code width} 1 to 16 bytes of values, 0 a BOOL bitmap,
     * -1 validity only; null buffers are none. A column with another map or nullability than
     * the ones before it starts a launch of its own.
     */
    void add(DeviceBuffer map, int nullable, DeviceBuffer src, DeviceBuffer dst, DeviceBuffer srcValid,
        DeviceBuffer dstValid, long validCount, long srcRows, int width) {
      if (count > 0 && (map != this.map || nullable != this.nullable)) {
        launch();
      }
      this.map = map;
      this.nullable = nullable;
      int at = count * DESCRIPTOR_BYTES;
      bytes.putLong(at, address(src));
      bytes.putLong(at + 8, address(dst));
      bytes.putLong(at + 16, address(srcValid));
      bytes.putLong(at + 24, address(dstValid));
      bytes.putLong(at + 32, dstValid == null ? 0 : validCount);
      bytes.putLong(at + 40, srcRows);
      bytes.putInt(at + 48, width);
      bytes.putInt(at + 52, 0);
      if (++count == COLUMNS_PER_LAUNCH) {
        launch();
      }
    }

    /** Launches the columns added since the last launch, if any rows and columns are left. */
    void launch() {
      if (count > 0 && n > 0) {
        KernelLaunch.launch("gather_columns_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(),
            bytes.clear(), count, map, (long) n, nullable, bad);
      }
      count = 0;
    }

    private static long address(DeviceBuffer b) {
      return b == null ? 0 : b.address();
    }
  }
}
