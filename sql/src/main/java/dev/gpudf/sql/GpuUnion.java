package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.SetOp;
import org.apache.calcite.rel.core.Union;

/**
 * UNION ALL concatenates the inputs on the session's backend; UNION then keeps one row of each
 * group of equal rows (NULLs equal), by the backend's hash group-by. While an input runs, the
 * file chunks the next one scans are read ahead ({@link QueryContext#readAhead}).
 */
public final class GpuUnion extends Union implements GpuRel {
  GpuUnion(RelOptCluster cluster, RelTraitSet traits, List<RelNode> inputs, boolean all) {
    super(cluster, traits, List.of(), inputs, all);
  }

  @Override
  public SetOp copy(RelTraitSet traitSet, List<RelNode> inputs, boolean all) {
    return new GpuUnion(getCluster(), traitSet, inputs, all);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    List<Table<?>> parts = new ArrayList<>();
    try {
      // the first branch's chunks too: the reader thread then reads a file's chunks in order, and
      // a file read in order is decoded once (read out of order, its stream starts over)
      ctx.readAhead(getInput(0));
      for (int i = 0; i < getInputs().size(); i++) {
        if (i + 1 < getInputs().size()) {
          ctx.readAhead(getInput(i + 1));
        }
        parts.add(input(ctx, i));
      }
      // inputs may differ in nullability only; names come from the union's row type
      try (Table<?> all = TableOps.concat(ctx.exec(), parts, getRowType().getFieldNames())) {
        if (this.all) {
          all.retain();
          return all;
        }
        int[] keys = java.util.stream.IntStream.range(0, all.columnCount()).toArray();
        return TableOps.groupBy(ctx.exec(), all, keys, List.of(), getRowType().getFieldNames());
      }
    } finally {
      parts.forEach(Table::close);
    }
  }
}
