package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * MIN and MAX over the types whose order only the sort knows: VARCHAR (bytes compared unsigned,
 * a prefix first), and in groups BOOLEAN and DECIMAL beyond 18 digits. A row's rank in the
 * column's sorted order (nulls last; descending for MAX) is an INT32, and the smallest rank of a
 * group names a row holding the group's extreme, or a NULL row when the group has no value. Both
 * backends use their own sort, group-by and gather, so this needs no kernel of its own.
 */
final class RankedExtremes {
  private RankedExtremes() {}

  /** Whether grouped MIN or MAX over {@code type} goes through ranks. */
  static boolean groupedByRank(DataType type) {
    return type.id() == TypeId.STRING || type.id() == TypeId.BOOL || (type.id() == TypeId.DECIMAL && !type.isDecimal64());
  }

  /** MIN ({@code min}) or MAX of a VARCHAR column; NULL when it holds no value. */
  static Scalar reduce(Exec exec, Column column, boolean min) {
    if (column.rowCount() == column.nullCount()) {
      return Scalar.nullOf(column.type());
    }
    try (Table<?> one = single(exec, column); Column order = argsort(exec, one, List.of(order(0, min)))) {
      int first = order instanceof DeviceColumn d ? exec.readInt(d.data(), 0)
          : ((IntVector) ((HostColumn) order).vector()).get(0);
      try (Table<?> row = one instanceof DeviceTable d ? Slice.slice(exec, d, first, 1) : Slice.slice(exec, (HostTable) one, first, 1);
          VectorSchemaRoot host = row.toArrow(exec.allocator())) {
        return new Scalar(column.type(), host.getVector(0).getObject(0).toString());
      }
    }
  }

  /**
   * {@code grouper} over {@code table}, with every MIN and MAX over a {@link #groupedByRank} type
   * computed from ranks: MIN over a rank column appended to the table, then the rank mapped back
   * to the row and the row to its value.
   */
  @SuppressWarnings("unchecked")
  static <T extends Table<?>> T aggregate(Exec exec, T table, int[] keys, List<GroupBy.Agg> aggs, List<String> names,
      GroupBy.Grouper<T> grouper) {
    List<Integer> ranked = new ArrayList<>();
    for (int i = 0; i < aggs.size(); i++) {
      GroupBy.Agg a = aggs.get(i);
      if ((a.op() == Reduction.MIN || a.op() == Reduction.MAX) && groupedByRank(table.column(a.column()).type())) {
        ranked.add(i);
      }
    }
    if (ranked.isEmpty()) {
      return grouper.group(table, keys, aggs, names);
    }
    List<Column> columns = new ArrayList<>();
    List<Column> orders = new ArrayList<>();
    try {
      List<String> withNames = new ArrayList<>(table.names());
      for (int c = 0; c < table.columnCount(); c++) {
        Column col = table.column(c);
        col.retain();
        columns.add(col);
      }
      List<GroupBy.Agg> byRank = new ArrayList<>(aggs);
      for (int i : ranked) {
        GroupBy.Agg a = aggs.get(i);
        try (Table<?> one = single(exec, table.column(a.column()))) {
          Column order = argsort(exec, one, List.of(order(0, a.op() == Reduction.MIN)));
          orders.add(order);
          // a permutation sorted gives its inverse: each row's position in the order
          try (Table<?> perm = single(exec, order)) {
            columns.add(argsort(exec, perm, List.of(SortKey.asc(0))));
          }
        }
        byRank.set(i, new GroupBy.Agg(Reduction.MIN, columns.size() - 1));
        withNames.add("rank" + i);
      }
      List<Column> out = new ArrayList<>();
      try (T extended = (T) table(exec, table, withNames, columns, table.rowCount())) {
        columns.clear();
        try (T grouped = grouper.group(extended, keys, byRank, names)) {
          for (int c = 0; c < grouped.columnCount(); c++) {
            int at = ranked.indexOf(c - keys.length);
            if (at < 0) {
              Column col = grouped.column(c);
              col.retain();
              out.add(col);
              continue;
            }
            try (Table<?> perm = single(exec, orders.get(at));
                Table<?> rows = gather(exec, perm, grouped.column(c));
                Table<?> values = single(exec, table.column(aggs.get(c - keys.length).column()));
                Table<?> picked = gather(exec, values, rows.column(0))) {
              Column col = picked.column(0);
              col.retain();
              out.add(col);
            }
          }
          return (T) table(exec, table, names, out, grouped.rowCount());
        } catch (RuntimeException e) {
          out.forEach(Column::close);
          throw e;
        }
      }
    } finally {
      columns.forEach(Column::close);
      orders.forEach(Column::close);
    }
  }

  /** Nulls last; ascending for MIN, descending for MAX. */
  private static SortKey order(int column, boolean min) {
    return new SortKey(column, min, false);
  }

  /** A one-column table sharing {@code c} (retained; closing the table releases it). */
  private static Table<?> single(Exec exec, Column c) {
    c.retain();
    return c instanceof DeviceColumn d ? new DeviceTable(exec.gpu(), List.of("c"), List.of(d), c.rowCount())
        : new HostTable(List.of("c"), List.of((HostColumn) c), c.rowCount());
  }

  private static Table<?> table(Exec exec, Table<?> like, List<String> names, List<Column> columns, int rows) {
    if (like instanceof DeviceTable) {
      return new DeviceTable(exec.gpu(), names, columns.stream().map(c -> (DeviceColumn) c).toList(), rows);
    }
    return new HostTable(names, columns.stream().map(c -> (HostColumn) c).toList(), rows);
  }

  private static Column argsort(Exec exec, Table<?> t, List<SortKey> keys) {
    return t instanceof DeviceTable d ? Sort.argsort(exec, d, keys) : Sort.argsort(exec, (HostTable) t, keys);
  }

  private static Table<?> gather(Exec exec, Table<?> t, Column map) {
    return t instanceof DeviceTable d ? Gather.gather(exec, d, (DeviceColumn) map) : Gather.gather(exec, (HostTable) t, (HostColumn) map);
  }
}
