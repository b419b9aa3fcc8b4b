package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.Table;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rex.RexNode;

/** WHERE: evaluates the condition to a mask (one interpreter launch) and compacts every column by it. */
public final class GpuFilter extends Filter implements GpuRel {
  GpuFilter(RelOptCluster cluster, RelTraitSet traits, RelNode input, RexNode condition) {
    super(cluster, traits, input, condition);
  }

  @Override
  public Filter copy(RelTraitSet traitSet, RelNode input, RexNode condition) {
    return new GpuFilter(getCluster(), traitSet, input, condition);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    try (Table<?> in = input(ctx, 0);
        Column mask = TableOps.evaluate(ctx.exec(), in, RexToExpr.translate(getCondition(), in.types(), getCluster(), ctx.parameters()))) {
      return TableOps.filter(ctx.exec(), in, mask);
    }
  }
}
