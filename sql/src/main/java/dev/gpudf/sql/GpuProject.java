package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.util.ImmutableBitSet;

/**
 * SELECT list: input columns pass through by reference, every other expression is evaluated. Over
 * a filter that nothing else reads, the filter compacts only the columns the list reads.
 */
public final class GpuProject extends Project implements GpuRel {
  GpuProject(RelOptCluster cluster, RelTraitSet traits, RelNode input, List<? extends RexNode> projects, RelDataType rowType) {
    super(cluster, traits, List.of(), input, projects, rowType, java.util.Set.of());
  }

  @Override
  public Project copy(RelTraitSet traitSet, RelNode input, List<RexNode> projects, RelDataType rowType) {
    return new GpuProject(getCluster(), traitSet, input, projects, rowType);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    List<RexNode> projects = getProjects();
    Table<?> input;
    ImmutableBitSet used = RelOptUtil.InputFinder.bits(projects, null);
    if (getInput() instanceof GpuFilter filter && !ctx.readByOthers(filter) && !used.isEmpty()
        && used.cardinality() < filter.getRowType().getFieldCount()) {
      // the filter compacts only the columns read here, which are renumbered in order
      RexShuttle renumber = new RexShuttle() {
        @Override
        public RexNode visitInputRef(RexInputRef ref) {
          return new RexInputRef(used.indexOf(ref.getIndex()), ref.getType());
        }
      };
      projects = projects.stream().map(e -> e.accept(renumber)).toList();
      try (Table<?> unfiltered = filter.input(ctx, 0)) {
        input = filter.filter(ctx, unfiltered, used.toArray());
      }
    } else {
      input = input(ctx, 0);
    }
    try (Table<?> in = input) {
      List<Column> columns = new ArrayList<>();
      try {
        for (RexNode e : projects) {
          if (e instanceof RexInputRef ref) {
            Column c = in.column(ref.getIndex());
            c.retain();
            columns.add(c);
          } else {
            columns.add(TableOps.evaluate(ctx.exec(), in, RexToExpr.translate(e, in.types(), getCluster(), ctx.parameters())));
          }
        }
      } catch (RuntimeException ex) {
        columns.forEach(Column::close);
        throw ex;
      }
      return TableOps.table(ctx.exec(), in, getRowType().getFieldNames(), columns, in.rowCount());
    }
  }
}
