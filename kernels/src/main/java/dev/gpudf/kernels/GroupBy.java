package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * GROUP BY: the groups of a table by key columns of any type, and aggregates per group. Nulls
 * form their own group (keys compare with IS NOT DISTINCT FROM); groups come out in the order of
 * their first row on both backends. Aggregates follow {@link Reduction}'s rules (exact integer
 * and decimal sums, NaN above all for MIN/MAX, NULL over no valid row); VAR_* and STDDEV_* are
 * computed in two passes (means, then squared distances); {@link Reduction#ANY_VALUE} is the
 * group's first non-null value; {@link Reduction#COUNT_DISTINCT} counts a group's distinct
 * non-null values (floats as numbers: -0.0 and 0.0 are one value, NaNs one). With no keys and no rows there are no groups.
 *
 * <p>On the CPU, keys that pack into a few bits a row ({@link PackedKeys}) index a table of groups
 * directly; otherwise rows are hash-partitioned by their keys and each partition is grouped by an
 * open-addressing hash table in parallel; on the GPU, {@link GpuHashGroupBy}.
 */
public final class GroupBy {
  private GroupBy() {}

  /** One aggregate: a reduction of a column (ignored for COUNT_ALL). */
  public record Agg(Reduction op, int column) {}

  private static final int PARTITIONS = 64;

  /**
   * The groups of {@code table} by columns {@code keys}: the key columns, then one column per
   * aggregate, named {@code names}. The caller owns the result.
   */
  public static DeviceTable aggregate(Exec exec, DeviceTable table, int[] keys, List<Agg> aggs, List<String> names) {
    check(table, keys, aggs, names);
    return withDistinctCounts(table, keys, aggs, names, (t, k, a, n) -> RankedExtremes.aggregate(exec, t, k, a, n,
        (t2, k2, a2, n2) -> GpuHashGroupBy.aggregate(exec, t2, k2, a2, n2)), (n, cols, rows) -> new DeviceTable(exec.gpu(), n, cols, rows));
  }

  /**
   * The groups of the rows of {@code table} that {@code kept} selects, on either backend, without
   * compacting the table first where the backend can: on the CPU through the kept rows' ids, on
   * the GPU through the filter's mask (rows it drops join no group), unless a COUNT_DISTINCT or a
   * MIN/MAX through ranks needs the rows compacted. The caller owns the result; the table and the
   * selection are borrowed.
   */
  public static Table<?> aggregateSelected(Exec exec, Table<?> table, int[] keys, List<Agg> aggs, List<String> names,
      Filter.Selection kept) {
    // before either path: a device selection's null host rows would otherwise group every row
    kept.checkFits(table);
    if (table instanceof HostTable host) {
      return aggregate(exec, host, keys, aggs, names, kept.hostRows());
    }
    DeviceTable device = (DeviceTable) table;
    check(device, keys, aggs, names);
    boolean inPlace = aggs.stream().noneMatch(a -> a.op == Reduction.COUNT_DISTINCT || (a.op == Reduction.MIN
        || a.op == Reduction.MAX) && RankedExtremes.groupedByRank(table.column(a.column).type()));
    if (!inPlace) {
      try (DeviceTable compacted = (DeviceTable) Filter.filter(exec, table, kept)) {
        return aggregate(exec, compacted, keys, aggs, names);
      }
    }
    return GpuHashGroupBy.aggregate(exec, device, keys, aggs, names, kept.mask());
  }

  /** {@link #aggregate(Exec, DeviceTable, int[], List, List)} on the CPU. */
  public static HostTable aggregate(Exec exec, HostTable table, int[] keys, List<Agg> aggs, List<String> names) {
    return aggregate(exec, table, keys, aggs, names, null);
  }

  /**
   * {@link #aggregate(Exec, HostTable, int[], List, List)} over only the rows {@code rows} of
   * {@code table} (ids in ascending order, as a filter keeps them; null: every row): a filter's
   * result aggregated without compacting its columns first. Where the keys index a table of
   * groups directly the other rows are passed over; otherwise the rows are gathered first. The
   * caller owns the result; {@code table} is borrowed.
   */
  public static HostTable aggregate(Exec exec, HostTable table, int[] keys, List<Agg> aggs, List<String> names, int[] rows) {
    check(table, keys, aggs, names);
    if (rows != null) {
      checkRows(rows, table.rowCount());
      if (aggs.stream().anyMatch(a -> a.op == Reduction.COUNT_DISTINCT)) {
        // its second grouping is of the first's result, whose rows are not these
        try (HostTable kept = CpuGather.table(exec.allocator(), table, rows)) {
          return aggregate(exec, kept, keys, aggs, names, null);
        }
      }
    }
    // ranks (RankedExtremes) are appended as columns: the rows stay the table's
    return withDistinctCounts(table, keys, aggs, names, (t, k, a, n) -> RankedExtremes.aggregate(exec, t, k, a, n,
        (t2, k2, a2, n2) -> hostAggregate(exec, t2, k2, a2, n2, rows)), HostTable::new);
  }

  /** That {@code rows} are ascending ids of rows of a table of {@code n}: a caller's bug otherwise. */
  private static void checkRows(int[] rows, int n) {
    for (int j = 0; j < rows.length; j++) {
      if (rows[j] < 0 || rows[j] >= n || j > 0 && rows[j] <= rows[j - 1]) {
        throw new dev.gpudf.columnar.error.InternalException("rows to aggregate must ascend within [0, " + n
            + "): row " + rows[j] + " at " + j);
      }
    }
  }

  /** One backend's group-by without COUNT_DISTINCT. */
  interface Grouper<T> {
    T group(T table, int[] keys, List<Agg> aggs, List<String> names);
  }

  /** One backend's table constructor, taking ownership of the columns. */
  private interface Assembler<C, T> {
    T table(List<String> names, List<C> columns, int rows);
  }

  /**
   * COUNT_DISTINCT on either backend from plain group-bys: the distinct (keys, column) rows, then
   * their non-null column values counted per keys. Both group-bys list groups in the order of
   * their first row, so the counts line up with the main result's groups.
   */
  private static <C extends Column, T extends Table<C>> T withDistinctCounts(T table, int[] keys, List<Agg> aggs,
      List<String> names, Grouper<T> grouper, Assembler<C, T> assembler) {
    if (aggs.stream().noneMatch(a -> a.op == Reduction.COUNT_DISTINCT)) {
      return grouper.group(table, keys, aggs, names);
    }
    List<Agg> plain = aggs.stream().map(a -> a.op == Reduction.COUNT_DISTINCT ? new Agg(Reduction.COUNT_ALL, 0) : a).toList();
    List<C> out = new ArrayList<>();
    try (T main = grouper.group(table, keys, plain, names)) {
      for (int c = 0; c < main.columnCount(); c++) {
        Agg a = c < keys.length ? null : aggs.get(c - keys.length);
        if (a == null || a.op != Reduction.COUNT_DISTINCT) {
          C col = main.column(c);
          col.retain();
          out.add(col);
          continue;
        }
        int[] withColumn = Arrays.copyOf(keys, keys.length + 1);
        withColumn[keys.length] = a.column;
        List<String> pairNames = IntStream.range(0, keys.length + 1).mapToObj(k -> "k" + k).toList();
        try (T distinct = grouper.group(table, withColumn, List.of(), pairNames);
            T counts = grouper.group(distinct, IntStream.range(0, keys.length).toArray(),
                List.of(new Agg(Reduction.COUNT_VALID, keys.length)), pairNames)) {
          C col = counts.column(keys.length);
          col.retain();
          out.add(col);
        }
      }
      return assembler.table(names, out, main.rowCount());
    } catch (RuntimeException e) {
      out.forEach(Column::close);
      throw e;
    }
  }

  /** The groups of the rows {@code rows} of {@code table} (null: all); see {@link #aggregate(Exec, HostTable, int[], List, List, int[])}. */
  private static HostTable hostAggregate(Exec exec, HostTable table, int[] keys, List<Agg> aggs, List<String> names,
      int[] rows) {
    int n = table.rowCount();
    List<HostColumn> keyCols = new ArrayList<>();
    for (int k : keys) {
      keyCols.add(table.column(k));
    }
    PackedKeys packed = PackedKeys.of(exec, keyCols, n);
    Groups groups;
    if (packed != null && packed.direct()) {
      groups = direct(packed, rows);
    } else if (rows == null) {
      groups = hashed(exec, n, packed, keyCols);
    } else {
      try (HostTable kept = CpuGather.table(exec.allocator(), table, rows)) {
        return hostAggregate(exec, kept, keys, aggs, names, null);
      }
    }
    int[] groupOf = groups.groupOf();
    int[] leaders = groups.leaders();
    HostColumn[] out = new HostColumn[keyCols.size() + aggs.size()];
    try {
      for (int k = 0; k < keyCols.size(); k++) {
        out[k] = CpuGather.column(exec.allocator(), "k", keyCols.get(k), leaders);
      }
      // every COUNT(*), and COUNT of a column without NULLs, is the groups' sizes: counted once
      long[] sizes = null;
      if (aggs.stream().anyMatch(a -> counted(table, a))) {
        sizes = new long[leaders.length + 1];
        for (int g : groupOf) {
          sizes[g]++;
        }
      }
      long[] groupSizes = sizes;
      // each aggregate is a pass over every row: the passes side by side, one a core (q1's eight
      // took a third of its time one after another)
      Exec.parallelChecked(exec::checkpoint, aggs.size(), i -> out[keyCols.size() + i] = counted(table, aggs.get(i))
          ? longs(exec.allocator(), DataType.INT64, Arrays.copyOf(groupSizes, leaders.length), null)
          : aggregateColumn(exec.allocator(), table, aggs.get(i), groupOf, leaders.length));
    } catch (RuntimeException e) {
      for (HostColumn c : out) {
        if (c != null) {
          c.close();
        }
      }
      throw e;
    }
    return new HostTable(names, List.of(out), leaders.length);
  }

  /**
   * Each row's group, and each group's first row, groups in the order of their first rows. A row
   * left out of the aggregation has group {@code leaders.length}: one slot past the groups, which
   * every aggregate's accumulators hold and its result leaves off.
   */
  private record Groups(int[] groupOf, int[] leaders) {}

  /**
   * Groups by {@link PackedKeys#direct()} keys: each key an index of a table of groups, one pass
   * over the rows {@code rows} (null: all); the others are left out.
   */
  private static Groups direct(PackedKeys packed, int[] rows) {
    long[] keys = packed.keys();
    int n = keys.length;
    int[] slot = new int[1 << packed.bits()];
    Arrays.fill(slot, -1);
    int[] groupOf = new int[n];
    int[] leaders = new int[Math.min(n, slot.length)];
    int groups = 0;
    int taken = rows == null ? n : rows.length;
    for (int j = 0; j < taken; j++) {
      int i = rows == null ? j : rows[j];
      int k = (int) keys[i];
      int g = slot[k];
      if (g < 0) {
        g = groups++;
        slot[k] = g;
        leaders[g] = i;
      }
      groupOf[i] = g;
    }
    if (rows != null && rows.length < n) {
      int out = groups;
      int next = 0;
      for (int i = 0; i < n; i++) {
        if (next < rows.length && rows[next] == i) {
          next++;
        } else {
          groupOf[i] = out;
        }
      }
    }
    return new Groups(groupOf, Arrays.copyOf(leaders, groups));
  }

  /**
   * Groups by a hash of the keys, partitions of rows in parallel. Packed keys hash by a bijective
   * mix, so equal hashes are equal keys; other keys are compared column by column.
   */
  private static Groups hashed(Exec exec, int n, PackedKeys packed, List<HostColumn> keyCols) {
    // packed keys become their own hashes, in place
    long[] hashes = packed != null ? packed.keys() : new long[n];
    HostKeys rk = packed != null ? null : new HostKeys(keyCols);
    IntStream.range(0, (n + 65535) / 65536).parallel().forEach(c -> {
      for (int i = c * 65536; i < Math.min(n, (c + 1) * 65536); i++) {
        hashes[i] = rk == null ? mix(hashes[i]) : rk.hash(i);
      }
    });
    // group[i] = the first row of row i's group
    int[] first = new int[n];
    int[][] parts = partition(hashes);
    // a grouping of many rows is one long operator: the query's checkpoint runs per partition
    Exec.parallelChecked(exec::checkpoint, PARTITIONS, p -> groupPartition(parts[p], hashes, rk, first));
    int[] leaders = IntStream.range(0, n).filter(i -> first[i] == i).toArray();
    int[] groupOf = new int[n];
    int[] slot = new int[n];
    for (int g = 0; g < leaders.length; g++) {
      slot[leaders[g]] = g;
    }
    for (int i = 0; i < n; i++) {
      groupOf[i] = slot[first[i]];
    }
    return new Groups(groupOf, leaders);
  }

  /** SplitMix64's finalizer: a bijection of longs that spreads every input bit over the output. */
  private static long mix(long x) {
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }

  private static void check(Table<?> t, int[] keys, List<Agg> aggs, List<String> names) {
    for (int k : keys) {
      if (k < 0 || k >= t.columnCount()) {
        throw new UserException("group key column " + k + " is not among the table's " + t.columnCount() + " columns");
      }
    }
    if (names.size() != keys.length + aggs.size()) {
      throw new UserException(names.size() + " names for " + keys.length + " keys and " + aggs.size() + " aggregates");
    }
    for (Agg a : aggs) {
      if (a.op != Reduction.COUNT_ALL && (a.column < 0 || a.column >= t.columnCount())) {
        throw new UserException("aggregate column " + a.column + " is not among the table's " + t.columnCount() + " columns");
      }
      check(t, a);
    }
  }

  private static void check(Table<?> t, Agg a) {
    if (a.op == Reduction.COUNT_ALL) {
      return;
    }
    DataType type = t.column(a.column).type();
    boolean numeric = switch (type.id()) {
      case INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, DECIMAL -> true;
      default -> false;
    };
    boolean ok = switch (a.op) {
      case COUNT_VALID, COUNT_DISTINCT, ANY_VALUE -> true;
      case SUM, MEAN -> numeric;
      case VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP -> numeric && type.id() != TypeId.DECIMAL;
      case MIN, MAX -> numeric || type.id() == TypeId.DATE || type.id() == TypeId.TIMESTAMP || RankedExtremes.groupedByRank(type);
      default -> false;
    };
    if (!ok) {
      throw new NotSupportedException("grouped " + a.op + " over " + type + " is not supported yet");
    }
  }

  private static int[][] partition(long[] hashes) {
    int n = hashes.length;
    int[] counts = new int[PARTITIONS];
    for (long h : hashes) {
      counts[(int) (h >>> 58)]++;
    }
    int[][] parts = new int[PARTITIONS][];
    int[] fill = new int[PARTITIONS];
    for (int p = 0; p < PARTITIONS; p++) {
      parts[p] = new int[counts[p]];
    }
    for (int i = 0; i < n; i++) {
      int p = (int) (hashes[i] >>> 58);
      parts[p][fill[p]++] = i;
    }
    return parts;
  }

  // Rows of one partition in increasing order, so the first row seen leads its group. Without
  // row keys (packed keys' hashes), equal hashes are equal keys.
  private static void groupPartition(int[] rows, long[] hashes, HostKeys rk, int[] first) {
    int cap = Integer.highestOneBit(Math.max(4, rows.length * 2 - 1)) << 1;
    int[] table = new int[cap];
    Arrays.fill(table, -1);
    int mask = cap - 1;
    for (int r : rows) {
      int s = (int) (hashes[r] ^ (hashes[r] >>> 29)) & mask;
      while (true) {
        int leader = table[s];
        if (leader < 0) {
          table[s] = r;
          first[r] = r;
          break;
        }
        if (hashes[leader] == hashes[r] && (rk == null || rk.matches(leader, rk, r, true))) {
          first[r] = leader;
          break;
        }
        s = (s + 1) & mask;
      }
    }
  }

  /** Whether {@code a} over {@code t} counts every row of a group: COUNT(*), or COUNT of a column without NULLs. */
  private static boolean counted(HostTable t, Agg a) {
    return a.op == Reduction.COUNT_ALL || a.op == Reduction.COUNT_VALID && t.column(a.column).nullCount() == 0;
  }

  /**
   * One aggregate over each row's group ({@code groupOf}); a row of group {@code groups} (left
   * out) accumulates into the extra slot every accumulator holds, which the result leaves off.
   */
  private static HostColumn aggregateColumn(BufferAllocator a, HostTable t, Agg agg, int[] groupOf, int groups) {
    int n = groupOf.length;
    HostColumn c = t.column(agg.column);
    if (agg.op == Reduction.COUNT_VALID) {
      // of a column with NULLs (the others are the groups' sizes, {@link #counted})
      long[] counts = new long[groups + 1];
      for (int i = 0; i < n; i++) {
        if (!c.vector().isNull(i)) {
          counts[groupOf[i]]++;
        }
      }
      return longs(a, DataType.INT64, Arrays.copyOf(counts, groups), null);
    }
    if (agg.op == Reduction.ANY_VALUE) {
      int[] first = new int[groups + 1];
      Arrays.fill(first, -1);
      for (int i = n - 1; i >= 0; i--) {
        if (c.nullCount() == 0 || !c.vector().isNull(i)) {
          first[groupOf[i]] = i;
        }
      }
      return CpuGather.column(a, "agg", c, Arrays.copyOf(first, groups));
    }
    DataType type = c.type();
    PhysicalType p = PhysicalType.of(type);
    CpuReduce.HostRows in = new CpuReduce.HostRows(c.vector(), p, c.nullCount() > 0);
    long[] count = new long[groups + 1];
    switch (agg.op) {
      case VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP -> {
        return variance(a, agg.op, in, p, groupOf, groups, count);
      }
      default -> { }
    }
    if (p.isFloat()) {
      double[] acc = new double[groups + 1];
      long[] nans = new long[groups + 1];
      boolean min = agg.op == Reduction.MIN;
      if (agg.op == Reduction.MIN || agg.op == Reduction.MAX) {
        Arrays.fill(acc, min ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY);
      }
      for (int i = 0; i < n; i++) {
        if (in.valid(i)) {
          int g = groupOf[i];
          double x = in.doubleAt(i);
          count[g]++;
          switch (agg.op) {
            case SUM, MEAN -> acc[g] += x;
            default -> {
              if (Double.isNaN(x)) {
                nans[g]++;
              } else {
                acc[g] = min ? Math.min(acc[g], x) : Math.max(acc[g], x);
              }
            }
          }
        }
      }
      double[] outv = new double[groups];
      for (int g = 0; g < groups; g++) {
        outv[g] = switch (agg.op) {
          case MEAN -> acc[g] / count[g];
          case MIN -> nans[g] == count[g] ? Double.NaN : acc[g];
          case MAX -> nans[g] > 0 ? Double.NaN : acc[g];
          default -> acc[g];
        };
      }
      DataType outType = agg.op == Reduction.MIN || agg.op == Reduction.MAX ? type : DataType.FLOAT64;
      long[] bits = new long[groups];
      for (int g = 0; g < groups; g++) {
        bits[g] = outType.equals(DataType.FLOAT32) ? Float.floatToRawIntBits((float) outv[g]) : Double.doubleToRawLongBits(outv[g]);
      }
      return longs(a, outType, bits, count);
    }
    if (p == PhysicalType.D128) {
      return wideDecimalSum(a, agg, in, type, groupOf, groups, count);
    }
    // integers, dates, timestamps, DECIMAL64: exact sums in two longs (lo, hi)
    long[] lo = new long[groups + 1];
    long[] hi = new long[groups + 1];
    long[] ext = new long[groups + 1];
    boolean min = agg.op == Reduction.MIN;
    boolean extreme = agg.op == Reduction.MIN || agg.op == Reduction.MAX;
    if (extreme) {
      Arrays.fill(ext, min ? Long.MAX_VALUE : Long.MIN_VALUE);
    }
    if (!extreme && in.plainLongs()) {
      sumLongs(in.address(), in.width(), groupOf, count, lo, hi);
    } else {
      for (int i = 0; i < n; i++) {
        if (in.valid(i)) {
          int g = groupOf[i];
          long x = in.longAt(i);
          count[g]++;
          if (extreme) {
            ext[g] = min ? Math.min(ext[g], x) : Math.max(ext[g], x);
          } else {
            long old = lo[g];
            lo[g] += x;
            hi[g] += (x >> 63) + carry(old, x, lo[g]);
          }
        }
      }
    }
    if (extreme) {
      return longs(a, type, Arrays.copyOf(ext, groups), count);
    }
    int scale = type.id() == TypeId.DECIMAL ? type.scale() : 0;
    if (agg.op == Reduction.MEAN) {
      long[] outv = new long[groups];
      for (int g = 0; g < groups; g++) {
        BigInteger s = BigInteger.valueOf(hi[g]).shiftLeft(64).add(new BigInteger(Long.toUnsignedString(lo[g])));
        outv[g] = count[g] == 0 ? 0 : Double.doubleToRawLongBits(new BigDecimal(s, scale)
            .divide(BigDecimal.valueOf(count[g]), java.math.MathContext.DECIMAL64).doubleValue());
      }
      return longs(a, DataType.FLOAT64, outv, count);
    }
    if (type.id() == TypeId.DECIMAL) {
      // DECIMAL(38, s) is 128 bits in Arrow: the accumulator is the value
      return longs(a, DataType.decimal(38, scale), Arrays.copyOf(lo, groups), Arrays.copyOf(hi, groups), count);
    }
    for (int g = 0; g < groups; g++) {
      if (hi[g] != (lo[g] >> 63)) {
        throw new UserException("SUM overflows INT64 in a group");
      }
    }
    return longs(a, DataType.INT64, Arrays.copyOf(lo, groups), count);
  }

  /**
   * The carry out of the unsigned sum {@code sum} of {@code a} and {@code b}: 1 or 0, without a
   * call (Long.compareUnsigned is one under the client compiler that runs a one-shot statement).
   */
  private static long carry(long a, long b, long sum) {
    return ((a & b) | ((a | b) & ~sum)) >>> 63;
  }

  /**
   * Exact sums of every row's long (at {@code address} + row times {@code width}, no NULLs) into
   * its group's two-long accumulator ({@code lo}, {@code hi}), counting rows: the aggregates'
   * common case, with no call a row.
   */
  private static void sumLongs(long address, int width, int[] groupOf, long[] count, long[] lo, long[] hi) {
    for (int i = 0; i < groupOf.length; i++) {
      int g = groupOf[i];
      long x = MemoryUtil.getLong(address + (long) i * width);
      count[g]++;
      long old = lo[g];
      long sum = old + x;
      lo[g] = sum;
      hi[g] += (x >> 63) + carry(old, x, sum);
    }
  }

  // Two passes, as on the GPU: the group means, then the squared distances from them.
  private static HostColumn variance(BufferAllocator a, Reduction op, CpuReduce.HostRows in, PhysicalType p, int[] groupOf,
      int groups, long[] count) {
    double[] mean = new double[groups + 1];
    for (int i = 0; i < groupOf.length; i++) {
      if (in.valid(i)) {
        mean[groupOf[i]] += p.isFloat() ? in.doubleAt(i) : in.longAt(i);
        count[groupOf[i]]++;
      }
    }
    for (int g = 0; g < groups; g++) {
      mean[g] /= count[g];
    }
    double[] sq = new double[groups + 1];
    for (int i = 0; i < groupOf.length; i++) {
      if (in.valid(i)) {
        double d = (p.isFloat() ? in.doubleAt(i) : in.longAt(i)) - mean[groupOf[i]];
        sq[groupOf[i]] += d * d;
      }
    }
    boolean sample = op == Reduction.VAR_SAMP || op == Reduction.STDDEV_SAMP;
    long[] bits = new long[groups];
    long[] valid = new long[groups];
    for (int g = 0; g < groups; g++) {
      double v = sq[g] / (count[g] - (sample ? 1 : 0));
      bits[g] = Double.doubleToRawLongBits(op == Reduction.STDDEV_POP || op == Reduction.STDDEV_SAMP ? Math.sqrt(v) : v);
      valid[g] = count[g] > (sample ? 1 : 0) ? 1 : 0;
    }
    return longs(a, DataType.FLOAT64, bits, valid);
  }

  // DECIMAL beyond 18 digits: per-group BigInteger sums (exact; the common case of expression
  // results such as price * (1 - discount))
  private static HostColumn wideDecimalSum(BufferAllocator a, Agg agg, CpuReduce.HostRows in, DataType type, int[] groupOf,
      int groups, long[] count) {
    long[] acc = new long[3 * (groups + 1)];
    if (in.plainLongs()) {
      // most values fit 64 bits: those summed in 128 (no call a row), the others in 192
      long at = in.address();
      long w = in.width();
      long[] lo = new long[groups + 1];
      long[] hi = new long[groups + 1];
      for (int i = 0; i < groupOf.length; i++) {
        long x = MemoryUtil.getLong(at + w * i);
        long high = MemoryUtil.getLong(at + w * i + 8);
        if (high != x >> 63) {
          Int192.add(acc, 3 * groupOf[i], x, high);
          x = 0;
        }
        int g = groupOf[i];
        count[g]++;
        long old = lo[g];
        long sum = old + x;
        lo[g] = sum;
        hi[g] += (x >> 63) + carry(old, x, sum);
      }
      for (int g = 0; g < groups; g++) {
        Int192.add(acc, 3 * g, lo[g], hi[g]);
      }
    } else {
      for (int i = 0; i < groupOf.length; i++) {
        if (in.valid(i)) {
          int g = groupOf[i];
          count[g]++;
          Int192.add(acc, 3 * g, in.longAt(i), in.highAt(i));
        }
      }
    }
    BigInteger[] sums = new BigInteger[groups];
    for (int g = 0; g < groups; g++) {
      sums[g] = Int192.value(acc[3 * g], acc[3 * g + 1], acc[3 * g + 2]);
    }
    long[] lo = new long[groups];
    long[] hi = new long[groups];
    for (int g = 0; g < groups; g++) {
      if (agg.op == Reduction.MEAN) {
        lo[g] = count[g] == 0 ? 0 : Double.doubleToRawLongBits(new BigDecimal(sums[g], type.scale())
            .divide(BigDecimal.valueOf(count[g]), java.math.MathContext.DECIMAL64).doubleValue());
      } else {
        if (sums[g].bitLength() > 127 || new BigDecimal(sums[g], type.scale()).precision() > 38) {
          throw new UserException("SUM overflows DECIMAL(38, " + type.scale() + ") in a group");
        }
        lo[g] = sums[g].longValue();
        hi[g] = sums[g].shiftRight(64).longValue();
      }
    }
    return agg.op == Reduction.MEAN ? longs(a, DataType.FLOAT64, lo, count)
        : longs(a, DataType.decimal(38, type.scale()), lo, hi, count);
  }

  private static HostColumn longs(BufferAllocator a, DataType type, long[] values, long[] valid) {
    return longs(a, type, values, null, valid);
  }

  /**
   * A column of {@code type} from raw values (int64 or double bits; float32 bits; DECIMAL low
   * words with {@code high} words, or sign-extended when {@code high} is null), NULL where
   * {@code valid[g] == 0}.
   */
  private static HostColumn longs(BufferAllocator a, DataType type, long[] values, long[] high, long[] valid) {
    int n = values.length;
    List<ArrowBuf> bufs = new ArrayList<>(2);
    try {
      ArrowBuf validity = a.buffer(Math.max(8, 8 * ((n + 63L) / 64)));
      bufs.add(validity);
      validity.setZero(0, validity.capacity());
      int width = type.id() == TypeId.DECIMAL ? 16 : type.byteWidth();
      ArrowBuf data = a.buffer(Math.max(1, (long) n * width));
      bufs.add(data);
      int nulls = 0;
      long d = data.memoryAddress();
      for (int g = 0; g < n; g++) {
        if (valid != null && valid[g] == 0) {
          nulls++;
          continue;
        }
        HostBitmapsWriter.set(validity.memoryAddress(), g);
        switch (width) {
          case 4 -> MemoryUtil.putInt(d + 4L * g, (int) values[g]);
          case 8 -> MemoryUtil.putLong(d + 8L * g, values[g]);
          case 16 -> {
            MemoryUtil.putLong(d + 16L * g, values[g]);
            MemoryUtil.putLong(d + 16L * g + 8, high != null ? high[g] : values[g] < 0 ? -1 : 0);
          }
          case 2 -> MemoryUtil.putShort(d + 2L * g, (short) values[g]);
          default -> MemoryUtil.putByte(d + g, (byte) values[g]);
        }
      }
      return new HostColumn(CpuGather.load(a, "agg", type, n, nulls, bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  /** Sets bit {@code i} of a bitmap at a native address. */
  private static final class HostBitmapsWriter {
    static void set(long address, long i) {
      MemoryUtil.putByte(address + (i >>> 3), (byte) (MemoryUtil.getByte(address + (i >>> 3)) | (1 << (i & 7))));
    }
  }
}
