package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Filter;
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
 * SELECT list: input columns pass through by reference, every other expression is evaluated; one
 * that holds an earlier one of the list as a part reads that part's column. Over a filter or a
 * join that nothing else reads, that operator writes only the columns the list reads.
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
    if (getInput() instanceof GpuFilter filter && narrows(ctx, filter)) {
      try (Table<?> unfiltered = filter.input(ctx, 0)) {
        return overFilter(ctx, filter, unfiltered, null);
      }
    }
    if (getInput() instanceof GpuJoin join && narrows(ctx, join)) {
      // the join gathers only the columns read here (not a key its other side repeats)
      ImmutableBitSet used = RelOptUtil.InputFinder.bits(getProjects(), null);
      try (Table<?> in = join.join(ctx, used.toArray())) {
        return project(ctx, in, renumbered(used));
      }
    }
    try (Table<?> in = input(ctx, 0)) {
      return project(ctx, in, getProjects());
    }
  }

  /**
   * Whether {@code input}, a filter or a join under this projection, writes only the columns read
   * here: nothing else reads it, and the list reads some of its columns but not all.
   */
  private boolean narrows(QueryContext ctx, GpuRel input) {
    ImmutableBitSet used = RelOptUtil.InputFinder.bits(getProjects(), null);
    return !ctx.readByOthers(input) && !used.isEmpty() && used.cardinality() < input.getRowType().getFieldCount();
  }

  /** The list with its input columns renumbered to their order among {@code used}, the columns it reads. */
  private List<RexNode> renumbered(ImmutableBitSet used) {
    RexShuttle renumber = new RexShuttle() {
      @Override
      public RexNode visitInputRef(RexInputRef ref) {
        return new RexInputRef(used.indexOf(ref.getIndex()), ref.getType());
      }
    };
    return getProjects().stream().map(e -> e.accept(renumber)).toList();
  }

  /**
   * This projection over {@code filter} (its input), given the filter's input {@code unfiltered}
   * (borrowed) and maybe the rows the filter keeps ({@code rows}, else null); the
   * filter compacts only the columns read here where it {@link #narrows}. The caller closes the
   * result.
   */
  Table<?> overFilter(QueryContext ctx, GpuFilter filter, Table<?> unfiltered, Filter.Selection rows) {
    if (!narrows(ctx, filter)) {
      try (Table<?> in = filter.filter(ctx, unfiltered, null, rows)) {
        return project(ctx, in, getProjects());
      }
    }
    // the filter compacts only the columns read here, which are renumbered in order
    ImmutableBitSet used = RelOptUtil.InputFinder.bits(getProjects(), null);
    try (Table<?> in = filter.filter(ctx, unfiltered, used.toArray(), rows)) {
      return project(ctx, in, renumbered(used));
    }
  }

  /** The list {@code projects} (over this projection's input row type, or one renumbered) of {@code in}, borrowed; the caller closes the result. */
  Table<?> project(QueryContext ctx, Table<?> in, List<RexNode> projects) {
    List<Column> columns = new ArrayList<>();
    try {
      // expressions already evaluated, by their position in the list
      List<Integer> computed = new ArrayList<>();
      for (RexNode e : projects) {
        if (e instanceof RexInputRef ref) {
          Column c = in.column(ref.getIndex());
          c.retain();
          columns.add(c);
          continue;
        }
        List<Integer> reused = contained(e, projects, computed);
        if (reused.isEmpty()) {
          columns.add(TableOps.evaluate(ctx.exec(), in, RexToExpr.translate(e, in.types(), getCluster(), ctx.parameters())));
        } else {
          columns.add(reusing(ctx, in, e, projects, reused, columns));
        }
        computed.add(columns.size() - 1);
      }
    } catch (RuntimeException ex) {
      columns.forEach(Column::close);
      throw ex;
    }
    return TableOps.table(ctx.exec(), in, getRowType().getFieldNames(), columns, in.rowCount());
  }

  /** The positions among {@code computed} of the earlier expressions that {@code e} holds as a part of itself. */
  private static List<Integer> contained(RexNode e, List<RexNode> projects, List<Integer> computed) {
    List<Integer> out = new ArrayList<>();
    for (int k : computed) {
      RexNode earlier = projects.get(k);
      // a non-deterministic part (were one translatable) is computed anew where it appears
      if (!earlier.equals(e) && org.apache.calcite.rex.RexUtil.isDeterministic(earlier) && contains(e, earlier)) {
        out.add(k);
      }
    }
    return out;
  }

  private static boolean contains(RexNode e, RexNode part) {
    if (e.equals(part)) {
      return true;
    }
    return e instanceof org.apache.calcite.rex.RexCall call && call.getOperands().stream().anyMatch(o -> contains(o, part));
  }

  /**
   * {@code e} evaluated over {@code in} and the columns of earlier expressions it contains, each
   * occurrence read from that column instead of computed again (TPC-H q1's
   * {@code price * (1 - discount) * (1 + tax)} after {@code price * (1 - discount)}): the same
   * values, since a part's column holds what the part computes, row by row.
   */
  private Column reusing(QueryContext ctx, Table<?> in, RexNode e, List<RexNode> projects, List<Integer> reused,
      List<Column> columns) {
    List<Column> wide = new ArrayList<>();
    List<String> names = new ArrayList<>(in.names());
    for (int c = 0; c < in.columnCount(); c++) {
      in.column(c).retain();
      wide.add(in.column(c));
    }
    for (int k : reused) {
      columns.get(k).retain();
      wide.add(columns.get(k));
      names.add("$reused" + k);
    }
    int base = in.columnCount();
    RexShuttle replace = new RexShuttle() {
      @Override
      public RexNode visitCall(org.apache.calcite.rex.RexCall call) {
        for (int i = 0; i < reused.size(); i++) {
          if (call.equals(projects.get(reused.get(i)))) {
            return new RexInputRef(base + i, call.getType());
          }
        }
        return super.visitCall(call);
      }
    };
    try (Table<?> extended = TableOps.table(ctx.exec(), in, names, wide, in.rowCount())) {
      return TableOps.evaluate(ctx.exec(), extended, RexToExpr.translate(e.accept(replace), extended.types(), getCluster(),
          ctx.parameters()));
    }
  }
}
