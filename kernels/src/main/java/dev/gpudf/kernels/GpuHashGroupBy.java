package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU twin of {@link GroupBy} ({@code groupby.cu}): a hash table of the key rows in device
 * memory gives every row a dense group id, numbered in the order of the groups' first rows, and
 * each aggregate accumulates per group with atomics. Results equal the CPU twin's except for the
 * last bits of float sums, means and variances (their additions run in another order).
 */
final class GpuHashGroupBy {
  /**
   * Up to this many groups an integer or decimal SUM (or MEAN) sums each thread's rows in its own
   * registers ({@code kPrivateGroups} in {@code groupby.cu}): a few groups are a few hot addresses.
   */
  static final int PRIVATE_GROUPS = 4;

  private GpuHashGroupBy() {}

  /** See {@link GroupBy#aggregate(Exec, DeviceTable, int[], List, List)}. */
  static DeviceTable aggregate(Exec exec, DeviceTable table, int[] keys, List<GroupBy.Agg> aggs, List<String> names) {
    return aggregate(exec, table, keys, aggs, names, null);
  }

  /**
   * {@link #aggregate(Exec, DeviceTable, int[], List, List)} over only the rows where {@code keep}
   * (a BOOL column of the table's rows, borrowed; null counts as false; null: every row) holds:
   * the others join no group, and every aggregate passes over them.
   */
  static DeviceTable aggregate(Exec exec, DeviceTable table, int[] keys, List<GroupBy.Agg> aggs, List<String> names,
      DeviceColumn keep) {
    int n = table.rowCount();
    List<DeviceColumn> keyCols = new ArrayList<>();
    for (int k : keys) {
      keyCols.add(table.column(k));
    }
    long cap = GpuKeys.capacity(n);
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    List<DeviceColumn> out = new ArrayList<>();
    try (DeviceBuffer desc = GpuKeys.describe(exec, keyCols);
        DeviceBuffer slots = exec.allocate(8 * cap);
        DeviceBuffer groupOf = exec.allocate(4L * Math.max(1, n));
        DeviceBuffer leaderMask = exec.allocate(4 * ((n + 31L) / 32 + 1));
        DeviceBuffer bad = exec.allocateZeroed(8)) {
      exec.fill(slots, 0, 8 * cap, (byte) 0xFF);
      KernelLaunch.launch("groupby_insert_kernel", grid, exec.stream(), desc, keys.length, (long) n,
          keep == null ? null : keep.data(), keep == null ? null : keep.validity(), slots, cap - 1, groupOf);
      KernelLaunch.launch("groupby_first_kernel", grid, exec.stream(), (long) n, groupOf, slots);
      // a warp per 32-row word
      KernelLaunch.launch("groupby_leader_mask_kernel", grid, exec.stream(), (long) n, groupOf, slots, leaderMask);
      try (Filter.DeviceRows leaders = Filter.keptRows(exec, leaderMask, null, n)) {
        int groups = leaders.count();
        KernelLaunch.launch("groupby_label_kernel", KernelLaunch.gridFor(exec.stream().device(), groups), exec.stream(),
            leaders.rows(), (long) groups, groupOf, slots);
        KernelLaunch.launch("groupby_assign_kernel", grid, exec.stream(), (long) n, groupOf, slots);
        out.addAll(GpuGather.columns(exec, keyCols, leaders.rows(), groups, false, bad, -1));
        out.addAll(aggregates(exec, table, aggs, groupOf, groups));
        return new DeviceTable(exec.gpu(), names, out, groups);
      }
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
  }

  /**
   * An aggregate's column before the device is waited for: its null count is the {@code groups}
   * minus the set bits counted into its second wait slot, and a non-zero first slot means its sum
   * overflowed ({@code overflow} says how). {@code done} is a column finished already.
   */
  private record Partial(DataType type, DeviceBuffer data, DeviceBuffer validity, String overflow, DeviceColumn done) {
    static Partial of(DeviceColumn done) {
      return new Partial(null, null, null, null, done);
    }

    void close() {
      if (done != null) {
        done.close();
      } else {
        data.close();
        validity.close();
      }
    }
  }

  /**
   * Every aggregate's column, waiting for the device once for all of them (their overflow checks
   * and null counts) instead of once or twice each.
   */
  private static List<DeviceColumn> aggregates(Exec exec, DeviceTable table, List<GroupBy.Agg> aggs, DeviceBuffer groupOf,
      int groups) {
    List<Partial> partials = new ArrayList<>();
    java.util.Map<Integer, Sums> sums = new java.util.HashMap<>();
    try (DeviceBuffer waits = exec.allocateZeroed(16L * Math.max(1, aggs.size()))) {
      for (int i = 0; i < aggs.size(); i++) {
        partials.add(aggregate(exec, table, aggs.get(i), groupOf, groups, waits.address() + 16L * i, sums));
      }
      long[] waited = aggs.isEmpty() ? new long[0] : exec.readLongs(waits, 2 * aggs.size());
      for (int i = 0; i < partials.size(); i++) {
        if (partials.get(i).overflow() != null && waited[2 * i] != 0) {
          throw new UserException(partials.get(i).overflow());
        }
      }
      List<DeviceColumn> out = new ArrayList<>();
      for (int i = 0; i < partials.size(); i++) {
        Partial p = partials.get(i);
        out.add(p.done() != null ? p.done()
            : new DeviceColumn(p.type(), groups, groups - (int) waited[2 * i + 1], p.data(), null, p.validity()));
      }
      return out;
    } catch (RuntimeException e) {
      partials.forEach(Partial::close);
      throw e;
    } finally {
      sums.values().forEach(Sums::close);
    }
  }

  /**
   * An integer or decimal column's 192-bit sums and non-null counts per group, made once for every
   * SUM and AVG of that column in one grouping (TPC-H q1 sums and averages the same quantity and
   * price).
   */
  private record Sums(DeviceBuffer acc, DeviceBuffer count) {
    void close() {
      acc.close();
      count.close();
    }
  }

  /**
   * One aggregate; {@code slots} is the address of its two wait slots (see {@link Partial});
   * {@code sums} holds the integer sums made so far by column, which the caller closes.
   */
  private static Partial aggregate(Exec exec, DeviceTable table, GroupBy.Agg agg, DeviceBuffer groupOf, int groups,
      long slots, java.util.Map<Integer, Sums> sums) {
    int n = table.rowCount();
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    int groupGrid = KernelLaunch.gridFor(exec.stream().device(), groups);
    long perGroup = Math.max(1, groups);
    DeviceColumn col = agg.op() == Reduction.COUNT_ALL ? null : table.column(agg.column());
    // temps are closed on the way out; results move into the returned column
    List<DeviceBuffer> temps = new ArrayList<>();
    List<DeviceBuffer> results = new ArrayList<>();
    try {
      if (agg.op() == Reduction.COUNT_ALL || agg.op() == Reduction.COUNT_VALID) {
        DeviceBuffer count = track(results, exec.allocateZeroed(8 * perGroup));
        KernelLaunch.launch("groupby_count_kernel", grid, exec.stream(), col == null ? null : col.validity(), (long) n,
            groupOf, count, (long) groups);
        return Partial.of(new DeviceColumn(DataType.INT64, groups, 0, count, null, null));
      }
      DataType type = col.type();
      PhysicalType p = PhysicalType.of(type);
      boolean intSum = (agg.op() == Reduction.SUM || agg.op() == Reduction.MEAN) && !p.isFloat();
      Sums shared = intSum ? sums.get(agg.column()) : null;
      DeviceBuffer count = shared != null ? shared.count() : exec.allocateZeroed(8 * perGroup);
      if (shared == null) {
        temps.add(count);
      }
      String suffix = p.suffix();
      DataType outType;
      DeviceBuffer data;
      String overflow = null;
      long minCount = 0;
      switch (agg.op()) {
        case SUM, MEAN -> {
          if (p.isFloat()) {
            outType = DataType.FLOAT64;
            data = track(results, exec.allocateZeroed(8 * perGroup));
            KernelLaunch.launch("groupby_sum_float_" + suffix + "_kernel", grid, exec.stream(), col.data(), col.validity(),
                (long) n, groupOf, null, data, count);
            KernelLaunch.launch("groupby_finish_sum_float_kernel", groupGrid, exec.stream(), data, count, (long) groups,
                agg.op() == Reduction.SUM ? 0 : 1, data);
          } else {
            boolean decimal = type.id() == TypeId.DECIMAL;
            outType = agg.op() == Reduction.MEAN ? DataType.FLOAT64
                : decimal ? DataType.decimal(DataType.MAX_DECIMAL_PRECISION, type.scale()) : DataType.INT64;
            DeviceBuffer acc;
            if (shared != null) {
              acc = shared.acc();
            } else {
              acc = exec.allocateZeroed(24 * perGroup);
              // from here the sums are the caller's to close, for the column's other SUM or AVG
              temps.remove(count);
              sums.put(agg.column(), new Sums(acc, count));
              String kernel = groups <= PRIVATE_GROUPS ? "groupby_sum_int_private_" : "groupby_sum_int_";
              KernelLaunch.launch(kernel + suffix + "_kernel", grid, exec.stream(), col.data(), col.validity(), (long) n,
                  groupOf, acc, count, (long) groups);
            }
            data = track(results, exec.allocate((outType.id() == TypeId.DECIMAL ? 16 : 8) * perGroup));
            int mode = agg.op() == Reduction.MEAN ? 2 : decimal ? 1 : 0;
            // the overflow flag goes to the first wait slot
            KernelLaunch.launch("groupby_finish_sum_int_kernel", groupGrid, exec.stream(), acc, count, (long) groups, mode,
                decimal ? type.scale() : 0, data, slots);
            overflow = decimal ? "SUM overflows DECIMAL(38, " + type.scale() + ") in a group" : "SUM overflows INT64 in a group";
          }
        }
        case MIN, MAX -> {
          outType = type;
          int isMax = agg.op() == Reduction.MAX ? 1 : 0;
          data = track(results, exec.allocate(p.deviceWidth * perGroup));
          DeviceBuffer acc = track(temps, exec.allocate(8 * perGroup));
          if (p.isFloat()) {
            DeviceBuffer nans = track(temps, exec.allocateZeroed(8 * perGroup));
            exec.fill(acc, 0, 8L * groups, (byte) (isMax == 1 ? 0 : 0xFF));
            KernelLaunch.launch("groupby_minmax_float_" + suffix + "_kernel", grid, exec.stream(), col.data(),
                col.validity(), (long) n, groupOf, isMax, acc, nans, count);
            KernelLaunch.launch("groupby_finish_minmax_float_kernel", groupGrid, exec.stream(), acc, nans, count,
                (long) groups, isMax, p == PhysicalType.F32 ? 1 : 0, data);
          } else {
            KernelLaunch.launch("fill_i64_kernel", groupGrid, exec.stream(), acc, (long) groups,
                isMax == 1 ? Long.MIN_VALUE : Long.MAX_VALUE);
            KernelLaunch.launch("groupby_minmax_int_" + suffix + "_kernel", grid, exec.stream(), col.data(),
                col.validity(), (long) n, groupOf, isMax, acc, count);
            KernelLaunch.launch("groupby_finish_minmax_int_kernel", groupGrid, exec.stream(), acc, count, (long) groups,
                p.deviceWidth, data);
          }
        }
        case VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP -> {
          // two passes: the group means, then the squared distances from them
          outType = DataType.FLOAT64;
          boolean sample = agg.op() == Reduction.VAR_SAMP || agg.op() == Reduction.STDDEV_SAMP;
          minCount = sample ? 1 : 0;
          String floatSums = "groupby_sum_float_" + suffix + "_kernel";
          DeviceBuffer mean = track(temps, exec.allocateZeroed(8 * perGroup));
          KernelLaunch.launch(floatSums, grid, exec.stream(), col.data(), col.validity(), (long) n, groupOf, null, mean, count);
          KernelLaunch.launch("groupby_finish_sum_float_kernel", groupGrid, exec.stream(), mean, count, (long) groups, 1,
              mean);
          data = track(results, exec.allocateZeroed(8 * perGroup));
          KernelLaunch.launch(floatSums, grid, exec.stream(), col.data(), col.validity(), (long) n, groupOf, mean, data, null);
          int op = switch (agg.op()) {
            case VAR_POP -> 2;
            case VAR_SAMP -> 3;
            case STDDEV_POP -> 4;
            default -> 5;
          };
          KernelLaunch.launch("groupby_finish_sum_float_kernel", groupGrid, exec.stream(), data, count, (long) groups, op,
              data);
        }
        default -> {
          // ANY_VALUE: the group's first non-null row, gathered
          DeviceBuffer first = track(temps, exec.allocate(8 * perGroup));
          DeviceBuffer map = track(temps, exec.allocate(4 * perGroup));
          DeviceBuffer bad = track(temps, exec.allocateZeroed(8));
          KernelLaunch.launch("fill_i64_kernel", groupGrid, exec.stream(), first, (long) groups, Long.MAX_VALUE);
          KernelLaunch.launch("groupby_first_valid_kernel", grid, exec.stream(), col.validity(), (long) n, groupOf, first);
          KernelLaunch.launch("groupby_first_to_map_kernel", groupGrid, exec.stream(), first, (long) groups, map);
          return Partial.of(GpuGather.column(exec, col, map, groups, true, bad));
        }
      }
      DeviceBuffer validity = track(results, exec.allocate(4 * ((groups + 31L) / 32 + 1)));
      // the valid groups are counted into the second wait slot by the same launch
      KernelLaunch.launch("groupby_validity_kernel", KernelLaunch.gridFor(exec.stream().device(), (groups + 31L) / 32),
          exec.stream(), count, (long) groups, minCount, validity, slots + 8);
      return new Partial(outType, data, validity, overflow, null);
    } catch (RuntimeException e) {
      results.forEach(DeviceBuffer::close);
      throw e;
    } finally {
      temps.forEach(DeviceBuffer::close);
    }
  }

  private static DeviceBuffer track(List<DeviceBuffer> list, DeviceBuffer b) {
    list.add(b);
    return b;
  }
}
