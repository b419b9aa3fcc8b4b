package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Joins: equality keys of any type, with SQL's null semantics (a NULL key matches nothing), and
 * a residual condition (the join's non-equality part) evaluated on the candidate pairs (the key
 * matches, or every pair when there are no keys) before the kind decides which rows are
 * unmatched. On the CPU a hash table over the right side's keys (chained in row order) is probed
 * by the left side in parallel chunks; output rows follow the left side's order, and unmatched
 * right rows of RIGHT and FULL joins come last. A SEMI or ANTI join whose left side is the smaller
 * (and that is given no shared index) indexes the left side instead, and the right side's rows mark
 * the keys they hold ({@link #marked}). On the GPU, {@link GpuHashJoin}: the same rows,
 * possibly in another order.
 */
public final class Join {
  private Join() {}

  /**
   * Join kinds; SEMI and the ANTI kinds return only the left side's columns. NULL_AWARE_ANTI is
   * {@code NOT IN} over one key: no rows when the right side holds a NULL key, and a left row
   * with a NULL key is kept only when the right side is empty.
   */
  public enum Kind { INNER, LEFT, RIGHT, FULL, SEMI, ANTI, NULL_AWARE_ANTI, CROSS }

  private static final int CHUNK = 1 << 14;
  // every candidate pair of a keyless join is materialised: about 8 bytes a cell, 2 GiB in all
  private static final long MAX_CROSS_CELLS = 1L << 28;

  /** An equi-join (or a CROSS join, without keys): {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr)} without a residual. */
  public static HostTable join(Exec exec, HostTable left, HostTable right, int[] leftKeys, int[] rightKeys, Kind kind,
      List<String> names) {
    return join(exec, left, right, leftKeys, rightKeys, kind, names, null);
  }

  /**
   * {@code left} joined to {@code right} on {@code leftKeys[i] = rightKeys[i]} (no keys: every
   * pair is a candidate) and, when {@code residual} is not null, on that BOOL expression over the
   * left columns followed by the right columns (NULL is false): the left columns, then (except
   * for SEMI and ANTI) the right columns, named {@code names}. The caller owns it.
   */
  public static HostTable join(Exec exec, HostTable left, HostTable right, int[] leftKeys, int[] rightKeys, Kind kind,
      List<String> names, Expr residual) {
    return join(exec, left, right, leftKeys, rightKeys, kind, names, residual, null);
  }

  /**
   * A hash index over some key columns of a table (the build side of a join), made once by
   * {@link #index} and probed by every join of that table on those keys: a table that each chunk
   * of another is joined to is indexed once, not once a chunk. It refers to the table's columns
   * without holding them, so it is valid only while the table is open, which its user sees to.
   */
  public static final class Index {
    private final HostTable table;
    private final int[] keys;
    private final HostKeys rk;
    private final long[] hash;
    private final int[] head;
    private final int[] next;

    private Index(HostTable table, int[] keys) {
      this.table = table;
      this.keys = keys.clone();
      rk = keys(table, keys);
      int m = table.rowCount();
      hash = new long[m];
      head = new int[Integer.highestOneBit(Math.max(4, m * 2 - 1)) << 1];
      Arrays.fill(head, -1);
      next = new int[m];
      // rows pushed in reverse so each chain runs in row order
      for (int j = m - 1; j >= 0; j--) {
        if (rk.anyNull(j)) {
          continue;
        }
        hash[j] = rk.hash(j);
        int s = slot(hash[j], head.length);
        next[j] = head[s];
        head[s] = j;
      }
    }
  }

  /** The {@link Index} of {@code right} on key columns {@code rightKeys}, for {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr, Index)}. */
  public static Index index(HostTable right, int[] rightKeys) {
    for (int k : rightKeys) {
      if (k < 0 || k >= right.columnCount()) {
        throw new UserException("join key column " + k + " is not among the " + right.columnCount() + " columns");
      }
    }
    return new Index(right, rightKeys);
  }

  /**
   * {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr)} probing {@code index}
   * (null: one is made for this join), which must be {@code right}'s on {@code rightKeys}.
   */
  public static HostTable join(Exec exec, HostTable left, HostTable right, int[] leftKeys, int[] rightKeys, Kind kind,
      List<String> names, Expr residual, Index index) {
    return join(exec, left, right, leftKeys, rightKeys, kind, names, residual, index, null);
  }

  /**
   * {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr, Index)} writing only
   * the output columns {@code keep} (ascending positions among the left columns followed by the
   * right ones; null: all), named {@code names}: a column no one reads above the join is not
   * gathered (a key its parent drops, the other side's copy of it).
   */
  public static HostTable join(Exec exec, HostTable left, HostTable right, int[] leftKeys, int[] rightKeys, Kind kind,
      List<String> names, Expr residual, Index index, int[] keep) {
    check(left, right, leftKeys, rightKeys, kind, names, residual, keep);
    if (index != null && (index.table != right || !Arrays.equals(index.keys, rightKeys))) {
      throw new dev.gpudf.columnar.error.InternalException("a join index of another table or other keys was given: keys "
          + Arrays.toString(index.keys) + ", not " + Arrays.toString(rightKeys));
    }
    int[][] maps;
    if (kind == Kind.NULL_AWARE_ANTI && right.rowCount() > 0 && right.column(rightKeys[0]).nullCount() > 0) {
      maps = new int[][] {{}, {}};
    } else if (leftKeys.length > 0 && residual == null) {
      maps = index == null && (kind == Kind.SEMI || kind == Kind.ANTI) && left.rowCount() < right.rowCount()
          ? marked(exec::checkpoint, right, index(left, leftKeys), rightKeys, kind == Kind.SEMI)
          : maps(exec::checkpoint, left, index != null ? index : index(right, rightKeys), leftKeys, kind);
    } else {
      long pairs = leftKeys.length == 0 ? (long) left.rowCount() * right.rowCount() : 0;
      if (pairs * (left.columnCount() + right.columnCount()) > MAX_CROSS_CELLS) {
        throw new UserException("a join without equality keys of " + left.rowCount() + " x " + right.rowCount()
            + " rows would pair " + pairs + " rows of " + (left.columnCount() + right.columnCount())
            + " columns, more than this CPU join holds (" + MAX_CROSS_CELLS + " cells)");
      }
      int[][] candidates = leftKeys.length == 0 ? cross(left.rowCount(), right.rowCount())
          : maps(exec::checkpoint, left, index != null ? index : index(right, rightKeys), leftKeys, Kind.INNER);
      maps = decide(candidates, residual == null ? null : holds(exec, left, right, candidates, residual),
          left.rowCount(), right.rowCount(), kind);
    }
    List<HostColumn> out = new ArrayList<>();
    try (HostTable keptLeft = (HostTable) kept(exec, left, keep, 0);
        HostTable keptRight = (HostTable) kept(exec, right, keep, left.columnCount())) {
      try (HostTable l = CpuGather.tableWithNulls(exec.allocator(), keptLeft, maps[0])) {
        for (int c = 0; c < l.columnCount(); c++) {
          HostColumn col = l.column(c);
          col.retain();
          out.add(col);
        }
      }
      if (kind != Kind.SEMI && kind != Kind.ANTI && kind != Kind.NULL_AWARE_ANTI) {
        try (HostTable r = CpuGather.tableWithNulls(exec.allocator(), keptRight, maps[1])) {
          for (int c = 0; c < r.columnCount(); c++) {
            HostColumn col = r.column(c);
            col.retain();
            out.add(col);
          }
        }
      }
    } catch (RuntimeException e) {
      out.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(names, out, maps[0].length);
  }

  /** An equi-join (or a CROSS join) on the GPU, without a residual; the caller owns the result. */
  public static DeviceTable join(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys, Kind kind,
      List<String> names) {
    return join(exec, left, right, leftKeys, rightKeys, kind, names, null);
  }

  /**
   * {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr)} on the GPU; the
   * caller owns the result.
   */
  public static DeviceTable join(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys,
      Kind kind, List<String> names, Expr residual) {
    return join(exec, left, right, leftKeys, rightKeys, kind, names, residual, null);
  }

  /**
   * {@link #join(Exec, HostTable, HostTable, int[], int[], Kind, List, Expr, Index, int[])} on the
   * GPU: only the output columns {@code keep} (null: all) are gathered. The caller owns the result.
   */
  public static DeviceTable join(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys,
      Kind kind, List<String> names, Expr residual, int[] keep) {
    check(left, right, leftKeys, rightKeys, kind, names, residual, keep);
    try (DeviceTable keptLeft = (DeviceTable) kept(exec, left, keep, 0);
        DeviceTable keptRight = (DeviceTable) kept(exec, right, keep, left.columnCount())) {
      return GpuHashJoin.join(exec, left, right, leftKeys, rightKeys, kind, names, residual, keptLeft, keptRight);
    }
  }

  /**
   * The columns of {@code side} among the output positions {@code keep} (null: all of them),
   * where the side's columns start at {@code first}: a table sharing them, which the caller closes.
   */
  private static Table<?> kept(Exec exec, Table<?> side, int[] keep, int first) {
    int n = side.columnCount();
    int[] columns = keep == null ? java.util.stream.IntStream.range(0, n).toArray()
        : Arrays.stream(keep).filter(p -> p >= first && p < first + n).map(p -> p - first).toArray();
    return TableOps.columns(exec, side, columns);
  }

  /**
   * The gather maps of an equi-join of {@code kind} (not CROSS) on the GPU, without gathering any
   * column: INT32 columns {@code left} and, except for SEMI and the ANTI kinds, {@code right},
   * where -1 means the side has no row. Row order as in {@link GpuHashJoin}. The caller owns it.
   */
  public static DeviceTable gatherMaps(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys,
      Kind kind) {
    if (leftKeys.length == 0) {
      throw new UserException("gather maps of a " + kind + " join need key columns");
    }
    boolean leftOnly = kind == Kind.SEMI || kind == Kind.ANTI || kind == Kind.NULL_AWARE_ANTI;
    List<String> names = new ArrayList<>(left.names());
    if (!leftOnly) {
      names.addAll(right.names());
    }
    check(left, right, leftKeys, rightKeys, kind, names, null, null);
    try (GpuHashJoin.Maps maps = GpuHashJoin.maps(exec, left, right, leftKeys, rightKeys, kind)) {
      return maps.toTable(exec);
    }
  }

  private static void check(Table<?> left, Table<?> right, int[] leftKeys, int[] rightKeys, Kind kind, List<String> names,
      Expr residual, int[] keep) {
    if (leftKeys.length != rightKeys.length || (kind == Kind.CROSS && leftKeys.length > 0)) {
      throw new UserException("a " + kind + " join needs " + (kind == Kind.CROSS ? "no" : "matching") + " key columns");
    }
    if (kind == Kind.NULL_AWARE_ANTI && (leftKeys.length != 1 || residual != null)) {
      throw new NotSupportedException("a null-aware anti join (NOT IN) takes one key and no other condition");
    }
    for (int i = 0; i < leftKeys.length; i++) {
      if (leftKeys[i] < 0 || leftKeys[i] >= left.columnCount() || rightKeys[i] < 0 || rightKeys[i] >= right.columnCount()) {
        throw new UserException("join key columns " + leftKeys[i] + " = " + rightKeys[i] + " are not among the inputs' "
            + left.columnCount() + " and " + right.columnCount() + " columns");
      }
      if (!left.column(leftKeys[i]).type().equals(right.column(rightKeys[i]).type())) {
        throw new UserException("join keys of different types: " + left.column(leftKeys[i]).type() + " and "
            + right.column(rightKeys[i]).type());
      }
    }
    boolean leftOnly = kind == Kind.SEMI || kind == Kind.ANTI || kind == Kind.NULL_AWARE_ANTI;
    int columns = left.columnCount() + (leftOnly ? 0 : right.columnCount());
    if (keep != null) {
      for (int i = 0; i < keep.length; i++) {
        if (keep[i] < 0 || keep[i] >= columns || (i > 0 && keep[i] <= keep[i - 1])) {
          throw new dev.gpudf.columnar.error.InternalException("join output columns " + Arrays.toString(keep)
              + " are not ascending positions among its " + columns + " columns");
        }
      }
      columns = keep.length;
    }
    if (names.size() != columns) {
      throw new UserException(names.size() + " names for a " + kind + " join of " + columns + " columns");
    }
  }

  private static int[][] cross(int n, int m) {
    long total = (long) n * m;
    if (total > Integer.MAX_VALUE) {
      throw new UserException("a cross join of " + n + " and " + m + " rows exceeds a table's 2^31 - 1 rows");
    }
    int[] l = new int[(int) total];
    int[] r = new int[(int) total];
    for (int i = 0; i < total; i++) {
      l[i] = (int) (i / m);
      r[i] = (int) (i % m);
    }
    return new int[][] {l, r};
  }

  /** Whether {@code residual} is TRUE for each candidate pair (evaluated over the paired rows). */
  private static boolean[] holds(Exec exec, HostTable left, HostTable right, int[][] pairs, Expr residual) {
    try (HostTable l = CpuGather.tableWithNulls(exec.allocator(), left, pairs[0]);
        HostTable r = CpuGather.tableWithNulls(exec.allocator(), right, pairs[1])) {
      List<String> names = new ArrayList<>();
      List<HostColumn> cols = new ArrayList<>();
      for (HostTable t : List.of(l, r)) {
        for (int c = 0; c < t.columnCount(); c++) {
          names.add("c" + names.size());
          HostColumn col = t.column(c);
          col.retain();
          cols.add(col);
        }
      }
      try (HostTable both = new HostTable(names, cols, pairs[0].length);
          HostColumn mask = Evaluate.evaluate(exec, both, residual)) {
        if (!mask.type().equals(dev.gpudf.columnar.DataType.BOOL)) {
          throw new UserException("a join condition must be BOOLEAN, not " + mask.type());
        }
        org.apache.arrow.vector.BitVector v = (org.apache.arrow.vector.BitVector) mask.vector();
        boolean[] out = new boolean[pairs[0].length];
        for (int i = 0; i < out.length; i++) {
          out[i] = !v.isNull(i) && v.get(i) == 1;
        }
        return out;
      }
    }
  }

  /**
   * The gather maps of a {@code kind} join from its candidate pairs (in left row order) and
   * which of them hold ({@code null}: all).
   */
  static int[][] decide(int[][] candidates, boolean[] hold, int n, int m, Kind kind) {
    IntList l = new IntList();
    IntList r = new IntList();
    boolean[] rightHit = kind == Kind.RIGHT || kind == Kind.FULL ? new boolean[m] : null;
    boolean pairs = kind != Kind.SEMI && kind != Kind.ANTI;
    int p = 0;
    for (int i = 0; i < n; i++) {
      boolean any = false;
      for (; p < candidates[0].length && candidates[0][p] == i; p++) {
        if (hold == null || hold[p]) {
          any = true;
          if (pairs) {
            l.add(i);
            r.add(candidates[1][p]);
          }
          if (rightHit != null) {
            rightHit[candidates[1][p]] = true;
          }
        }
      }
      if ((kind == Kind.SEMI && any) || (kind == Kind.ANTI && !any) || (!any && (kind == Kind.LEFT || kind == Kind.FULL))) {
        l.add(i);
        r.add(-1);
      }
    }
    if (rightHit != null) {
      for (int j = 0; j < m; j++) {
        if (!rightHit[j]) {
          l.add(-1);
          r.add(j);
        }
      }
    }
    return new int[][] {l.toArray(), r.toArray()};
  }

  /**
   * The maps of a SEMI ({@code semi}) or ANTI join whose left side, indexed by {@code index}, is
   * the smaller: the rows of {@code probe} (the right side, in parallel chunks) mark the left rows
   * their keys match, and the left rows marked (SEMI) or not (ANTI) come in row order, as probing
   * the right side's index would give them, with an index of the smaller side ({@link GpuHashJoin}
   * does the same). A left row with a NULL key is in no chain, so it is never marked.
   */
  static int[][] marked(Runnable checkpoint, HostTable probe, Index index, int[] probeKeys, boolean semi) {
    HostKeys pk = keys(probe, probeKeys);
    int m = index.table.rowCount();
    int n = probe.rowCount();
    int chunks = (n + CHUNK - 1) / CHUNK;
    // marks are only ever set to true, so the unsynchronised writes are benign; the parallel
    // stream's completion publishes them
    boolean[] matched = new boolean[m];
    Exec.parallelChecked(checkpoint, chunks, c -> {
      for (int i = c * CHUNK; i < Math.min(n, (c + 1) * CHUNK); i++) {
        if (pk.anyNull(i)) {
          continue;
        }
        long h = pk.hash(i);
        for (int j = index.head[slot(h, index.head.length)]; j >= 0; j = index.next[j]) {
          if (!matched[j] && index.hash[j] == h && pk.matches(i, index.rk, j, false)) {
            matched[j] = true;
          }
        }
      }
    });
    IntList kept = new IntList();
    for (int j = 0; j < m; j++) {
      if (matched[j] == semi) {
        kept.add(j);
      }
    }
    int[] left = kept.toArray();
    int[] none = new int[left.length];
    Arrays.fill(none, -1);
    return new int[][] {left, none};
  }

  /**
   * The gather maps of the join: left rows and right rows, -1 where a side has no row.
   * {@code checkpoint} runs before each chunk of left rows is probed (a join whose keys repeat
   * can run long in one operator; a checkpoint that throws stops it).
   */
  static int[][] maps(Runnable checkpoint, HostTable left, Index index, int[] leftKeys, Kind kind) {
    HostKeys lk = keys(left, leftKeys);
    HostKeys rk = index.rk;
    int m = index.table.rowCount();
    long[] rHash = index.hash;
    int cap = index.head.length;
    int[] head = index.head;
    int[] next = index.next;
    int n = left.rowCount();
    int chunks = (n + CHUNK - 1) / CHUNK;
    int[][] chunkLeft = new int[chunks][];
    int[][] chunkRight = new int[chunks][];
    // probes only ever set entries to true, so the unsynchronised writes are benign; the
    // parallel stream's completion publishes them
    boolean[] matched = kind == Kind.RIGHT || kind == Kind.FULL ? new boolean[m] : null;
    Exec.parallelChecked(checkpoint, chunks, c -> {
      IntList ls = new IntList();
      IntList rs = new IntList();
      for (int i = c * CHUNK; i < Math.min(n, (c + 1) * CHUNK); i++) {
        boolean any = false;
        boolean nullKey = lk.anyNull(i);
        if (nullKey && kind == Kind.NULL_AWARE_ANTI && m > 0) {
          continue;
        }
        if (!nullKey) {
          long h = lk.hash(i);
          for (int j = head[slot(h, cap)]; j >= 0; j = next[j]) {
            if (rHash[j] == h && lk.matches(i, rk, j, false)) {
              any = true;
              if (kind == Kind.SEMI || kind == Kind.ANTI || kind == Kind.NULL_AWARE_ANTI) {
                break;
              }
              ls.add(i);
              rs.add(j);
              if (matched != null) {
                matched[j] = true;
              }
            }
          }
        }
        if ((kind == Kind.SEMI && any) || ((kind == Kind.ANTI || kind == Kind.NULL_AWARE_ANTI) && !any)) {
          ls.add(i);
          rs.add(-1);
        } else if (!any && (kind == Kind.LEFT || kind == Kind.FULL)) {
          ls.add(i);
          rs.add(-1);
        }
      }
      chunkLeft[c] = ls.toArray();
      chunkRight[c] = rs.toArray();
    });
    IntList l = new IntList();
    IntList r = new IntList();
    for (int c = 0; c < chunks; c++) {
      l.addAll(chunkLeft[c]);
      r.addAll(chunkRight[c]);
    }
    if (matched != null) {
      for (int j = 0; j < m; j++) {
        if (!matched[j]) {
          l.add(-1);
          r.add(j);
        }
      }
    }
    return new int[][] {l.toArray(), r.toArray()};
  }

  private static HostKeys keys(HostTable t, int[] cols) {
    List<HostColumn> k = new ArrayList<>();
    for (int c : cols) {
      k.add(t.column(c));
    }
    return new HostKeys(k);
  }

  private static int slot(long h, int cap) {
    return (int) (h ^ (h >>> 29)) & (cap - 1);
  }

  /** A growable int array. */
  private static final class IntList {
    private int[] a = new int[16];
    private int size;

    void add(int v) {
      if (size == a.length) {
        a = Arrays.copyOf(a, a.length * 2);
      }
      a[size++] = v;
    }

    void addAll(int[] vs) {
      for (int v : vs) {
        add(v);
      }
    }

    int[] toArray() {
      return Arrays.copyOf(a, size);
    }
  }
}
