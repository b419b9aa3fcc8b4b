package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.IntVector;

/**
 * The GPU twin of {@link Join} ({@code join.cu}): the build side's distinct keys go into a hash
 * table in device memory (rows sharing a key listed together), the probe side counts then writes
 * its output rows, and the gather maps select the joined columns. The build side is the right
 * input, except for INNER joins, which build on the smaller input, and SEMI and ANTI joins whose
 * left input is the smaller, which build on it and let the right side mark the keys it holds.
 * Output follows the probe side's row order (a probe row's matches in an order the build's atomics
 * decide; unmatched right rows of RIGHT and FULL joins last), so it may order rows differently from
 * the CPU twin while holding the same rows.
 *
 * <p>A residual condition is evaluated on the device over the candidate pairs; for INNER joins the
 * pairs that hold are compacted on the device, for the other kinds the gather maps and the
 * condition's mask (4 and 1/8 bytes a pair, no column data) go to the host, where {@link Join}
 * decides which rows are unmatched.
 */
final class GpuHashJoin {
  private GpuHashJoin() {}

  /** Gather maps of a join on the device: {@code count} rows of left and right row ids, -1 for none. */
  record Maps(DeviceBuffer left, DeviceBuffer right, int count) implements AutoCloseable {
    /** The maps as INT32 columns {@code left} and {@code right} (when present) sharing these buffers; the caller closes it. */
    DeviceTable toTable(Exec exec) {
      List<DeviceColumn> cols = new ArrayList<>();
      cols.add(new DeviceColumn(DataType.INT32, count, 0, shared(left), null, null));
      if (right != null) {
        cols.add(new DeviceColumn(DataType.INT32, count, 0, shared(right), null, null));
      }
      return new DeviceTable(exec.gpu(), List.of("left", "right").subList(0, cols.size()), cols, count);
    }

    @Override
    public void close() {
      left.close();
      if (right != null) {
        right.close();
      }
    }
  }

  /**
   * See {@link Join#join(Exec, DeviceTable, DeviceTable, int[], int[], Join.Kind, List, Expr, int[])}:
   * the rows pair up by {@code left} and {@code right}, and {@code leftOut} and {@code rightOut}
   * (some of their columns, borrowed) are gathered.
   */
  static DeviceTable join(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys, Join.Kind kind,
      List<String> names, Expr residual, DeviceTable leftOut, DeviceTable rightOut) {
    try (Maps maps = residual == null && leftKeys.length > 0 ? maps(exec, left, right, leftKeys, rightKeys, kind)
        : withResidual(exec, left, right, leftKeys, rightKeys, kind, residual)) {
      boolean leftHoles = kind == Join.Kind.RIGHT || kind == Join.Kind.FULL;
      boolean rightHoles = kind == Join.Kind.LEFT || kind == Join.Kind.FULL;
      if (kind == Join.Kind.SEMI || kind == Join.Kind.ANTI || kind == Join.Kind.NULL_AWARE_ANTI) {
        List<DeviceColumn> out = new ArrayList<>();
        take(GpuGather.table(exec, leftOut, maps.left(), maps.count(), leftHoles), out);
        return new DeviceTable(exec.gpu(), names, out, maps.count());
      }
      return new DeviceTable(exec.gpu(), names,
          GpuGather.pairs(exec, leftOut, maps.left(), leftHoles, rightOut, maps.right(), rightHoles, maps.count()),
          maps.count());
    }
  }

  private static void take(DeviceTable t, List<DeviceColumn> out) {
    try (t) {
      for (int c = 0; c < t.columnCount(); c++) {
        DeviceColumn col = t.column(c);
        col.retain();
        out.add(col);
      }
    }
  }

  /** The gather maps of an equi-join of {@code kind} (left and right as given, whichever side builds). */
  static Maps maps(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys, Join.Kind kind) {
    if (kind == Join.Kind.NULL_AWARE_ANTI && right.rowCount() > 0 && right.column(rightKeys[0]).nullCount() > 0) {
      // x NOT IN (..., NULL, ...) is never true
      return new Maps(exec.allocate(0), null, 0);
    }
    if (kind == Join.Kind.INNER && left.rowCount() < right.rowCount()) {
      Maps swapped = probe(exec, right, left, rightKeys, leftKeys, kind);
      return new Maps(swapped.right(), swapped.left(), swapped.count());
    }
    if ((kind == Join.Kind.SEMI || kind == Join.Kind.ANTI) && left.rowCount() < right.rowCount()) {
      return marked(exec, right, left, rightKeys, leftKeys, kind == Join.Kind.SEMI);
    }
    return probe(exec, left, right, leftKeys, rightKeys, kind);
  }

