package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelOptTable;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.hint.RelHint;

/** Reads a resident catalog table: no copy, the table is shared by reference. */
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
    return ctx.catalog().acquire(getTable().unwrap(CatalogTable.class).name());
  }
}
