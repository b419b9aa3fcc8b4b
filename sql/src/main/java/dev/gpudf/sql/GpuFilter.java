package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.TableOps;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rex.RexNode;

/**
 * WHERE: evaluates the condition to a mask (one interpreter launch; on the CPU a conjunction is
 * evaluated conjunct by conjunct on the rows still in play) and compacts every column by it, or
 * only those its one parent reads ({@link GpuProject}); a grouping over it on the CPU may take its
 * kept rows instead ({@link GpuAggregate}).
 */
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
    try (Table<?> in = input(ctx, 0)) {
      return filter(ctx, in, null);
    }
  }

  /**
   * The rows of {@code in} (this filter's input, borrowed) that the condition keeps, with only
   * the columns in {@code keep} (in that order; null: all of them): a parent that reads a few
   * columns spares the compaction of the others (q13 drops the comments it filtered on). The
   * caller closes the result.
   */
  Table<?> filter(QueryContext ctx, Table<?> in, int[] keep) {
    return filter(ctx, in, keep, null);
  }

  /**
   * {@link #filter(QueryContext, Table, int[])} where the kept rows of {@code in} may be known
   * already: {@code rows} from {@link #select}, or null.
   */
  Table<?> filter(QueryContext ctx, Table<?> in, int[] keep, dev.gpudf.kernels.Filter.Selection rows) {
    if (rows != null) {
      if (keep == null) {
        return dev.gpudf.kernels.Filter.filter(ctx.exec(), in, rows);
      }
      try (Table<?> narrow = TableOps.columns(ctx.exec(), in, keep)) {
        return dev.gpudf.kernels.Filter.filter(ctx.exec(), narrow, rows);
      }
    }
    Expr condition = RexToExpr.translate(getCondition(), in.types(), getCluster(), ctx.parameters());
    if (keep == null) {
      return TableOps.filter(ctx.exec(), in, condition, in);
    }
    try (Table<?> narrow = TableOps.columns(ctx.exec(), in, keep)) {
      return TableOps.filter(ctx.exec(), in, condition, narrow);
    }
  }

  /**
   * The rows of {@code in} (this filter's input, borrowed) that the condition keeps, counted: on
   * the CPU their ids, on the GPU the condition's mask. The caller closes the selection.
   */
  dev.gpudf.kernels.Filter.Selection select(QueryContext ctx, Table<?> in) {
    Expr condition = RexToExpr.translate(getCondition(), in.types(), getCluster(), ctx.parameters());
    if (in instanceof HostTable host) {
      return dev.gpudf.kernels.Filter.select(dev.gpudf.kernels.Filter.keptRows(ctx.exec(), host, condition), host.rowCount());
    }
    return dev.gpudf.kernels.Filter.select(ctx.exec(), (DeviceTable) in, condition);
  }
}
