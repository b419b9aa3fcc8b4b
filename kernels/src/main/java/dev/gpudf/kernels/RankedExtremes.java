package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import java.util.ArrayList;
import java.util.List;
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
    try (Column order = ColumnOps.argsort(exec, column, order(min));
        Column first = ColumnOps.slice(exec, order, 0, 1);
        Column value = ColumnOps.gather(exec, column, first);
        Table<?> row = ColumnOps.table(exec, value);
        VectorSchemaRoot host = row instanceof dev.gpudf.columnar.DeviceTable d ? d.toArrow(exec.allocator(), exec.stream())
            : row.toArrow(exec.allocator())) {
      return new Scalar(column.type(), host.getVector(0).getObject(0).toString());
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
        columns.add(ColumnOps.kept(table.column(c)));
      }
      List<GroupBy.Agg> byRank = new ArrayList<>(aggs);
      for (int i : ranked) {
        GroupBy.Agg a = aggs.get(i);
        Column order = ColumnOps.argsort(exec, table.column(a.column()), order(a.op() == Reduction.MIN));
        orders.add(order);
        // a permutation sorted gives its inverse: each row's position in the order
        columns.add(ColumnOps.argsort(exec, order, SortKey.asc(0)));
        byRank.set(i, new GroupBy.Agg(Reduction.MIN, columns.size() - 1));
        withNames.add("rank" + i);
      }
      List<Column> out = new ArrayList<>();
      try (T extended = (T) ColumnOps.table(exec, table instanceof DeviceTable, withNames, columns, table.rowCount())) {
        columns.clear();
        try (T grouped = grouper.group(extended, keys, byRank, names)) {
          for (int c = 0; c < grouped.columnCount(); c++) {
            int at = ranked.indexOf(c - keys.length);
            if (at < 0) {
              out.add(ColumnOps.kept(grouped.column(c)));
              continue;
            }
            try (Column rows = ColumnOps.gather(exec, orders.get(at), grouped.column(c))) {
              out.add(ColumnOps.gather(exec, table.column(aggs.get(c - keys.length).column()), rows));
            }
          }
          return (T) ColumnOps.table(exec, table instanceof DeviceTable, names, out, grouped.rowCount());
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
  private static SortKey order(boolean min) {
    return new SortKey(0, min, false);
  }
}
