package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Window.Function;
import dev.gpudf.kernels.Window.Kind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU path of {@link Window} ({@code window.cu}): head flags where partitions and peer
 * groups start, scanned into run ids, give each row its bounds; then every function is one or a
 * few kernels over all rows, whatever its frame (prefix sums for SUM, COUNT and AVG, a sparse
 * table for MIN and MAX, a gather for the value functions). Results equal the CPU twin's, floats
 * up to the order of summation.
 */
final class GpuWindow {
  private GpuWindow() {}

  /** Whether {@code f} runs here: everything but RANGE frames with an offset (the CPU twin's binary search). */
  static boolean supports(Function f) {
    return !f.frame().rangeOffsets();
  }

  static List<DeviceColumn> compute(Exec exec, DeviceTable sorted, int[] partition, List<SortKey> order,
      List<Function> functions) {
    for (Function f : functions) {
      if (!supports(f)) {
        throw new NotSupportedException("a RANGE frame with an offset runs on the CPU only: " + f.frame());
      }
    }
    List<DeviceColumn> out = new ArrayList<>();
    try (Runs runs = Runs.of(exec, sorted, partition, order)) {
      for (Function f : functions) {
        out.add(compute(exec, sorted, f, runs));
      }
      return out;
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
  }

  /**
   * Each row's partition and peer group: {@code pid}/{@code qid} number the runs from 1 (int64 a
   * row), {@code pstarts}/{@code qstarts} hold each run's first row and then the row count, and
   * {@code phead} flags partition starts (int32 a row).
   */
  private record Runs(int rows, DeviceBuffer phead, DeviceBuffer pid, DeviceBuffer pstarts, DeviceBuffer qid,
      DeviceBuffer qstarts) implements AutoCloseable {
    static Runs of(Exec exec, DeviceTable t, int[] partition, List<SortKey> order) {
      int n = t.rowCount();
      List<DeviceColumn> part = new ArrayList<>();
      for (int k : partition) {
        part.add(t.column(k));
      }
      List<DeviceColumn> peers = new ArrayList<>();
      for (SortKey k : order) {
        peers.add(t.column(k.column()));
      }
      List<DeviceBuffer> owned = new ArrayList<>();
      try (DeviceBuffer partKeys = GpuKeys.describe(exec, part); DeviceBuffer orderKeys = GpuKeys.describe(exec, peers);
          DeviceBuffer qhead = exec.allocate(4L * Math.max(1, n))) {
        DeviceBuffer phead = owned(owned, exec.allocate(4L * Math.max(1, n)));
        KernelLaunch.launch("window_heads_kernel", grid(exec, n), exec.stream(), partKeys, part.size(), orderKeys,
            peers.size(), (long) n, phead, qhead);
        DeviceBuffer pid = owned(owned, exec.allocate(8L * Math.max(1, n)));
        DeviceBuffer pstarts = starts(exec, phead, pid, n, owned);
        DeviceBuffer qid = owned(owned, exec.allocate(8L * Math.max(1, n)));
        DeviceBuffer qstarts = starts(exec, qhead, qid, n, owned);
        return new Runs(n, phead, pid, pstarts, qid, qstarts);
      } catch (RuntimeException e) {
        owned.forEach(DeviceBuffer::close);
        throw e;
      }
    }

    /** Numbers the runs that {@code head} starts into {@code id} and returns their starts. */
    private static DeviceBuffer starts(Exec exec, DeviceBuffer head, DeviceBuffer id, int n, List<DeviceBuffer> owned) {
      long runs = DeviceScan.scan(exec, PhysicalType.I32, head, null, n, id, true, false);
      DeviceBuffer starts = owned(owned, exec.allocate(8L * (runs + 1)));
      if (n == 0) {
        exec.zero(starts, 0, 8);
      }
      KernelLaunch.launch("window_starts_kernel", grid(exec, n), exec.stream(), head, id, (long) n, starts);
      return starts;
    }

    @Override
    public void close() {
      for (DeviceBuffer b : List.of(phead, pid, pstarts, qid, qstarts)) {
        b.close();
      }
    }
  }

  private static DeviceBuffer owned(List<DeviceBuffer> owned, DeviceBuffer b) {
    owned.add(b);
    return b;
  }

  private static int grid(Exec exec, long work) {
    return KernelLaunch.gridFor(exec.stream().device(), work);
  }

  private static DeviceColumn compute(Exec exec, DeviceTable t, Function f, Runs r) {
    int n = t.rowCount();
    int rank = switch (f.kind()) {
      case ROW_NUMBER -> 0;
      case RANK -> 1;
      case DENSE_RANK -> 2;
      case NTILE -> 3;
      case PERCENT_RANK -> 4;
      case CUME_DIST -> 5;
      default -> -1;
    };
    if (rank >= 0) {
      DeviceBuffer out = exec.allocate(8L * Math.max(1, n));
      try {
        KernelLaunch.launch("window_rank_kernel", grid(exec, n), exec.stream(), rank, f.n(), (long) n, r.pid, r.pstarts,
            r.qid, r.qstarts, out);
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
      return new DeviceColumn(rank >= 4 ? DataType.FLOAT64 : DataType.INT64, n, 0, out, null, null);
    }
    try (DeviceBuffer lo = exec.allocate(4L * Math.max(1, n)); DeviceBuffer hi = exec.allocate(4L * Math.max(1, n))) {
      KernelLaunch.launch("window_frame_kernel", grid(exec, n), exec.stream(), f.frame().rows() ? 1 : 0,
          clamp(f.frame().lower(), n), clamp(f.frame().upper(), n), (long) n, r.pid, r.pstarts, r.qid, r.qstarts, lo, hi);
      return switch (f.kind()) {
        case LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE -> {
          int kind = switch (f.kind()) {
            case LAG -> 0;
            case LEAD -> 1;
            case FIRST_VALUE -> 2;
            case LAST_VALUE -> 3;
            default -> 4;
          };
          try (DeviceBuffer map = exec.allocate(4L * Math.max(1, n))) {
            KernelLaunch.launch("window_value_map_kernel", grid(exec, n), exec.stream(), kind, clamp(f.n(), n), (long) n,
                r.pid, r.pstarts, lo, hi, map);
            yield gathered(exec, t.column(f.arg()), map, n);
          }
        }
        case MIN, MAX -> extremes(exec, t.column(f.arg()), f.kind() == Kind.MAX, lo, hi, n);
        default -> sums(exec, t, f, r, lo, hi);
      };
    }
  }

  /** A frame offset (or LAG's) clamped to +-(rows + 1), which reaches as far, so the kernels' index arithmetic cannot overflow. */
  private static long clamp(long offset, int rows) {
    return offset == Window.UNBOUNDED ? offset : Math.max(-(rows + 1L), Math.min(rows + 1L, offset));
  }

  private static DeviceColumn gathered(Exec exec, DeviceColumn src, DeviceBuffer map, int n) {
    try (DeviceBuffer bad = exec.allocateZeroed(8)) {
      DeviceColumn c = GpuGather.column(exec, src, map, n, true, bad);
      if (exec.readLongs(bad, 1)[0] != 0) {
        c.close();
        throw new InternalException("a window's gather map left its table");
      }
      return c;
    }
  }

  /** MIN or MAX over every frame: a sparse table of the best row of each 2^k rows, then a gather. */
  private static DeviceColumn extremes(Exec exec, DeviceColumn arg, boolean max, DeviceBuffer lo, DeviceBuffer hi, int n) {
    long widest;
    try (DeviceBuffer w = exec.allocateZeroed(8)) {
      KernelLaunch.launch("window_widest_kernel", grid(exec, n), exec.stream(), lo, hi, (long) n, w);
      widest = Math.max(1, exec.readLongs(w, 1)[0]);
    }
    int levels = 64 - Long.numberOfLeadingZeros(widest);
    List<DeviceBuffer> table = new ArrayList<>();
    try (DeviceBuffer col = GpuKeys.describe(exec, List.of(arg)); DeviceBuffer map = exec.allocate(4L * Math.max(1, n))) {
      table.add(exec.allocate(4L * Math.max(1, n)));
      KernelLaunch.launch("window_iota_kernel", grid(exec, n), exec.stream(), (long) n, table.get(0));
      for (int k = 1; k < levels; k++) {
        DeviceBuffer next = exec.allocate(4L * Math.max(1, n));
        table.add(next);
        KernelLaunch.launch("window_best_level_kernel", grid(exec, n), exec.stream(), col, max ? 1 : 0, (long) n,
            1L << (k - 1), table.get(k - 1), next);
      }
      try (DeviceBuffer addresses = exec.upload(table.stream().mapToLong(DeviceBuffer::address).toArray())) {
        KernelLaunch.launch("window_best_query_kernel", grid(exec, n), exec.stream(), col, max ? 1 : 0, (long) n,
            addresses, lo, hi, map);
        return gathered(exec, arg, map, n);
      }
    } finally {
      table.forEach(DeviceBuffer::close);
    }
  }

  /** COUNT, COUNT(*), SUM, SUM0 and AVG from segmented prefix sums restarted at every partition start. */
  private static DeviceColumn sums(Exec exec, DeviceTable t, Function f, Runs r, DeviceBuffer lo, DeviceBuffer hi) {
    int n = t.rowCount();
    boolean countAll = f.kind() == Kind.COUNT_ALL;
    boolean countOnly = countAll || f.kind() == Kind.COUNT;
    DeviceColumn arg = countAll ? null : t.column(f.arg());
    DataType type = countOnly ? DataType.INT64 : arg.type();
    String input = countOnly ? "i8" : switch (type.id()) {
      case INT8 -> "i8";
      case INT16 -> "i16";
      case INT32 -> "i32";
      case INT64 -> "i64";
      case FLOAT32 -> "f32";
      case FLOAT64 -> "f64";
      case DECIMAL -> type.isDecimal64() ? "i64" : "d128";
      default -> throw new NotSupportedException(f.kind() + " over " + type + " in a window is not supported");
    };
    boolean floats = input.startsWith("f");
    boolean decimal = type.id() == TypeId.DECIMAL;
    if (decimal) {
      checkDecimalBound(exec, arg, f);
    }
    // accumulators: int64 for narrow integers and counts, int128 for INT64 and DECIMAL, float64 for floats
    String acc = floats ? "f64" : input.equals("i64") || decimal ? "i128" : "i64";
    int accBytes = acc.equals("i128") ? 16 : 8;
    long[] g = DeviceScan.grid(exec, n, 1);
    int blocks = (int) g[0];
    DataType result = switch (f.kind()) {
      case COUNT, COUNT_ALL -> DataType.INT64;
      case AVG -> DataType.FLOAT64;
      default -> floats ? DataType.FLOAT64 : decimal ? DataType.decimal(38, type.scale()) : DataType.INT64;
    };
    int kind = switch (f.kind()) {
      case COUNT, COUNT_ALL -> 0;
      case SUM -> 1;
      case SUM0 -> 2;
      default -> 3;
    };
    int outKind = result.id() == TypeId.DECIMAL ? 2 : result.id() == TypeId.FLOAT64 ? 1 : 0;
    boolean nullable = kind == 1 || kind == 3;
    List<DeviceBuffer> owned = new ArrayList<>(2);
    try (DeviceBuffer totals = exec.allocate(32L * blocks); DeviceBuffer sums = exec.allocate((long) accBytes * Math.max(1, n));
        DeviceBuffer counts = exec.allocate(8L * Math.max(1, n)); DeviceBuffer bad = exec.allocateZeroed(8)) {
      DeviceBuffer data = countOnly ? null : arg.data();
      DeviceBuffer validity = countAll ? null : arg.validity();
      if (n > 0) {
        KernelLaunch.launch("window_scan_totals_" + input + "_kernel", blocks, exec.stream(), data, validity, r.phead,
            (long) n, g[1], totals);
        KernelLaunch.launch("window_scan_carries_" + input + "_kernel", 1, exec.stream(), totals, blocks);
        KernelLaunch.launch("window_scan_apply_" + input + "_kernel", blocks, exec.stream(), data, validity, r.phead,
            (long) n, g[1], totals, sums, counts);
      }
      DeviceBuffer out = owned(owned, exec.allocate((long) result.byteWidth() * Math.max(1, n)));
      DeviceBuffer outValidity = nullable ? owned(owned, exec.allocate(4L * Math.max(1, (n + 31L) / 32))) : null;
      double unscale = decimal ? BigDecimal.ONE.scaleByPowerOfTen(type.scale()).doubleValue() : 1.0;
      KernelLaunch.launch("window_frame_sums_" + acc + "_kernel", grid(exec, (n + 31L) / 32), exec.stream(), kind, outKind,
          unscale, (long) n, r.pid, r.pstarts, lo, hi, sums, counts, out, outValidity, bad);
      if (exec.readLongs(bad, 1)[0] != 0) {
        throw new UserException(f.kind() + " in a window overflows " + (decimal ? "DECIMAL(38, " + type.scale() + ")"
            : "a 64-bit integer"));
      }
      int nulls = nullable ? n - (int) Bitmaps.countSet(exec.gpu(), outValidity, n, exec.stream()) : 0;
      return new DeviceColumn(result, n, nulls, out, null, outValidity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /**
   * Refuses DECIMAL values whose prefix sums could pass int128 (|value| times rows at 2^127):
   * the bound from the type's precision where it suffices, else from the column's extremes.
   */
  private static void checkDecimalBound(Exec exec, Column arg, Function f) {
    BigInteger limit = BigInteger.ONE.shiftLeft(127);
    BigInteger rows = BigInteger.valueOf(Math.max(1, arg.rowCount()));
    if (BigInteger.TEN.pow(arg.type().precision()).multiply(rows).compareTo(limit) < 0 || arg.rowCount() == arg.nullCount()) {
      return;
    }
    BigDecimal min = (BigDecimal) Reduce.reduce(exec, arg, Reduction.MIN).value();
    BigDecimal max = (BigDecimal) Reduce.reduce(exec, arg, Reduction.MAX).value();
    BigInteger largest = min.unscaledValue().abs().max(max.unscaledValue().abs());
    if (largest.multiply(rows).compareTo(limit) >= 0) {
      throw new NotSupportedException(f.kind() + " in a window over DECIMAL values up to " + largest + " (unscaled) in "
          + arg.rowCount() + " rows could overflow 128 bits on the GPU");
    }
  }
}
