package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.kernels.SortKey;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelCollation;
import org.apache.calcite.rel.RelFieldCollation;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Sort;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;

/**
 * ORDER BY with OFFSET and FETCH (LIMIT): a stable sort, a top-N when a small limit allows one,
 * or only a slice when there is no ORDER BY. Unspecified null order is Calcite's default: nulls
 * last ascending, first descending.
 */
public final class GpuSort extends Sort implements GpuRel {
  GpuSort(RelOptCluster cluster, RelTraitSet traits, RelNode input, RelCollation collation, RexNode offset, RexNode fetch) {
    super(cluster, traits, input, collation, offset, fetch);
  }

  @Override
  public Sort copy(RelTraitSet traitSet, RelNode input, RelCollation collation, RexNode offset, RexNode fetch) {
    return new GpuSort(getCluster(), traitSet, input, collation, offset, fetch);
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    int skip = offset == null ? 0 : intValue(offset);
    Integer limit = fetch == null ? null : intValue(fetch);
    List<SortKey> keys = new ArrayList<>();
    for (RelFieldCollation f : getCollation().getFieldCollations()) {
      keys.add(sortKey(f));
    }
    try (Table<?> in = input(ctx, 0)) {
      int rows = in.rowCount();
      int from = Math.min(skip, rows);
      int length = limit == null ? rows - from : (int) Math.min((long) limit, rows - from);
      if (keys.isEmpty()) {
        return TableOps.slice(ctx.exec(), in, from, length);
      }
      try (Table<?> sorted = limit == null ? TableOps.sort(ctx.exec(), in, keys)
          : TableOps.topN(ctx.exec(), in, keys, from + length)) {
        return TableOps.slice(ctx.exec(), sorted, from, length);
      }
    }
  }

  /** The kernels' sort key for {@code f}; unspecified null order is Calcite's default (nulls last ascending, first descending). */
  static SortKey sortKey(RelFieldCollation f) {
    boolean asc = !f.getDirection().isDescending();
    boolean nullsFirst = switch (f.nullDirection) {
      case FIRST -> true;
      case LAST -> false;
      case UNSPECIFIED -> !asc;
    };
    return new SortKey(f.getFieldIndex(), asc, nullsFirst);
  }

  private static int intValue(RexNode n) {
    if (!(n instanceof RexLiteral lit)) {
      throw new NotSupportedException("OFFSET and FETCH must be constants, not " + n);
    }
    long v = lit.getValueAs(Long.class);
    return (int) Math.min(Integer.MAX_VALUE, v);
  }
}
