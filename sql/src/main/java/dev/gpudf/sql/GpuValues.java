package dev.gpudf.sql;

import com.google.common.collect.ImmutableList;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Scalar;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Values;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexLiteral;

/** Literal rows ({@code VALUES}, and a {@code SELECT} without {@code FROM}), built on the host and copied to the session's backend. */
public final class GpuValues extends Values implements GpuRel {
  GpuValues(RelOptCluster cluster, RelDataType rowType, ImmutableList<ImmutableList<RexLiteral>> tuples, RelTraitSet traits) {
    super(cluster, rowType, tuples, traits);
  }

  @Override
  public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
    return new GpuValues(getCluster(), getRowType(), getTuples(), traitSet);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    // a column of bare NULLs has Calcite's type NULL, which no column type names; it is stored as an
    // all-null BOOL, which every CAST above it (an INSERT's, say) converts from
    List<DataType> types = getRowType().getFieldList().stream()
        .map(f -> f.getType().getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.NULL ? DataType.BOOL
            : SqlTypes.fromCalcite(f.getType()))
        .toList();
    List<List<Scalar>> rows = new ArrayList<>();
    for (List<RexLiteral> tuple : getTuples()) {
      List<Scalar> row = new ArrayList<>();
      for (int c = 0; c < tuple.size(); c++) {
        // a bare NULL has Calcite's type NULL; it takes its column's type
        row.add(tuple.get(c).isNull() ? Scalar.nullOf(types.get(c)) : RexToExpr.scalar(tuple.get(c)));
      }
      rows.add(row);
    }
    try (VectorSchemaRoot root = ScalarTables.rows(ctx.exec().allocator(), getRowType().getFieldNames(), types, rows)) {
      return TableOps.load(ctx.exec().hasGpu() ? ctx.exec().gpu() : null, root);
    }
  }
}
