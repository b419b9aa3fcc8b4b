package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Join;
import java.util.Set;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.CorrelationId;
import org.apache.calcite.rel.core.JoinInfo;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rex.RexNode;

/**
 * Joins of every kind (INNER, LEFT, RIGHT, FULL, SEMI, ANTI) by the backend's hash join on the
 * equality keys, with any non-equality part of the condition evaluated on the candidate pairs
 * (every pair when there are no keys).
 */
public final class GpuJoin extends org.apache.calcite.rel.core.Join implements GpuRel {
  GpuJoin(RelOptCluster cluster, RelTraitSet traits, RelNode left, RelNode right, RexNode condition, JoinRelType joinType) {
    super(cluster, traits, java.util.List.of(), left, right, condition, Set.<CorrelationId>of(), joinType);
  }

  @Override
  public org.apache.calcite.rel.core.Join copy(RelTraitSet traitSet, RexNode condition, RelNode left, RelNode right,
      JoinRelType joinType, boolean semiJoinDone) {
    return new GpuJoin(getCluster(), traitSet, left, right, condition, joinType);
  }

  /** Why this join cannot run, or null when it can. */
  static String unsupported(org.apache.calcite.rel.core.Join join) {
    if (join.getJoinType() == JoinRelType.ASOF || join.getJoinType() == JoinRelType.LEFT_ASOF) {
      return join.getJoinType() + " joins are not supported";
    }
    return null;
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    return join(ctx, null);
  }

  /**
   * This join's output columns {@code keep} (ascending positions; null: all): a projection that
   * reads a few of them spares the gathers of the others ({@link GpuProject}). The caller closes
   * the result.
   */
  Table<?> join(QueryContext ctx, int[] keep) {
    String why = unsupported(this);
    if (why != null) {
      throw new NotSupportedException(why);
    }
    JoinInfo info = analyzeCondition();
    int[] lk = info.leftKeys.toIntArray();
    int[] rk = info.rightKeys.toIntArray();
    Join.Kind kind = switch (getJoinType()) {
      case INNER -> Join.Kind.INNER;
      case LEFT -> Join.Kind.LEFT;
      case RIGHT -> Join.Kind.RIGHT;
      case FULL -> Join.Kind.FULL;
      case SEMI -> Join.Kind.SEMI;
      case ANTI -> Join.Kind.ANTI;
      default -> throw new NotSupportedException(getJoinType() + " joins are not supported");
    };
    RexNode remaining = info.getRemaining(getCluster().getRexBuilder());
    try (Table<?> left = input(ctx, 0); Table<?> right = input(ctx, 1)) {
      java.util.List<dev.gpudf.columnar.DataType> both = new java.util.ArrayList<>(left.types());
      both.addAll(right.types());
      Expr residual = remaining.isAlwaysTrue() ? null
          : RexToExpr.translate(remaining, both, getCluster(), ctx.parameters());
      java.util.List<String> all = getRowType().getFieldNames();
      java.util.List<String> names = keep == null ? all : java.util.Arrays.stream(keep).mapToObj(all::get).toList();
      if (left instanceof DeviceTable l && right instanceof DeviceTable r) {
        return Join.join(ctx.exec(), l, r, lk, rk, kind, names, residual, keep);
      }
      if (left instanceof dev.gpudf.columnar.HostTable l && right instanceof dev.gpudf.columnar.HostTable r && lk.length > 0) {
        // a right side that every chunk of a split table is joined to is indexed once for all of
        // them; a join of its own picks the side it indexes
        GpuRel side = (GpuRel) getInput(1);
        return Join.join(ctx.exec(), l, r, lk, rk, kind, names, residual,
            ctx.sharesJoinIndex(side) ? ctx.joinIndex(side, r, rk) : null, keep);
      }
      return HostFallback.viaHost(ctx, java.util.List.of(left, right),
          host -> Join.join(ctx.exec(), host.get(0), host.get(1), lk, rk, kind, names, residual, null, keep));
    }
  }
}
