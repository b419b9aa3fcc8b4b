package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Concat;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.SetOp;
import org.apache.calcite.rel.core.Union;

/**
 * UNION ALL concatenates the inputs on the session's backend; UNION then keeps one row of each
 * group of equal rows (NULLs equal), by the backend's hash group-by.
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
      for (int i = 0; i < getInputs().size(); i++) {
        parts.add(input(ctx, i));
      }
      // inputs may differ in nullability only; names come from the union's row type
      try (Table<?> all = concat(ctx, parts)) {
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

  private Table<?> concat(QueryContext ctx, List<Table<?>> parts) {
    List<String> names = getRowType().getFieldNames();
    if (parts.get(0) instanceof DeviceTable) {
      DeviceTable[] d = parts.stream().map(t -> renamed((DeviceTable) t, names)).toArray(DeviceTable[]::new);
      try {
        return Concat.concat(ctx.exec(), d);
      } finally {
        for (DeviceTable t : d) {
          t.close();
        }
      }
    }
    HostTable[] h = parts.stream().map(t -> renamed((HostTable) t, names)).toArray(HostTable[]::new);
    try {
      return Concat.concat(ctx.exec(), h);
    } finally {
      for (HostTable t : h) {
        t.close();
      }
    }
  }

  private static DeviceTable renamed(DeviceTable t, List<String> names) {
    List<dev.gpudf.columnar.DeviceColumn> cols = new ArrayList<>();
    for (int i = 0; i < t.columnCount(); i++) {
      t.column(i).retain();
      cols.add(t.column(i));
    }
    return new DeviceTable(t.gpu(), names, cols, t.rowCount());
  }

  private static HostTable renamed(HostTable t, List<String> names) {
    List<dev.gpudf.columnar.HostColumn> cols = new ArrayList<>();
    for (int i = 0; i < t.columnCount(); i++) {
      t.column(i).retain();
      cols.add(t.column(i));
    }
    return new HostTable(names, cols, t.rowCount());
  }
}
