package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.SetOps;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.calcite.rel.core.Intersect;
import org.apache.calcite.rel.core.SetOp;

/**
 * INTERSECT [ALL]: the rows of the first input found in every other (NULLs equal). DISTINCT runs
 * on the session's backend ({@link DistinctSetOps}); ALL by {@link SetOps} on the CPU, where a
 * GPU session copies the inputs to the host and the result back ({@code backend=cpu} in EXPLAIN).
 */
public final class GpuIntersect extends Intersect implements GpuRel {
  GpuIntersect(RelOptCluster cluster, RelTraitSet traits, List<RelNode> inputs, boolean all) {
    super(cluster, traits, List.of(), inputs, all);
  }

  @Override
  public SetOp copy(RelTraitSet traitSet, List<RelNode> inputs, boolean all) {
    return new GpuIntersect(getCluster(), traitSet, inputs, all);
  }

  @Override
  public RelWriter explainTerms(RelWriter pw) {
    return super.explainTerms(pw).itemIf("backend", "cpu", all);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    if (all) {
      return HostFallback.inputsViaHost(ctx, this, host -> SetOps.intersect(ctx.exec(), host, true, getRowType().getFieldNames()));
    }
    return DistinctSetOps.run(ctx, this, true);
  }
}
