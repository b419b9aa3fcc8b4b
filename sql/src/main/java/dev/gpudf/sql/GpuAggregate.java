package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.TableOps;
import org.apache.calcite.sql.SqlKind;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Filter;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.Scalar;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.util.ImmutableBitSet;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Aggregation (COUNT, SUM, MIN, MAX, AVG, VAR_POP/VAR_SAMP, STDDEV_POP/STDDEV_SAMP, and
 * ANY_VALUE with GROUP BY): without GROUP BY each aggregate is a reduction of one column on the
 * session's backend; with GROUP BY the backend's hash group-by computes every aggregate over the
 * groups. DISTINCT aggregates arrive expanded into joins of group-bys by the planner.
 */
public final class GpuAggregate extends Aggregate implements GpuRel {
  GpuAggregate(RelOptCluster cluster, RelTraitSet traits, RelNode input, ImmutableBitSet groupSet,
      List<ImmutableBitSet> groupSets, List<AggregateCall> aggCalls) {
    super(cluster, traits, List.of(), input, groupSet, groupSets, aggCalls);
  }

  @Override
  public Aggregate copy(RelTraitSet traitSet, RelNode input, ImmutableBitSet groupSet, List<ImmutableBitSet> groupSets,
      List<AggregateCall> aggCalls) {
    return new GpuAggregate(getCluster(), traitSet, input, groupSet, groupSets, aggCalls);
  }

  /** Why this aggregate cannot run, or null when it can. */
  static String unsupported(Aggregate agg) {
    for (AggregateCall call : agg.getAggCallList()) {
      if (call.isDistinct() && agg.getGroupType() != Group.SIMPLE) {
        return "DISTINCT aggregates with GROUPING SETS, ROLLUP or CUBE are not supported yet: " + call;
      }
      if (call.isDistinct() || call.filterArg >= 0 || (call.getArgList().size() > 1 && !grouping(call))
          || reduction(call) == null) {
        return "aggregate " + call + " is not supported yet";
      }
      if (agg.getGroupSet().isEmpty() && call.getAggregation().getKind() == SqlKind.SINGLE_VALUE
          && !agg.getAggCallList().stream().allMatch(c -> c.getAggregation().getKind() == SqlKind.SINGLE_VALUE)) {
        return "a scalar sub-query's SINGLE_VALUE beside other aggregates is not supported yet";
      }
      if (agg.getGroupSet().isEmpty() && reduction(call) == Reduction.ANY_VALUE
          && call.getAggregation().getKind() != SqlKind.SINGLE_VALUE) {
        return "ANY_VALUE without GROUP BY is not supported yet";
      }
    }
    return null;
  }

  /** GROUPING(...) and GROUPING_ID(...): which keys a row's grouping set left out, as bits. */
  static boolean grouping(AggregateCall call) {
    return call.getAggregation().getKind() == SqlKind.GROUPING || call.getAggregation().getKind() == SqlKind.GROUPING_ID;
  }

  /**
   * The aggregates of every call grouped by {@code keys} of {@code in} (key columns first, in
   * {@code keys}' order), or over all of {@code in} when {@code keys} is empty; GROUPING calls
   * are placeholders here, and the caller replaces them. The caller closes the result.
   */
  Table<?> aggregate(QueryContext ctx, Table<?> in, ImmutableBitSet keys, List<String> names) {
    return keys.isEmpty() ? global(ctx, in, names) : grouped(ctx, in, keys, names);
  }

  private Table<?> grouped(QueryContext ctx, Table<?> in, ImmutableBitSet keys, List<String> outNames) {
    return grouped(ctx, in, keys, outNames, null);
  }

  /** {@link #grouped} over the rows {@code rows} of {@code in} only (null: every row). */
  private Table<?> grouped(QueryContext ctx, Table<?> in, ImmutableBitSet keys, List<String> outNames,
      Filter.Selection rows) {
    List<GroupBy.Agg> aggs = new ArrayList<>();
    for (AggregateCall call : getAggCallList()) {
      Reduction op = reduction(call);
      aggs.add(new GroupBy.Agg(op == Reduction.COUNT_ALL ? Reduction.COUNT_ALL : op,
          call.getArgList().isEmpty() ? 0 : call.getArgList().get(0)));
    }
    boolean single = getAggCallList().stream().anyMatch(c -> c.getAggregation().getKind() == SqlKind.SINGLE_VALUE);
    List<String> names = new ArrayList<>(outNames);
    if (single) {
      // a correlated scalar sub-query: each group (outer row) must have at most one value
      aggs.add(new GroupBy.Agg(Reduction.COUNT_ALL, 0));
      names.add("$rows");
    }
    Table<?> out = rows == null ? TableOps.groupBy(ctx.exec(), in, keys.toArray(), aggs, names)
        : GroupBy.aggregateSelected(ctx.exec(), in, keys.toArray(), aggs, names, rows);
    if (!single) {
      return out;
    }
    try (out) {
      Scalar most = TableOps.reduce(ctx.exec(), out.column(out.columnCount() - 1), Reduction.MAX);
      if (!most.isNull() && ((Number) most.value()).longValue() > 1) {
        throw new UserException(TOO_MANY_ROWS);
      }
      List<Column> kept = new ArrayList<>();
      for (int c = 0; c < out.columnCount() - 1; c++) {
        out.column(c).retain();
        kept.add(out.column(c));
      }
      return TableOps.table(ctx.exec(), out, outNames, kept, out.rowCount());
    }
  }

