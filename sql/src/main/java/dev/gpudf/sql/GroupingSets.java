package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Expr;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.util.ImmutableBitSet;

/**
 * GROUPING SETS, ROLLUP and CUBE: the input runs once, each grouping set aggregates it on the
 * session's backend, the keys a set leaves out become NULL columns and GROUPING(...) its bits,
 * and the sets' rows follow one another in the order of the sets.
 */
final class GroupingSets {
  private GroupingSets() {}

  /** {@code agg}'s rows over every one of its grouping sets; the caller closes the result. */
  static Table<?> execute(QueryContext ctx, GpuAggregate agg) {
    List<String> names = agg.getRowType().getFieldNames();
    List<Table<?>> parts = new ArrayList<>();
    try (Table<?> in = agg.input(ctx, 0)) {
      for (ImmutableBitSet set : agg.getGroupSets()) {
        parts.add(widened(ctx, agg, in, set, names));
      }
      return TableOps.concat(ctx.exec(), parts, names);
    } finally {
      parts.forEach(Table::close);
    }
  }

  /** One grouping set's rows in the aggregate's row shape: every key of the GROUP BY, then the calls. */
  private static Table<?> widened(QueryContext ctx, GpuAggregate agg, Table<?> in, ImmutableBitSet set, List<String> names) {
    List<String> partNames = new ArrayList<>();
    set.forEach(k -> partNames.add(names.get(agg.getGroupSet().indexOf(k))));
    partNames.addAll(names.subList(agg.getGroupCount(), names.size()));
    try (Table<?> grouped = agg.aggregate(ctx, in, set, partNames);
        Table<?> part = agg.withLiterals(ctx, grouped, set)) {
      List<Column> columns = new ArrayList<>();
      try {
        for (int key : agg.getGroupSet()) {
          if (set.get(key)) {
            Column c = part.column(set.indexOf(key));
            c.retain();
            columns.add(c);
          } else {
            columns.add(TableOps.evaluate(ctx.exec(), part, Expr.nullOf(in.types().get(key))));
          }
        }
        for (int c = set.cardinality(); c < part.columnCount(); c++) {
          part.column(c).retain();
          columns.add(part.column(c));
        }
      } catch (RuntimeException e) {
        columns.forEach(Column::close);
        throw e;
      }
      return TableOps.table(ctx.exec(), part, names, columns, part.rowCount());
    }
  }
}
