package dev.gpudf.kernels;

import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * INTERSECT and EXCEPT over tables of the same column types, on the CPU: rows are equal when
 * every column is (two NULLs are equal, as SQL's set operations have it). DISTINCT keeps one row
 * of each qualifying group; ALL keeps min(counts) rows (INTERSECT) or count in the first input
 * less the counts in the others (EXCEPT). Rows come out in the order of their first appearance
 * in the first input.
 */
public final class SetOps {
  private SetOps() {}

  /** The rows of {@code inputs[0]} also in every other input, named {@code names}; the caller owns them. */
  public static HostTable intersect(Exec exec, List<HostTable> inputs, boolean all, List<String> names) {
    return apply(exec, inputs, all, true, names);
  }

  /** The rows of {@code inputs[0]} in none of the others (ALL: counted), named {@code names}; the caller owns them. */
  public static HostTable except(Exec exec, List<HostTable> inputs, boolean all, List<String> names) {
    return apply(exec, inputs, all, false, names);
  }

  private static HostTable apply(Exec exec, List<HostTable> inputs, boolean all, boolean intersect, List<String> names) {
    if (inputs.size() < 2) {
      throw new UserException("a set operation needs at least two inputs");
    }
    for (HostTable t : inputs) {
      if (!t.types().equals(inputs.get(0).types())) {
        throw new UserException("set operation inputs of different column types: " + inputs.get(0).types() + " and "
            + t.types());
      }
    }
    try (HostTable rows = Concat.concat(exec, inputs.toArray(HostTable[]::new))) {
      List<HostColumn> cols = new ArrayList<>();
      for (int c = 0; c < rows.columnCount(); c++) {
        cols.add(rows.column(c));
      }
      HostKeys keys = new HostKeys(cols);
      int n = rows.rowCount();
      int k = inputs.size();
      int[] start = new int[k + 1];
      for (int i = 0; i < k; i++) {
        start[i + 1] = start[i] + inputs.get(i).rowCount();
      }
      // group of each row: chained hash table over all rows; counts[group * k + input]
      int cap = Integer.highestOneBit(Math.max(4, n * 2 - 1)) << 1;
      int[] head = new int[cap];
      Arrays.fill(head, -1);
      int[] next = new int[n];
      int[] firstRow = new int[n];
      if ((long) n * k > Integer.MAX_VALUE) {
        throw new UserException("a set operation over " + n + " rows of " + k + " inputs is too large");
      }
      long[] counts = new long[n * k];
      int groups = 0;
      int input = 0;
      for (int i = 0; i < n; i++) {
        while (i >= start[input + 1]) {
          input++;
        }
        long h = keys.hash(i);
        int slot = (int) (h ^ (h >>> 29)) & (cap - 1);
        int g = -1;
        for (int e = head[slot]; e >= 0; e = next[e]) {
          if (keys.matches(firstRow[e], keys, i, true)) {
            g = e;
            break;
          }
        }
        if (g < 0) {
          g = groups++;
          firstRow[g] = i;
          next[g] = head[slot];
          head[slot] = g;
        }
        counts[g * k + input]++;
      }
      List<Integer> out = new ArrayList<>();
      for (int g = 0; g < groups; g++) {
        if (firstRow[g] >= start[1]) {
          continue;
        }
        long keep = counts[g * k];
        for (int j = 1; j < k; j++) {
          long there = counts[g * k + j];
          // DISTINCT EXCEPT drops a row found in any other input, however often it is in the first
          keep = intersect ? Math.min(keep, there) : all ? keep - there : there > 0 ? 0 : keep;
        }
        keep = all ? keep : Math.min(keep, 1);
        for (long c = 0; c < keep; c++) {
          out.add(firstRow[g]);
        }
      }
      try (HostTable picked = CpuGather.tableWithNulls(exec.allocator(), rows, out.stream().mapToInt(Integer::intValue).toArray())) {
        List<HostColumn> named = new ArrayList<>();
        for (int c = 0; c < picked.columnCount(); c++) {
          picked.column(c).retain();
          named.add(picked.column(c));
        }
        return new HostTable(names, named, picked.rowCount());
      }
    }
  }
}
