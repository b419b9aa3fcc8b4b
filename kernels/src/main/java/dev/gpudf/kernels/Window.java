package dev.gpudf.kernels;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.NotSupportedException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;

/**
 * Window functions over a table already sorted by its partition keys, then its order keys:
 * partitions and peer groups (rows equal on the order keys) are found by comparing neighbouring
 * rows, then every function is computed per row in constant or logarithmic work, whatever its
 * frame: ranks from the partition's and peer group's bounds, frame sums and counts from prefix
 * sums (restarted at each partition, so a running frame subtracts nothing), MIN and MAX from a
 * sparse table of the frame's widths, and value functions (LAG, LEAD, FIRST_VALUE, ...) as a
 * gather of one row per row.
 *
 * <p>The GPU runs the same steps in {@code window.cu} ({@link GpuWindow}), except RANGE frames
 * with an offset ({@link #runsOnGpu}), which a GPU session computes here on a host copy.
 */
public final class Window {
  private Window() {}

  /** What a window function computes. */
  public enum Kind {
    ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE,
    COUNT_ALL, COUNT, SUM, SUM0, AVG, MIN, MAX
  }

  /** A frame bound without limit: {@link #lower} or {@link #upper} of an UNBOUNDED bound. */
  public static final long UNBOUNDED = Long.MAX_VALUE;

  /**
   * A frame: ROWS counts rows from the current one, RANGE counts in values of the one order key
   * (UNBOUNDED and CURRENT ROW, 0, with any order keys). {@code lower} is how far back it starts
   * (rows or values preceding; negative for following; {@link #UNBOUNDED}), {@code upper} how far
   * ahead it ends (following; negative for preceding; {@link #UNBOUNDED}).
   */
  public record Frame(boolean rows, long lower, long upper) {
    boolean rangeOffsets() {
      return !rows && ((lower != 0 && lower != UNBOUNDED) || (upper != 0 && upper != UNBOUNDED));
    }
  }

  /** One function: {@code arg} is its column (-1 for none), {@code n} its number (NTILE's buckets, LAG's offset, NTH_VALUE's n). */
  public record Function(Kind kind, int arg, long n, Frame frame) {
    public Function {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(frame, "frame");
    }
  }

  /** Whether the GPU computes {@code f}: all but RANGE frames with an offset. */
  public static boolean runsOnGpu(Function f) {
    return GpuWindow.supports(f);
  }

  /**
   * {@link #compute(Exec, HostTable, int[], List, List)} on the GPU, for functions that
   * {@link #runsOnGpu}; the caller owns the columns.
   */
  public static List<DeviceColumn> compute(Exec exec, DeviceTable sorted, int[] partition, List<SortKey> order,
      List<Function> functions) {
    return GpuWindow.compute(exec, sorted, partition, order, functions);
  }

  /**
   * One column per function over {@code sorted}, whose rows are ordered by {@code partition}
   * then {@code order} keys (a RANGE frame with an offset needs exactly one, of a number or DATE
   * type). Ranks and counts are INT64, PERCENT_RANK, CUME_DIST and AVG
   * FLOAT64, SUM of integers INT64 and of decimals DECIMAL(38, s), of floats FLOAT64; the value
   * functions keep their argument's type. The caller owns the columns.
   */
  public static List<HostColumn> compute(Exec exec, HostTable sorted, int[] partition, List<SortKey> order,
      List<Function> functions) {
    int n = sorted.rowCount();
    int[] partStart = new int[n];
    int[] partEnd = new int[n];
    int[] peerStart = new int[n];
    int[] peerEnd = new int[n];
    int[] peerSeq = new int[n];
    bounds(sorted, partition, null, partStart, partEnd, null);
    bounds(sorted, concat(partition, order.stream().mapToInt(SortKey::column).toArray()), partStart, peerStart, peerEnd,
        peerSeq);
    Range range = functions.stream().anyMatch(f -> f.frame().rangeOffsets()) ? Range.of(sorted, order, partStart, partEnd) : null;
    List<HostColumn> out = new ArrayList<>();
    try {
      for (Function f : functions) {
        out.add(compute(exec, sorted, f, partStart, partEnd, peerStart, peerEnd, peerSeq, range));
      }
      return out;
    } catch (RuntimeException e) {
      out.forEach(HostColumn::close);
      throw e;
    }
  }

