package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Op;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.Scalar;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.util.ImmutableBitSet;

/**
 * GROUPING SETS, ROLLUP and CUBE on the session's backend. Where every aggregate can be rolled
 * up (COUNT, SUM, MIN, MAX, AVG as a SUM and a COUNT), the input is aggregated once, by every
 * key of the GROUP BY, and each grouping set aggregates that much smaller result; otherwise
 * (VAR, STDDEV, ANY_VALUE, ...) each set aggregates the input, which runs once. The keys a set
 * leaves out are NULL columns and GROUPING(...) its bits; the sets' rows follow one another in
 * the order of the sets.
 */
final class GroupingSets {
  private GroupingSets() {}

  /** {@code agg}'s rows over every one of its grouping sets; the caller closes the result. */
  static Table<?> execute(QueryContext ctx, GpuAggregate agg) {
    List<String> names = agg.getRowType().getFieldNames();
    List<Table<?>> parts = new ArrayList<>();
    try (Table<?> in = agg.input(ctx, 0)) {
      List<Partial> partials = partials(agg);
      try (Table<?> finest = partials == null ? null : finest(ctx, agg, in, partials)) {
        for (ImmutableBitSet set : agg.getGroupSets()) {
          try (Table<?> part = finest == null ? direct(ctx, agg, in, set, partNames(agg, set, names))
              : rolledUp(ctx, agg, finest, partials, set, partNames(agg, set, names))) {
            parts.add(widened(ctx, agg, in, part, set, names));
          }
        }
      }
      return TableOps.concat(ctx.exec(), parts, names);
    } finally {
      parts.forEach(Table::close);
    }
  }

  /** One grouping set aggregated from the input: its keys, then one column per call. */
  private static Table<?> direct(QueryContext ctx, GpuAggregate agg, Table<?> in, ImmutableBitSet set, List<String> names) {
    try (Table<?> grouped = agg.aggregate(ctx, in, set, names)) {
      return agg.withLiterals(ctx, grouped, set);
    }
  }

  /**
   * How one call rolls up: its partial aggregate over the input (an AVG has two, a SUM and a
   * COUNT) and how partials combine across rows of the finest grouping.
   */
  private record Partial(Reduction first, Reduction combine, int arg, boolean avg) {
    /** Whether the (first) partial counts rows, so that it is 0, not NULL, over no rows. */
    boolean counts() {
      return first == Reduction.COUNT_ALL || first == Reduction.COUNT_VALID;
    }
  }

  /** Each call's roll-up, or null when one cannot roll up. */
  private static List<Partial> partials(GpuAggregate agg) {
    List<Partial> out = new ArrayList<>();
    for (AggregateCall call : agg.getAggCallList()) {
      int arg = call.getArgList().isEmpty() ? 0 : call.getArgList().get(0);
      Partial p = switch (call.getAggregation().getKind()) {
        case COUNT -> new Partial(call.getArgList().isEmpty() ? Reduction.COUNT_ALL : Reduction.COUNT_VALID, Reduction.SUM,
            arg, false);
        case SUM -> new Partial(Reduction.SUM, Reduction.SUM, arg, false);
        case MIN -> new Partial(Reduction.MIN, Reduction.MIN, arg, false);
        case MAX -> new Partial(Reduction.MAX, Reduction.MAX, arg, false);
        case AVG -> new Partial(Reduction.SUM, Reduction.SUM, arg, true);
        // constants per row (GROUPING's bits): a placeholder column, replaced after grouping
        case GROUPING, GROUPING_ID, LITERAL_AGG -> new Partial(Reduction.COUNT_ALL, Reduction.SUM, 0, false);
        default -> null;
      };
      if (p == null) {
        return null;
      }
      out.add(p);
    }
    return out;
  }

  /** Every partial column, in call order (an AVG's SUM then its COUNT). */
  private static List<GroupBy.Agg> firstAggs(List<Partial> partials) {
    List<GroupBy.Agg> aggs = new ArrayList<>();
    for (Partial p : partials) {
      aggs.add(new GroupBy.Agg(p.first(), p.arg()));
      if (p.avg()) {
        aggs.add(new GroupBy.Agg(Reduction.COUNT_VALID, p.arg()));
      }
    }
    return aggs;
  }

