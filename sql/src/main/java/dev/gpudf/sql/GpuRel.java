package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import org.apache.calcite.plan.Convention;
import org.apache.calcite.rel.RelNode;

/**
 * A physical operator of gpudf's convention. Operators are stateless: {@link #execute} takes
 * the per-query {@link QueryContext} and returns a new table the caller owns, on the GPU for a
 * GPU session and on the CPU twin otherwise.
 */
public interface GpuRel extends RelNode {
  /** gpudf's calling convention; every node of a physical plan is in it. */
  Convention CONVENTION = new Convention.Impl("GPU", GpuRel.class);

  /** Runs this operator and its inputs; the caller closes the result. */
  Table<?> execute(QueryContext ctx);

  /** Runs input {@code i} (once per query when other parents read it too); the caller closes the result. */
  default Table<?> input(QueryContext ctx, int i) {
    return ctx.run((GpuRel) getInput(i));
  }
}