  private static int[] concat(int[] a, int[] b) {
    int[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /**
   * Start and end (inclusive) of each row's run of rows equal on {@code keys}; a run also starts
   * where {@code within} (the partition starts) does, and {@code seq} numbers the runs.
   */
  private static void bounds(HostTable t, int[] keys, int[] within, int[] start, int[] end, int[] seq) {
    int n = t.rowCount();
    FieldVector[] cols = new FieldVector[keys.length];
    for (int k = 0; k < keys.length; k++) {
      cols[k] = t.column(keys[k]).vector();
    }
    int s = 0;
    int runs = 0;
    org.apache.arrow.memory.util.ArrowBufPointer x = new org.apache.arrow.memory.util.ArrowBufPointer();
    org.apache.arrow.memory.util.ArrowBufPointer y = new org.apache.arrow.memory.util.ArrowBufPointer();
    for (int i = 0; i < n; i++) {
      boolean starts = i == 0 || (within != null && within[i] == i);
      for (int k = 0; k < keys.length && !starts; k++) {
        starts = !sameValue(cols[k], i, i - 1, x, y);
      }
      if (starts) {
        s = i;
        runs++;
      }
      start[i] = s;
      if (seq != null) {
        seq[i] = runs;
      }
    }
    for (int i = n - 1; i >= 0; i--) {
      end[i] = i == n - 1 || start[i + 1] == i + 1 ? i : end[i + 1];
    }
  }

  /**
   * Whether rows {@code i} and {@code j} of {@code v} hold the same value (NULLs alike): bytes
   * compared in place, no boxing; floats as numbers, as the sort orders them (-0.0 equals 0.0, NaN NaN).
   */
  private static boolean sameValue(FieldVector v, int i, int j, org.apache.arrow.memory.util.ArrowBufPointer x,
      org.apache.arrow.memory.util.ArrowBufPointer y) {
    boolean nullI = v.isNull(i);
    boolean nullJ = v.isNull(j);
    if (nullI || nullJ) {
      return nullI == nullJ;
    }
    if (v instanceof Float8Vector || v instanceof org.apache.arrow.vector.Float4Vector) {
      double a = ((Number) v.getObject(i)).doubleValue();
      double b = ((Number) v.getObject(j)).doubleValue();
      return a == b || (a != a && b != b);
    }
    if (v instanceof org.apache.arrow.vector.BaseVariableWidthVector w) {
      return w.getDataPointer(i, x).equals(w.getDataPointer(j, y));
    }
    if (v instanceof org.apache.arrow.vector.BaseFixedWidthVector f && !(v instanceof org.apache.arrow.vector.BitVector)) {
      return f.getDataPointer(i, x).equals(f.getDataPointer(j, y));
    }
    return Objects.equals(v.getObject(i), v.getObject(j));
  }

  private static HostColumn compute(Exec exec, HostTable t, Function f, int[] ps, int[] pe, int[] qs, int[] qe, int[] qseq,
      Range range) {
    int n = t.rowCount();
    BufferAllocator a = exec.allocator();
    switch (f.kind()) {
      case ROW_NUMBER, RANK, DENSE_RANK, NTILE -> {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
          v[i] = switch (f.kind()) {
            case ROW_NUMBER -> i - ps[i] + 1;
            case RANK -> qs[i] - ps[i] + 1;
            case DENSE_RANK -> qseq[i] - qseq[ps[i]] + 1;
            default -> ntile(i - ps[i], pe[i] - ps[i] + 1, f.n());
          };
        }
        return longs(a, v, null);
      }
      case PERCENT_RANK, CUME_DIST -> {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
          long size = pe[i] - ps[i] + 1;
          v[i] = f.kind() == Kind.PERCENT_RANK ? (size == 1 ? 0.0 : (double) (qs[i] - ps[i]) / (size - 1))
              : (double) (qe[i] - ps[i] + 1) / size;
        }
        return doubles(a, v, null);
      }
      default -> { }
    }
    int[] lo = new int[n];
    int[] hi = new int[n];
    frames(f.frame(), ps, pe, qs, qe, range, lo, hi);
    return switch (f.kind()) {
      case LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE -> {
        int[] map = new int[n];
        for (int i = 0; i < n; i++) {
          long at = switch (f.kind()) {
            case LAG -> i - f.n();
            case LEAD -> i + f.n();
            case FIRST_VALUE -> lo[i];
            case LAST_VALUE -> hi[i];
            default -> lo[i] + f.n() - 1;
          };
          boolean inside = f.kind() == Kind.LAG || f.kind() == Kind.LEAD ? at >= ps[i] && at <= pe[i]
              : lo[i] <= hi[i] && at >= lo[i] && at <= hi[i];
          map[i] = inside ? (int) at : -1;
        }
        yield gathered(a, t, f.arg(), map);
      }
      case COUNT_ALL -> {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
          v[i] = Math.max(0, hi[i] - lo[i] + 1);
        }
        yield longs(a, v, null);
      }
      case MIN, MAX -> extremes(a, t, f, lo, hi);
      default -> sums(a, t, f, ps, lo, hi);
    };
  }

  /** NTILE: row {@code j} of a partition of {@code size} rows, in {@code buckets} buckets whose sizes differ by at most one, larger first. */
  private static long ntile(long j, long size, long buckets) {
    long q = size / buckets;
    long r = size % buckets;
    return j < r * (q + 1) ? j / (q + 1) + 1 : r + (j - r * (q + 1)) / Math.max(1, q) + 1;
  }

  /** Each row's frame as rows {@code lo .. hi} of its partition (empty where lo > hi). */
  private static void frames(Frame f, int[] ps, int[] pe, int[] qs, int[] qe, Range range, int[] lo, int[] hi) {
    for (int i = 0; i < ps.length; i++) {
      long l;
      long h;
      if (f.rows()) {
        l = f.lower() == UNBOUNDED ? ps[i] : Math.max(ps[i], i - f.lower());
        h = f.upper() == UNBOUNDED ? pe[i] : Math.min(pe[i], i + f.upper());
      } else {
        l = f.lower() == UNBOUNDED ? ps[i] : f.lower() == 0 || range.isNull(i) ? qs[i] : range.first(i, -f.lower());
        h = f.upper() == UNBOUNDED ? pe[i] : f.upper() == 0 || range.isNull(i) ? qe[i] : range.last(i, f.upper());
      }
      if (l > h) {
        l = i;
        h = i - 1;
      }
      lo[i] = (int) l;
      hi[i] = (int) h;
    }
  }

  /**
   * The one order key of RANGE frames with offsets, as numbers (a DATE as its day number), with
   * each partition's rows of non-NULL keys; NULL keys are their own peers, at one end.
   */
  private record Range(double[] keys, boolean[] nulls, boolean descending, int[] firstValued, int[] lastValued) {
    static Range of(HostTable t, List<SortKey> order, int[] ps, int[] pe) {
      if (order.size() != 1) {
        throw new NotSupportedException("a RANGE frame with an offset needs exactly one ORDER BY key, not " + order.size());
      }
      SortKey key = order.get(0);
      FieldVector v = t.column(key.column()).vector();
      DataType type = t.column(key.column()).type();
      boolean number = isInteger(type) || type.id() == TypeId.FLOAT32 || type.id() == TypeId.FLOAT64
          || type.id() == TypeId.DECIMAL || type.id() == TypeId.DATE;
      if (!number) {
        throw new NotSupportedException("a RANGE frame with an offset over a " + type + " key is not supported");
      }
      int n = t.rowCount();
      double[] keys = new double[n];
      boolean[] nulls = new boolean[n];
      for (int i = 0; i < n; i++) {
        Object x = v.getObject(i);
        nulls[i] = x == null;
        keys[i] = x == null ? 0 : type.id() == TypeId.DATE ? ((org.apache.arrow.vector.DateDayVector) v).get(i)
            : ((Number) x).doubleValue();
      }
      int[] first = new int[n];
      int[] last = new int[n];
      for (int i = 0; i < n; i++) {
        if (i == ps[i]) {
          int f = ps[i];
          while (f <= pe[i] && nulls[f]) {
            f++;
          }
          int l = pe[i];
          while (l >= ps[i] && nulls[l]) {
            l--;
          }
          for (int k = ps[i]; k <= pe[i]; k++) {
            first[k] = f;
            last[k] = l;
          }
        }
      }
      return new Range(keys, nulls, !key.ascending(), first, last);
    }

    boolean isNull(int row) {
      return nulls[row];
    }

    /** The first row of {@code row}'s partition whose key is at least {@code delta} past its own (in sort order). */
    int first(int row, long delta) {
      return rowsBefore(row, delta, false);
    }

    /** The last row of {@code row}'s partition whose key is at most {@code delta} past its own (in sort order). */
    int last(int row, long delta) {
      return rowsBefore(row, delta, true) - 1;
    }

    /**
     * By binary search over the partition's non-NULL keys: the index of the first one past
     * {@code row}'s key moved by {@code delta} in sort order ({@code through}: past it or equal).
     */
    private int rowsBefore(int row, long delta, boolean through) {
      double bound = descending ? keys[row] - delta : keys[row] + delta;
      int lo = firstValued[row];
      int hi = lastValued[row] + 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        double k = descending ? -keys[mid] : keys[mid];
        double b = descending ? -bound : bound;
        if (through ? k <= b : k < b) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }
  }

  /** COUNT, SUM, SUM0 and AVG from prefix sums restarted at every partition start. */
  private static HostColumn sums(BufferAllocator a, HostTable t, Function f, int[] ps, int[] lo, int[] hi) {
    int n = t.rowCount();
    FieldVector v = t.column(f.arg()).vector();
    DataType type = t.column(f.arg()).type();
    // COUNT needs only whether each value is NULL, so it takes a column of any type
    boolean countOnly = f.kind() == Kind.COUNT;
    boolean floats = !countOnly && (type.id() == TypeId.FLOAT32 || type.id() == TypeId.FLOAT64);
    boolean decimal = !countOnly && type.id() == TypeId.DECIMAL;
    if (!countOnly && !floats && !decimal && !isInteger(type)) {
      throw new NotSupportedException(f.kind() + " over " + type + " in a window is not supported");
    }
    // count[i] / sum[i]: over rows ps[i] .. i
    long[] count = new long[n];
    double[] fsum = floats ? new double[n] : null;
    BigDecimal[] dsum = decimal ? new BigDecimal[n] : null;
    long[] lsum = !floats && !decimal ? new long[n] : null;
    for (int i = 0; i < n; i++) {
      boolean first = ps[i] == i;
      Object x = v.getObject(i);
      count[i] = (first ? 0 : count[i - 1]) + (x == null ? 0 : 1);
      if (floats) {
        fsum[i] = (first ? 0 : fsum[i - 1]) + (x == null ? 0 : ((Number) x).doubleValue());
      } else if (decimal) {
        dsum[i] = (first ? BigDecimal.ZERO.setScale(type.scale()) : dsum[i - 1]).add(x == null ? BigDecimal.ZERO : (BigDecimal) x);
      } else {
        try {
          lsum[i] = Math.addExact(first ? 0 : lsum[i - 1], x == null || countOnly ? 0 : ((Number) x).longValue());
        } catch (ArithmeticException e) {
          throw new dev.gpudf.columnar.error.UserException(f.kind() + " in a window overflows a 64-bit integer at row " + i, e);
        }
      }
    }
    long[] c = new long[n];
    boolean[] none = new boolean[n];
    double[] fs = new double[n];
    BigDecimal[] ds = decimal ? new BigDecimal[n] : null;
    long[] ls = new long[n];
    for (int i = 0; i < n; i++) {
      if (lo[i] > hi[i]) {
        none[i] = true;
        if (decimal) {
          ds[i] = BigDecimal.ZERO.setScale(type.scale());
        }
        continue;
      }
      boolean whole = lo[i] == ps[i];
      c[i] = count[hi[i]] - (whole ? 0 : count[lo[i] - 1]);
      none[i] = c[i] == 0;
      if (floats) {
        fs[i] = fsum[hi[i]] - (whole ? 0 : fsum[lo[i] - 1]);
      } else if (decimal) {
        ds[i] = whole ? dsum[hi[i]] : dsum[hi[i]].subtract(dsum[lo[i] - 1]);
      } else {
        ls[i] = lsum[hi[i]] - (whole ? 0 : lsum[lo[i] - 1]);
      }
    }
    boolean nullWhenEmpty = f.kind() == Kind.SUM || f.kind() == Kind.AVG;
    return switch (f.kind()) {
      case COUNT -> longs(a, c, null);
      case AVG -> {
        double[] avg = new double[n];
        for (int i = 0; i < n; i++) {
          avg[i] = none[i] ? 0 : (floats ? fs[i] : decimal ? ds[i].doubleValue() : ls[i]) / c[i];
        }
        yield doubles(a, avg, none);
      }
      default -> floats ? doubles(a, fs, nullWhenEmpty ? none : null)
          : decimal ? decimals(a, ds, type.scale(), nullWhenEmpty ? none : null)
          : longs(a, ls, nullWhenEmpty ? none : null);
    };
  }

  private static boolean isInteger(DataType t) {
    return switch (t.id()) {
      case INT8, INT16, INT32, INT64 -> true;
      default -> false;
    };
  }

  /** MIN and MAX over each frame: a sparse table of the best row of every 2^k rows, two lookups a row. */
  private static HostColumn extremes(BufferAllocator a, HostTable t, Function f, int[] lo, int[] hi) {
    int n = t.rowCount();
    FieldVector v = t.column(f.arg()).vector();
    @SuppressWarnings("unchecked")
    Comparable<Object>[] values = new Comparable[n];
    for (int i = 0; i < n; i++) {
      Object x = v.getObject(i);
      values[i] = x == null ? null : comparable(x);
    }
    boolean max = f.kind() == Kind.MAX;
    int widest = 1;
    for (int i = 0; i < n; i++) {
      widest = Math.max(widest, hi[i] - lo[i] + 1);
    }
    int levels = 32 - Integer.numberOfLeadingZeros(widest);
    int[][] best = new int[levels][];
    best[0] = new int[n];
    for (int i = 0; i < n; i++) {
      best[0][i] = i;
    }
    for (int k = 1; k < levels; k++) {
      int half = 1 << (k - 1);
      best[k] = new int[n];
      for (int i = 0; i < n; i++) {
        int other = i + half < n ? best[k - 1][i + half] : best[k - 1][i];
        best[k][i] = better(values, best[k - 1][i], other, max);
      }
    }
    int[] map = new int[n];
    for (int i = 0; i < n; i++) {
      if (lo[i] > hi[i]) {
        map[i] = -1;
        continue;
      }
      int k = 31 - Integer.numberOfLeadingZeros(hi[i] - lo[i] + 1);
      int r = better(values, best[k][lo[i]], best[k][hi[i] - (1 << k) + 1], max);
      map[i] = values[r] == null ? -1 : r;
    }
    return gathered(a, t, f.arg(), map);
  }

  /** Of rows {@code x} and {@code y}, the one with the smaller (larger for max) value; NULL loses. */
  private static int better(Comparable<Object>[] values, int x, int y, boolean max) {
    if (values[x] == null) {
      return y;
    }
    if (values[y] == null) {
      return x;
    }
    int c = values[x].compareTo(values[y]);
    return (max ? c >= 0 : c <= 0) ? x : y;
  }

  @SuppressWarnings("unchecked")
  private static Comparable<Object> comparable(Object x) {
    if (x instanceof org.apache.arrow.vector.util.Text s) {
      // UTF-8 bytes compared unsigned, as every other string comparison of the engine
      byte[] bytes = java.util.Arrays.copyOf(s.getBytes(), (int) s.getLength());
      return (Comparable<Object>) (Comparable<?>) new Utf8(bytes);
    }
    if (x instanceof Comparable<?> c) {
      return (Comparable<Object>) c;
    }
    throw new NotSupportedException("MIN or MAX over " + x.getClass().getSimpleName() + " in a window is not supported");
  }

  private record Utf8(byte[] bytes) implements Comparable<Utf8> {
    @Override
    public int compareTo(Utf8 o) {
      return java.util.Arrays.compareUnsigned(bytes, o.bytes);
    }
  }

  private static HostColumn gathered(BufferAllocator a, HostTable t, int arg, int[] map) {
    HostTable one = new HostTable(List.of("v"), List.of(retained(t.column(arg))), t.rowCount());
    try (one; HostTable g = CpuGather.tableWithNulls(a, one, map)) {
      HostColumn c = g.column(0);
      c.retain();
      return c;
    }
  }

  private static HostColumn retained(HostColumn c) {
    c.retain();
    return c;
  }

  private static HostColumn longs(BufferAllocator a, long[] v, boolean[] nulls) {
    BigIntVector out = new BigIntVector("w", a);
    return filled(out, v.length, nulls, i -> out.set(i, v[i]));
  }

  private static HostColumn doubles(BufferAllocator a, double[] v, boolean[] nulls) {
    Float8Vector out = new Float8Vector("w", a);
    return filled(out, v.length, nulls, i -> out.set(i, v[i]));
  }

  /** {@code out} with {@code n} rows: NULL where {@code nulls} says, else what {@code set} writes. */
  private static HostColumn filled(org.apache.arrow.vector.FixedWidthVector out, int n, boolean[] nulls,
      java.util.function.IntConsumer set) {
    FieldVector v = (FieldVector) out;
    try {
      out.allocateNew(n);
      for (int i = 0; i < n; i++) {
        if (nulls != null && nulls[i]) {
          v.setNull(i);
        } else {
          set.accept(i);
        }
      }
      v.setValueCount(n);
      return new HostColumn(v);
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  private static HostColumn decimals(BufferAllocator a, BigDecimal[] v, int scale, boolean[] nulls) {
    DecimalVector out = (DecimalVector) ArrowTypes.toArrowField("w", DataType.decimal(38, scale)).createVector(a);
    return filled(out, v.length, nulls, i -> out.setSafe(i, v[i].setScale(scale)));
  }
}
