package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.error.NotSupportedException;
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
 * Aggregates without GROUP BY (COUNT, SUM, MIN, MAX, AVG), each a reduction of one column into
 * a one-row table. Grouped aggregation waits for the hash group-by kernels.
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
    if (!agg.getGroupSet().isEmpty() || agg.getGroupType() != Group.SIMPLE) {
      return "GROUP BY is not supported yet";
    }
    for (AggregateCall call : agg.getAggCallList()) {
      if (call.isDistinct() || call.filterArg >= 0 || call.getArgList().size() > 1 || reduction(call) == null) {
        return "aggregate " + call + " is not supported yet";
      }
    }
    return null;
  }

  private static Reduction reduction(AggregateCall call) {
    return switch (call.getAggregation().getKind()) {
      case COUNT -> call.getArgList().isEmpty() ? Reduction.COUNT_ALL : Reduction.COUNT_VALID;
      case SUM, SUM0 -> call.getArgList().isEmpty() ? null : Reduction.SUM;
      case MIN -> Reduction.MIN;
      case MAX -> Reduction.MAX;
      case AVG -> Reduction.MEAN;
      default -> null;
    };
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    String why = unsupported(this);
    if (why != null) {
      throw new NotSupportedException(why);
    }
    try (Table<?> in = input(ctx, 0)) {
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
      try (VectorSchemaRoot root = ScalarTables.of(ctx.exec().allocator(), getRowType().getFieldNames(), values)) {
        if (in instanceof DeviceTable) {
          try (CudaStream stream = ctx.exec().gpu().newStream()) {
            return DeviceTable.fromArrow(ctx.exec().gpu(), root, stream);
          }
        }
        return HostTable.fromArrow(root);
      }
    }
  }
}
