package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Op;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;

/**
 * INTERSECT and EXCEPT (DISTINCT) on either backend as one group-by: every input's rows get one
 * 0/1 column per input saying where they came from, the inputs are concatenated and grouped by
 * all their columns (two NULLs are equal, as the set operations have it), and the groups whose
 * per-input counts qualify are kept: found in every input (INTERSECT), or in the first and in no
 * other (EXCEPT). The ALL forms, which repeat rows by count, run on the CPU twin
 * ({@link dev.gpudf.kernels.SetOps}).
 */
final class DistinctSetOps {
  private DistinctSetOps() {}

  /** Runs {@code rel}'s inputs and keeps their qualifying rows, under {@code rel}'s column names; the caller closes the result. */
  static Table<?> run(QueryContext ctx, GpuRel rel, boolean intersect) {
    List<Table<?>> inputs = new ArrayList<>();
    try {
      for (int i = 0; i < rel.getInputs().size(); i++) {
        inputs.add(rel.input(ctx, i));
      }
      return apply(ctx, inputs, intersect, rel.getRowType().getFieldNames());
    } finally {
      inputs.forEach(Table::close);
    }
  }

  /** The qualifying rows of {@code inputs} (which the caller keeps), named {@code names}; the caller closes the result. */
  private static Table<?> apply(QueryContext ctx, List<Table<?>> inputs, boolean intersect, List<String> names) {
    int k = inputs.size();
    int columns = names.size();
    for (Table<?> t : inputs) {
      if (!t.types().equals(inputs.get(0).types())) {
        throw new UserException("set operation inputs of different column types: " + inputs.get(0).types() + " and "
            + t.types());
      }
    }
    List<String> tagged = new ArrayList<>(names);
    for (int j = 0; j < k; j++) {
      tagged.add("$from" + j);
    }
    List<Table<?>> parts = new ArrayList<>();
    try {
      for (int i = 0; i < k; i++) {
        parts.add(withOrigin(ctx, inputs.get(i), i, k, tagged));
      }
      int[] keys = java.util.stream.IntStream.range(0, columns).toArray();
      List<GroupBy.Agg> aggs = new ArrayList<>();
      for (int j = 0; j < k; j++) {
        aggs.add(new GroupBy.Agg(Reduction.SUM, columns + j));
      }
      try (Table<?> all = TableOps.concat(ctx.exec(), parts, tagged);
          Table<?> groups = TableOps.groupBy(ctx.exec(), all, keys, aggs, tagged)) {
        Expr keep = null;
        for (int j = 0; j < k; j++) {
          // INTERSECT: in every input; EXCEPT: in the first (every group is in some input) and in no other
          if (j == 0 && !intersect) {
            continue;
          }
          Expr test = Expr.call(intersect ? Op.GT : Op.EQ, Expr.col(columns + j), Expr.lit(0L));
          keep = keep == null ? test : Expr.call(Op.AND, keep, test);
        }
        try (Column mask = TableOps.evaluate(ctx.exec(), groups, keep);
            Table<?> kept = TableOps.filter(ctx.exec(), groups, mask)) {
          List<Column> out = new ArrayList<>();
          for (int c = 0; c < columns; c++) {
            kept.column(c).retain();
            out.add(kept.column(c));
          }
          return TableOps.table(ctx.exec(), kept, names, out, kept.rowCount());
        }
      }
    } finally {
      parts.forEach(Table::close);
    }
  }

  /** {@code t}'s columns, then {@code k} INT64 columns: 1 in column {@code i}, 0 in the others. */
  private static Table<?> withOrigin(QueryContext ctx, Table<?> t, int i, int k, List<String> names) {
    List<Column> cols = new ArrayList<>();
    try {
      for (int c = 0; c < t.columnCount(); c++) {
        t.column(c).retain();
        cols.add(t.column(c));
      }
      for (int j = 0; j < k; j++) {
        cols.add(TableOps.evaluate(ctx.exec(), t, Expr.lit(j == i ? 1L : 0L)));
      }
    } catch (RuntimeException e) {
      cols.forEach(Column::close);
      throw e;
    }
    return TableOps.table(ctx.exec(), t, names, cols, t.rowCount());
  }
}