  /**
   * A SEMI ({@code semi}) or ANTI join's left rows, in row order, with the left side building: the
   * larger right side only marks the keys it holds, so the hash table is the smaller side's (TPC-H
   * q21's semi-joins over lineitem built tables of 38M and 60M rows for a far smaller left side) and no count or
   * write pass runs. Probing gives the same rows: a build row is kept when its key's slot is (SEMI)
   * or is not (ANTI) marked, and a NULL key is never marked.
   */
  private static Maps marked(Exec exec, DeviceTable probe, DeviceTable build, int[] probeKeys, int[] buildKeys,
      boolean semi) {
    int n = probe.rowCount();
    int m = build.rowCount();
    long cap = Math.min(GpuKeys.capacity(2L * m), 1L << 31);
    int buildGrid = KernelLaunch.gridFor(exec.stream().device(), m);
    try (DeviceBuffer pk = GpuKeys.describe(exec, columns(probe, probeKeys));
        DeviceBuffer bk = GpuKeys.describe(exec, columns(build, buildKeys));
        DeviceBuffer table = exec.allocate(8 * cap);
        DeviceBuffer slotRows = exec.allocateZeroed(4 * cap);
        DeviceBuffer rowSlot = exec.allocate(4L * Math.max(1, m));
        DeviceBuffer dups = exec.allocateZeroed(4);
        DeviceBuffer matched = exec.allocateZeroed(cap);
        DeviceBuffer mask = exec.allocate(4 * ((m + 31L) / 32 + 1))) {
      exec.fill(table, 0, 8 * cap, (byte) 0xFF);
      KernelLaunch.launch("join_build_kernel", buildGrid, exec.stream(), bk, buildKeys.length, (long) m, table, cap - 1,
          slotRows, rowSlot, dups);
      if (n > 0) {
        KernelLaunch.launch("join_mark_kernel", KernelLaunch.residentGridFor(exec.stream().device(), "join_mark_kernel", n),
            exec.stream(), pk, bk, probeKeys.length, (long) n, table, cap - 1, matched);
      }
      KernelLaunch.launch("join_marked_rows_kernel", KernelLaunch.gridFor(exec.stream().device(), (m + 31L) / 32),
          exec.stream(), rowSlot, matched, (long) m, semi ? 1 : 0, mask);
      Filter.DeviceRows kept = Filter.keptRows(exec, mask, null, m);
      return new Maps(kept.rows(), null, kept.count());
    }
  }

