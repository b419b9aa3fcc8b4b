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
  private GpuHashGroupBy() {}

  /** See {@link GroupBy#aggregate(Exec, DeviceTable, int[], List, List)}. */
  static DeviceTable aggregate(Exec exec, DeviceTable table, int[] keys, List<GroupBy.Agg> aggs, List<String> names) {
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
      KernelLaunch.launch("groupby_insert_kernel", grid, exec.stream(), desc, keys.length, (long) n, slots, cap - 1,
          groupOf);
      KernelLaunch.launch("groupby_first_kernel", grid, exec.stream(), (long) n, groupOf, slots);
      KernelLaunch.launch("groupby_leader_mask_kernel", KernelLaunch.gridFor(exec.stream().device(), (n + 31L) / 32),
          exec.stream(), (long) n, groupOf, slots, leaderMask);
      try (Filter.DeviceRows leaders = Filter.keptRows(exec, leaderMask, null, n)) {
        int groups = leaders.count();
        KernelLaunch.launch("groupby_label_kernel", KernelLaunch.gridFor(exec.stream().device(), groups), exec.stream(),
            leaders.rows(), (long) groups, groupOf, slots);
        KernelLaunch.launch("groupby_assign_kernel", grid, exec.stream(), (long) n, groupOf, slots);
        out.addAll(GpuGather.columns(exec, keyCols, leaders.rows(), groups, false, bad, -1));
        for (GroupBy.Agg a : aggs) {
          out.add(aggregate(exec, table, a, groupOf, groups));
        }
        return new DeviceTable(exec.gpu(), names, out, groups);
      }
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
  }

  private static DeviceColumn aggregate(Exec exec, DeviceTable table, GroupBy.Agg agg, DeviceBuffer groupOf, int groups) {
    int n = table.rowCount();
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    int groupGrid = KernelLaunch.gridFor(exec.stream().device(), groups);
    long perGroup = Math.max(1, groups);
    DeviceColumn col = agg.op() == Reduction.COUNT_ALL ? null : table.column(agg.column());
    // temps are closed on the way out; results move into the returned column
    List<DeviceBuffer> temps = new ArrayList<>();
    List<DeviceBuffer> results = new ArrayList<>();
    try {
      DeviceBuffer count = exec.allocateZeroed(8 * perGroup);
      if (agg.op() == Reduction.COUNT_ALL || agg.op() == Reduction.COUNT_VALID) {
        results.add(count);
        KernelLaunch.launch("groupby_count_kernel", grid, exec.stream(), col == null ? null : col.validity(), (long) n,
            groupOf, count, (long) groups);
        return new DeviceColumn(DataType.INT64, groups, 0, count, null, null);
      }
      temps.add(count);
      DataType type = col.type();
      PhysicalType p = PhysicalType.of(type);
      String suffix = p.suffix();
      DataType outType;
      DeviceBuffer data;
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
            DeviceBuffer acc = track(temps, exec.allocateZeroed(24 * perGroup));
            DeviceBuffer bad = track(temps, exec.allocateZeroed(8));
            KernelLaunch.launch("groupby_sum_int_" + suffix + "_kernel", grid, exec.stream(), col.data(), col.validity(),
                (long) n, groupOf, acc, count, (long) groups);
            data = track(results, exec.allocate((outType.id() == TypeId.DECIMAL ? 16 : 8) * perGroup));
            int mode = agg.op() == Reduction.MEAN ? 2 : decimal ? 1 : 0;
            KernelLaunch.launch("groupby_finish_sum_int_kernel", groupGrid, exec.stream(), acc, count, (long) groups, mode,
                decimal ? type.scale() : 0, data, bad);
            if (exec.readLongs(bad, 1)[0] != 0) {
              throw new UserException(decimal ? "SUM overflows DECIMAL(38, " + type.scale() + ") in a group"
                  : "SUM overflows INT64 in a group");
            }
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
          String sums = "groupby_sum_float_" + suffix + "_kernel";
          DeviceBuffer mean = track(temps, exec.allocateZeroed(8 * perGroup));
          KernelLaunch.launch(sums, grid, exec.stream(), col.data(), col.validity(), (long) n, groupOf, null, mean, count);
          KernelLaunch.launch("groupby_finish_sum_float_kernel", groupGrid, exec.stream(), mean, count, (long) groups, 1,
              mean);
          data = track(results, exec.allocateZeroed(8 * perGroup));
          KernelLaunch.launch(sums, grid, exec.stream(), col.data(), col.validity(), (long) n, groupOf, mean, data, null);
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
          return GpuGather.column(exec, col, map, groups, true, bad);
        }
      }
      DeviceBuffer validity = track(results, exec.allocate(4 * ((groups + 31L) / 32 + 1)));
      KernelLaunch.launch("groupby_validity_kernel", KernelLaunch.gridFor(exec.stream().device(), (groups + 31L) / 32),
          exec.stream(), count, (long) groups, minCount, validity);
      int nulls = groups - (int) Bitmaps.countSet(exec.gpu(), validity, groups, exec.stream());
      return new DeviceColumn(outType, groups, nulls, data, null, validity);
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
