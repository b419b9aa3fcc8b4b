package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelOptTable;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.hint.RelHint;

/**
 * Reads a resident catalog table (or one chunk of a chunked one), only the columns the query
 * uses: no copy, the columns are shared by reference (spilled ones come back to the device first).
 */
public final class GpuTableScan extends TableScan implements GpuRel {
  GpuTableScan(RelOptCluster cluster, RelTraitSet traits, List<RelHint> hints, RelOptTable table) {
    super(cluster, traits, hints, table);
  }

  @Override
  public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
    return new GpuTableScan(getCluster(), traitSet, getHints(), getTable());
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    CatalogTable t = getTable().unwrap(CatalogTable.class);
    if (t.chunk() < 0 && t.chunks() != 1) {
      throw new dev.gpudf.columnar.error.InternalException("a scan of chunked table '" + t.name() + "' was not split into its chunks");
    }
    return ctx.catalog().acquire(t.name(), Math.max(0, t.chunk()), t.columns(), ctx.readAheadFor(this));
  }
}