  private static Maps probe(Exec exec, DeviceTable probe, DeviceTable build, int[] probeKeys, int[] buildKeys,
      Join.Kind kind) {
    int n = probe.rowCount();
    int m = build.rowCount();
    // slots are stored as int: at most 2^31 of them, still more than the build's rows
    long cap = Math.min(GpuKeys.capacity(2L * m), 1L << 31);
    boolean pairs = kind != Join.Kind.SEMI && kind != Join.Kind.ANTI && kind != Join.Kind.NULL_AWARE_ANTI;
    boolean markBuild = kind == Join.Kind.RIGHT || kind == Join.Kind.FULL;
    long[] g = DeviceScan.grid(exec, n, 1);
    int blocks = (int) g[0];
    int buildGrid = KernelLaunch.gridFor(exec.stream().device(), m);
    List<DeviceBuffer> temps = new ArrayList<>();
    try (DeviceBuffer pk = GpuKeys.describe(exec, columns(probe, probeKeys));
        DeviceBuffer bk = GpuKeys.describe(exec, columns(build, buildKeys));
        DeviceBuffer table = exec.allocate(8 * cap);
        DeviceBuffer slotRows = exec.allocateZeroed(4 * cap);
        DeviceBuffer slotEnd = exec.allocate(4 * cap);
        DeviceBuffer rowSlot = exec.allocate(4L * Math.max(1, m));
        DeviceBuffer rows = exec.allocate(4L * Math.max(1, m));
        DeviceBuffer dups = exec.allocateZeroed(4);
        DeviceBuffer cursor = exec.allocateZeroed(4);
        DeviceBuffer counts = exec.allocate(4L * Math.max(1, n));
        DeviceBuffer offsets = exec.allocate(8L * (blocks + 1));
        DeviceBuffer matched = markBuild ? exec.allocateZeroed(cap) : null;
        // each probe row's match, from the count pass to the write pass
        DeviceBuffer found = pairs ? exec.allocate(4L * Math.max(1, n)) : null) {
      exec.fill(table, 0, 8 * cap, (byte) 0xFF);
      KernelLaunch.launch("join_build_kernel", buildGrid, exec.stream(), bk, buildKeys.length, (long) m, table, cap - 1,
          slotRows, rowSlot, dups);
      if (pairs && n > 0) {
        KernelLaunch.launch("join_ranges_kernel", KernelLaunch.gridFor(exec.stream().device(), cap), exec.stream(),
            slotRows, cap, dups, slotEnd, cursor);
        KernelLaunch.launch("join_list_kernel", buildGrid, exec.stream(), rowSlot, (long) m, slotRows, dups, slotEnd,
            rows);
      }
      long total = 0;
      if (n > 0) {
        KernelLaunch.launch("join_count_kernel", blocks, exec.stream(), pk, bk, probeKeys.length, (long) n, g[1], table,
            cap - 1, slotRows, dups, code(kind), (long) m, counts, offsets, matched, found);
        KernelLaunch.launch("scan_offsets_i64_kernel", 1, exec.stream(), offsets, blocks);
        total = exec.readLongs(offsets, 8L * blocks, 1)[0];
      }
      Filter.DeviceRows unmatched = null;
      if (markBuild) {
        DeviceBuffer mask = exec.allocate(4 * ((m + 31L) / 32 + 1));
        temps.add(mask);
        KernelLaunch.launch("join_marked_rows_kernel", KernelLaunch.gridFor(exec.stream().device(), (m + 31L) / 32),
            exec.stream(), rowSlot, matched, (long) m, 0, mask);
        unmatched = Filter.keptRows(exec, mask, null, m);
        temps.add(unmatched.rows());
      }
      long size = total + (unmatched == null ? 0 : unmatched.count());
      if (size >= Integer.MAX_VALUE) {
        throw new UserException("a " + kind + " join of " + n + " and " + m + " rows gives " + size
            + " rows, more than a table's 2^31 - 1");
      }
      DeviceBuffer l = exec.allocate(4 * Math.max(1, size));
      DeviceBuffer r = null;
      try {
        r = pairs ? exec.allocate(4 * Math.max(1, size)) : null;
        if (n > 0) {
          KernelLaunch.launch("join_write_kernel", blocks, exec.stream(), (long) n, g[1], table, slotRows, slotEnd, rows,
              dups, code(kind), counts, offsets, found, l, r);
        }
        if (unmatched != null) {
          exec.fill(l, 4 * total, 4L * unmatched.count(), (byte) 0xFF);
          exec.copy(r, 4 * total, unmatched.rows(), 0, 4L * unmatched.count());
        }
        return new Maps(l, r, (int) size);
      } catch (RuntimeException e) {
        l.close();
        if (r != null) {
          r.close();
        }
        throw e;
      }
    } finally {
      temps.forEach(DeviceBuffer::close);
    }
  }

  private static int code(Join.Kind kind) {
    return switch (kind) {
      case INNER -> 0;
      case LEFT -> 1;
      case RIGHT -> 2;
      case FULL -> 3;
      case SEMI -> 4;
      case ANTI -> 5;
      case NULL_AWARE_ANTI -> 6;
      case CROSS -> throw new IllegalArgumentException("a CROSS join has no keys to hash");
    };
  }

  private static List<DeviceColumn> columns(DeviceTable t, int[] cols) {
    List<DeviceColumn> out = new ArrayList<>();
    for (int c : cols) {
      out.add(t.column(c));
    }
    return out;
  }