  /** The input grouped by every key of the GROUP BY: keys, then the partial columns. */
  private static Table<?> finest(QueryContext ctx, GpuAggregate agg, Table<?> in, List<Partial> partials) {
    List<GroupBy.Agg> aggs = firstAggs(partials);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < agg.getGroupCount() + aggs.size(); i++) {
      names.add("$p" + i);
    }
    return TableOps.groupBy(ctx.exec(), in, agg.getGroupSet().toArray(), aggs, names);
  }

  /** One grouping set from the finest grouping: its keys, then one column per call. */
  private static Table<?> rolledUp(QueryContext ctx, GpuAggregate agg, Table<?> finest, List<Partial> partials,
      ImmutableBitSet set, List<String> names) {
    int keys = agg.getGroupCount();
    int partialCount = finest.columnCount() - keys;
    try (Table<?> combined = combine(ctx, agg, finest, partials, set, keys, partialCount)) {
      List<Column> columns = new ArrayList<>();
      try {
        int at = set.cardinality();
        for (int c = 0; c < at; c++) {
          columns.add(retained(combined.column(c)));
        }
        for (Partial p : partials) {
          if (p.avg()) {
            // AVG = SUM / COUNT as a DOUBLE, NULL where the count is 0
            columns.add(TableOps.evaluate(ctx.exec(), combined, Expr.caseWhen(
                List.of(Expr.call(Op.EQ, Expr.col(at + 1), Expr.lit(0L)), Expr.nullOf(DataType.FLOAT64)),
                Expr.call(Op.DIV, Expr.cast(Expr.col(at), DataType.FLOAT64), Expr.cast(Expr.col(at + 1), DataType.FLOAT64)))));
            at += 2;
          } else {
            columns.add(retained(combined.column(at++)));
          }
        }
      } catch (RuntimeException e) {
        columns.forEach(Column::close);
        throw e;
      }
      try (Table<?> part = TableOps.table(ctx.exec(), combined, names, columns, combined.rowCount())) {
        return agg.withLiterals(ctx, part, set);
      }
    }
  }

  /**
   * The finest grouping's partial columns combined by {@code set}'s keys (over all its rows when
   * the set is empty); the finest grouping itself for the set of every key.
   */
  private static Table<?> combine(QueryContext ctx, GpuAggregate agg, Table<?> finest, List<Partial> partials,
      ImmutableBitSet set, int keys, int partialCount) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < set.cardinality() + partialCount; i++) {
      names.add("$c" + i);
    }
    if (set.equals(agg.getGroupSet())) {
      return TableOps.renamed(ctx.exec(), finest, names);
    }
    List<GroupBy.Agg> aggs = new ArrayList<>();
    List<Boolean> counts = new ArrayList<>();
    int at = keys;
    for (Partial p : partials) {
      aggs.add(new GroupBy.Agg(p.combine(), at++));
      counts.add(p.counts());
      if (p.avg()) {
        aggs.add(new GroupBy.Agg(Reduction.SUM, at++));
        counts.add(true);
      }
    }
    if (!set.isEmpty()) {
      int[] positions = set.asList().stream().mapToInt(k -> agg.getGroupSet().indexOf(k)).toArray();
      return TableOps.groupBy(ctx.exec(), finest, positions, aggs, names);
    }
    // the grand total: one row, even over no rows (counts 0, the rest NULL)
    List<Scalar> values = new ArrayList<>();
    for (int i = 0; i < aggs.size(); i++) {
      Scalar s = TableOps.reduce(ctx.exec(), finest.column(aggs.get(i).column()), aggs.get(i).op());
      values.add(s.isNull() && counts.get(i) ? new Scalar(DataType.INT64, 0L) : s);
    }
    try (VectorSchemaRoot root = ScalarTables.of(ctx.exec().allocator(), names, values)) {
      return TableOps.load(finest instanceof DeviceTable ? ctx.exec().gpu() : null, root);
    }
  }

  private static Column retained(Column c) {
    c.retain();
    return c;
  }

  private static List<String> partNames(GpuAggregate agg, ImmutableBitSet set, List<String> names) {
    List<String> partNames = new ArrayList<>();
    set.forEach(k -> partNames.add(names.get(agg.getGroupSet().indexOf(k))));
    partNames.addAll(names.subList(agg.getGroupCount(), names.size()));
    return partNames;
  }

  /** One grouping set's rows ({@code part}: its keys, then the calls) in the aggregate's row shape: every key of the GROUP BY, then the calls. */
  private static Table<?> widened(QueryContext ctx, GpuAggregate agg, Table<?> in, Table<?> part, ImmutableBitSet set,
      List<String> names) {
    List<Column> columns = new ArrayList<>();
    try {
      for (int key : agg.getGroupSet()) {
        if (set.get(key)) {
          columns.add(retained(part.column(set.indexOf(key))));
        } else {
          columns.add(TableOps.evaluate(ctx.exec(), part, Expr.nullOf(in.types().get(key))));
        }
      }
      for (int c = set.cardinality(); c < part.columnCount(); c++) {
        columns.add(retained(part.column(c)));
      }
    } catch (RuntimeException e) {
      columns.forEach(Column::close);
      throw e;
    }
    return TableOps.table(ctx.exec(), part, names, columns, part.rowCount());
  }
}
