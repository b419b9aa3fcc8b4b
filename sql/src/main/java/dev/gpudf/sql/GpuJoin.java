package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.kernels.Join;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.calcite.rel.core.CorrelationId;
import org.apache.calcite.rel.core.JoinInfo;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rex.RexNode;

/**
 * Joins: equi-joins of every kind (INNER, LEFT, RIGHT, FULL, SEMI, ANTI) by the CPU hash join,
 * and inner joins with extra (or only) non-equality conditions as a join then a filter. A GPU
 * session copies the inputs to the host and the result back, shown as {@code backend=cpu} in
 * EXPLAIN, until the GPU hash join exists.
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

  @Override
  public RelWriter explainTerms(RelWriter pw) {
    return super.explainTerms(pw).item("backend", "cpu");
  }

  /** Why this join cannot run, or null when it can. */
  static String unsupported(org.apache.calcite.rel.core.Join join) {
    JoinInfo info = join.analyzeCondition();
    boolean extra = !info.isEqui();
    if (join.getJoinType() == JoinRelType.ASOF || join.getJoinType() == JoinRelType.LEFT_ASOF) {
      return join.getJoinType() + " joins are not supported";
    }
    if (extra && join.getJoinType() != JoinRelType.INNER) {
      return join.getJoinType() + " joins with non-equality conditions are not supported yet";
    }
    return null;
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    String why = unsupported(this);
    if (why != null) {
      throw new NotSupportedException(why);
    }
    JoinInfo info = analyzeCondition();
    int[] lk = info.leftKeys.toIntArray();
    int[] rk = info.rightKeys.toIntArray();
    Join.Kind kind = lk.length == 0 ? Join.Kind.CROSS : switch (getJoinType()) {
      case INNER -> Join.Kind.INNER;
      case LEFT -> Join.Kind.LEFT;
      case RIGHT -> Join.Kind.RIGHT;
      case FULL -> Join.Kind.FULL;
      case SEMI -> Join.Kind.SEMI;
      case ANTI -> Join.Kind.ANTI;
      default -> throw new NotSupportedException(getJoinType() + " joins are not supported");
    };
    try (Table<?> left = input(ctx, 0); Table<?> right = input(ctx, 1);
        HostTable l = onHost(ctx, left); HostTable r = onHost(ctx, right);
        HostTable joined = Join.join(ctx.exec(), l, r, lk, rk, kind, getRowType().getFieldNames());
        Table<?> result = remaining(ctx, joined, info.getRemaining(getCluster().getRexBuilder()))) {
      if (!(left instanceof DeviceTable)) {
        result.retain();
        return result;
      }
      try (VectorSchemaRoot root = result.toArrow(ctx.exec().allocator()); CudaStream stream = ctx.exec().gpu().newStream()) {
        return DeviceTable.fromArrow(ctx.exec().gpu(), root, stream);
      }
    }
  }

  /** {@code joined} filtered by the non-equality part of the condition (retained as is when there is none). */
  private Table<?> remaining(QueryContext ctx, HostTable joined, RexNode condition) {
    if (condition.isAlwaysTrue()) {
      joined.retain();
      return joined;
    }
    try (Column mask = TableOps.evaluate(ctx.exec(), joined, RexToExpr.translate(condition, joined.types(), getCluster(), ctx.parameters()))) {
      return TableOps.filter(ctx.exec(), joined, mask);
    }
  }

  private static HostTable onHost(QueryContext ctx, Table<?> t) {
    if (t instanceof HostTable h) {
      h.retain();
      return h;
    }
    return ((DeviceTable) t).toHost(ctx.exec().allocator());
  }
}