  /**
   * Candidate pairs (key matches, or every pair without keys), the residual evaluated on them,
   * and the kind's decision.
   */
  private static Maps withResidual(Exec exec, DeviceTable left, DeviceTable right, int[] leftKeys, int[] rightKeys,
      Join.Kind kind, Expr residual) {
    int n = left.rowCount();
    int m = right.rowCount();
    // Join.decide reads candidates in left row order: only INNER may build on the left
    Maps candidates = leftKeys.length == 0 ? cross(exec, n, m)
        : kind == Join.Kind.INNER ? maps(exec, left, right, leftKeys, rightKeys, kind)
        : probe(exec, left, right, leftKeys, rightKeys, Join.Kind.INNER);
    boolean inner = kind == Join.Kind.INNER || kind == Join.Kind.CROSS;
    if (residual == null && inner) {
      return candidates;
    }
    try (candidates; DeviceTable pairs = candidates.toTable(exec);
        DeviceColumn mask = residual == null ? null : holds(exec, left, right, candidates, residual)) {
      if (inner) {
        try (DeviceTable kept = Filter.filter(exec, pairs, mask)) {
          return new Maps(shared(kept.column(0).data()), shared(kept.column(1).data()), kept.rowCount());
        }
      }
      // the other kinds decide on the host, over the maps and the mask only
      List<DeviceColumn> both = new ArrayList<>(List.of(pairs.column(0), pairs.column(1)));
      if (mask != null) {
        both.add(mask);
      }
      both.forEach(DeviceColumn::retain);
      try (DeviceTable device = new DeviceTable(exec.gpu(), List.of("l", "r", "m").subList(0, both.size()), both,
          pairs.rowCount());
          HostTable host = device.toHost(exec.allocator(), exec.stream())) {
        int[][] c = {ints((IntVector) host.column(0).vector()), ints((IntVector) host.column(1).vector())};
        boolean[] hold = null;
        if (mask != null) {
          BitVector v = (BitVector) host.column(2).vector();
          hold = new boolean[c[0].length];
          for (int i = 0; i < hold.length; i++) {
            hold[i] = !v.isNull(i) && v.get(i) == 1;
          }
        }
        int[][] decided = Join.decide(c, hold, n, m, kind);
        DeviceBuffer l = exec.upload(decided[0]);
        try {
          return new Maps(l, exec.upload(decided[1]), decided[0].length);
        } catch (RuntimeException e) {
          l.close();
          throw e;
        }
      }
    }
  }

  private static DeviceBuffer shared(DeviceBuffer b) {
    b.retain();
    return b;
  }

  private static int[] ints(IntVector v) {
    int[] out = new int[v.getValueCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = v.get(i);
    }
    return out;
  }

  private static Maps cross(Exec exec, int n, int m) {
    long total = (long) n * m;
    if (total >= Integer.MAX_VALUE) {
      throw new UserException("a join without keys of " + n + " and " + m + " rows pairs " + total
          + " rows, more than a table's 2^31 - 1");
    }
    DeviceBuffer l = exec.allocate(4 * Math.max(1, total));
    DeviceBuffer r = null;
    try {
      r = exec.allocate(4 * Math.max(1, total));
      KernelLaunch.launch("join_cross_kernel", KernelLaunch.gridFor(exec.stream().device(), total), exec.stream(),
          (long) n, (long) m, l, r);
      return new Maps(l, r, (int) total);
    } catch (RuntimeException e) {
      l.close();
      if (r != null) {
        r.close();
      }
      throw e;
    }
  }

  /** The residual's BOOL mask over the candidate pairs: both sides' columns gathered, left first. */
  private static DeviceColumn holds(Exec exec, DeviceTable left, DeviceTable right, Maps pairs, Expr residual) {
    List<DeviceColumn> cols = new ArrayList<>();
    try {
      cols.addAll(GpuGather.pairs(exec, left, pairs.left(), false, right, pairs.right(), false, pairs.count()));
      List<String> names = new ArrayList<>();
      for (int i = 0; i < cols.size(); i++) {
        names.add("c" + i);
      }
      try (DeviceTable both = new DeviceTable(exec.gpu(), names, cols, pairs.count())) {
        cols.clear();
        DeviceColumn mask = Evaluate.evaluate(exec, both, residual);
        if (!mask.type().equals(DataType.BOOL)) {
          mask.close();
          throw new UserException("a join condition must be BOOLEAN, not " + mask.type());
        }
        return mask;
      }
    } finally {
      cols.forEach(DeviceColumn::close);
    }
  }
}