  /** PostgreSQL's words for a scalar sub-query that yields several rows (SQL's cardinality violation). */
  static final String TOO_MANY_ROWS = "more than one row returned by a subquery used as an expression";

  /**
   * A scalar sub-query's value ({@code SINGLE_VALUE} of every column, no GROUP BY): its one row,
   * one row of NULLs where it has none, and an error where it has several.
   */
  private Table<?> singleValues(QueryContext ctx) {
    try (Table<?> in = input(ctx, 0)) {
      if (in.rowCount() > 1) {
        throw new UserException(TOO_MANY_ROWS);
      }
      if (in.rowCount() == 1) {
        List<Column> columns = new ArrayList<>();
        for (AggregateCall call : getAggCallList()) {
          Column c = in.column(call.getArgList().get(0));
          c.retain();
          columns.add(c);
        }
        return TableOps.table(ctx.exec(), in, getRowType().getFieldNames(), columns, 1);
      }
      List<Scalar> nulls = new ArrayList<>();
      for (AggregateCall call : getAggCallList()) {
        nulls.add(Scalar.nullOf(in.types().get(call.getArgList().get(0))));
      }
      try (VectorSchemaRoot root = ScalarTables.of(ctx.exec().allocator(), getRowType().getFieldNames(), nulls)) {
        return TableOps.load(in instanceof DeviceTable ? ctx.exec().gpu() : null, root);
      }
    }
  }

  private static Reduction reduction(AggregateCall call) {
    return switch (call.getAggregation().getKind()) {
      case COUNT -> call.getArgList().isEmpty() ? Reduction.COUNT_ALL : Reduction.COUNT_VALID;
      case SUM, SUM0 -> call.getArgList().isEmpty() ? null : Reduction.SUM;
      case MIN -> Reduction.MIN;
      case MAX -> Reduction.MAX;
      case AVG -> Reduction.MEAN;
      case VAR_POP -> Reduction.VAR_POP;
      case VAR_SAMP -> Reduction.VAR_SAMP;
      case STDDEV_POP -> Reduction.STDDEV_POP;
      case STDDEV_SAMP -> Reduction.STDDEV_SAMP;
      case ANY_VALUE, SINGLE_VALUE -> call.getArgList().isEmpty() ? null : Reduction.ANY_VALUE;
      // a constant per group (decorrelated IN / EXISTS use it as a marker; GROUPING() the
      // grouping set's bits); added after grouping
      case LITERAL_AGG, GROUPING, GROUPING_ID -> Reduction.COUNT_ALL;
      default -> null;
    };
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    String why = unsupported(this);
    if (why != null) {
      throw new NotSupportedException(why);
    }
    if (getGroupSet().isEmpty() && !getAggCallList().isEmpty()
        && getAggCallList().get(0).getAggregation().getKind() == SqlKind.SINGLE_VALUE) {
      return singleValues(ctx);
    }
    if (getGroupType() != Group.SIMPLE) {
      return GroupingSets.execute(ctx, this);
    }
    try (Table<?> computed = computed(ctx)) {
      return withLiterals(ctx, computed, getGroupSet());
    }
  }

  /**
   * The share of a filter's rows it must keep for a grouping over it to take its kept rows rather
   * than its result: the rows it drops are then projected and grouped for nothing, where a
   * compaction would have copied the rows it keeps (on TPC-H q1's chunks projecting and grouping a
   * row took about 4.5 times the compaction's work).
   */
  private static final double KEPT_TO_GROUP_UNFILTERED = 0.9;

  /**
   * The aggregates of a SIMPLE grouping, before {@link #withLiterals}. Over a filter that nothing
   * else reads, directly or through a projection that nothing else reads, where the filter keeps
   * most rows (TPC-H q1: 98.5%): the grouping takes the filter's kept rows (on the GPU its mask)
   * and the columns are not compacted (q1's compaction copied every column of lineitem's chunk,
   * its two string keys too). The projection is then evaluated over every row; where that fails
   * (an expression that the filter guards, such as {@code x / y} under {@code y <> 0}) the rows
   * are compacted first, as otherwise.
   */
  private Table<?> computed(QueryContext ctx) {
    List<String> names = getRowType().getFieldNames();
    GpuProject project = getInput() instanceof GpuProject p && !ctx.readByOthers(p) ? p : null;
    RelNode below = project != null ? project.getInput() : getInput();
    if (getGroupSet().isEmpty() || !(below instanceof GpuFilter filter) || ctx.readByOthers(filter)) {
      try (Table<?> in = input(ctx, 0)) {
        return aggregate(ctx, in, getGroupSet(), names);
      }
    }
    try (Table<?> unfiltered = filter.input(ctx, 0); Filter.Selection rows = filter.select(ctx, unfiltered)) {
      if (rows.count() > 0 && rows.count() >= KEPT_TO_GROUP_UNFILTERED * unfiltered.rowCount()) {
        if (project == null) {
          return grouped(ctx, unfiltered, getGroupSet(), names, rows);
        }
        Table<?> projected;
        try {
          projected = project.project(ctx, unfiltered, project.getProjects());
        } catch (UserException e) {
          // failed on a row the filter may drop: compacted first, below (a kept row fails there too)
          projected = null;
        }
        if (projected != null) {
          try (Table<?> in = projected) {
            return grouped(ctx, in, getGroupSet(), names, rows);
          }
        }
      }
      try (Table<?> in = project == null ? filter.filter(ctx, unfiltered, null, rows)
          : project.overFilter(ctx, filter, unfiltered, rows)) {
        return aggregate(ctx, in, getGroupSet(), names);
      }
    }
  }

  /**
   * Replaces the placeholder columns of LITERAL_AGG calls by their constants, and those of
   * GROUPING calls by the bits of the keys that {@code set} leaves out. The caller keeps {@code t}.
   */
  Table<?> withLiterals(QueryContext ctx, Table<?> t, ImmutableBitSet set) {
    List<Column> columns = new ArrayList<>();
    try {
      int keys = set.cardinality();
      for (int c = 0; c < t.columnCount(); c++) {
        AggregateCall call = c < keys ? null : getAggCallList().get(c - keys);
        if (call != null && grouping(call)) {
          long bits = 0;
          for (int key : call.getArgList()) {
            bits = (bits << 1) | (set.get(key) ? 0 : 1);
          }
          columns.add(TableOps.evaluate(ctx.exec(), t, Expr.cast(Expr.lit(bits), SqlTypes.fromCalcite(call.getType()))));
        } else if (call != null && call.getAggregation().getKind() == org.apache.calcite.sql.SqlKind.LITERAL_AGG) {
          columns.add(TableOps.evaluate(ctx.exec(), t, RexToExpr.translate(call.rexList.get(0), t.types(), getCluster(), ctx.parameters())));
        } else {
          Column col = t.column(c);
          col.retain();
          columns.add(col);
        }
      }
    } catch (RuntimeException e) {
      columns.forEach(Column::close);
      throw e;
    }
    return TableOps.table(ctx.exec(), t, t.names(), columns, t.rowCount());
  }

  private Table<?> global(QueryContext ctx, Table<?> in, List<String> names) {
    List<Scalar> values = new ArrayList<>();
    for (AggregateCall call : getAggCallList()) {
      Reduction op = reduction(call);
      Scalar s = op == Reduction.COUNT_ALL ? new Scalar(dev.gpudf.columnar.DataType.INT64, (long) in.rowCount())
          : TableOps.reduce(ctx.exec(), in.column(call.getArgList().get(0)), op);
      if (call.getAggregation().getKind() == org.apache.calcite.sql.SqlKind.SUM0 && s.isNull()) {
        // SUM0 (what COUNT-like rewrites use) is 0, not NULL, over no rows
        s = new Scalar(s.type(), switch (s.type().id()) {
          case DECIMAL -> java.math.BigDecimal.ZERO;
          case FLOAT32, FLOAT64 -> (Object) 0.0;
          default -> (Object) 0L;
        });
      }
      values.add(s);
    }
    try (VectorSchemaRoot root = ScalarTables.of(ctx.exec().allocator(), names, values)) {
      return TableOps.load(in instanceof DeviceTable ? ctx.exec().gpu() : null, root);
    }
  }
}
