package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelShuttleImpl;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.metadata.RelMetadataQuery;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;

/**
 * Semi-join reduction of grouped inputs: where an inner join meets a GROUP BY result on a
 * grouping column, and the other side has far fewer rows than the groups, the rows being grouped
 * are first reduced to the keys the other side holds. The join would drop every other group
 * anyway, and each group's value depends only on its own rows, so the answer is the same, while
 * the aggregate reads a fraction of its input. TPC-H q17 averages l_quantity per part over all
 * of lineitem (600M rows at SF100) and then keeps the few thousand parts of one brand and
 * container; reduced, it averages only those parts' rows.
 */
final class SemiJoinReduction {
  /** The other side must have at most this share of the estimated groups. */
  private static final double MAX_SHARE = 0.25;

  private SemiJoinReduction() {}

  /** {@code rel} with every grouped input of an inner join that qualifies reduced. */
  static RelNode apply(RelNode rel) {
    return rel.accept(new RelShuttleImpl() {
      @Override
      public RelNode visit(LogicalJoin node) {
        RelNode visited = super.visit(node);
        if (!(visited instanceof LogicalJoin join) || join.getJoinType() != JoinRelType.INNER) {
          return visited;
        }
        int leftFields = join.getLeft().getRowType().getFieldCount();
        RelNode left = reduced(join, join.getLeft(), join.getRight(), 0, leftFields);
        if (left != null) {
          return join.copy(join.getTraitSet(), List.of(left, join.getRight()));
        }
        RelNode right = reduced(join, join.getRight(), join.getLeft(), leftFields, 0);
        return right != null ? join.copy(join.getTraitSet(), List.of(join.getLeft(), right)) : visited;
      }
    });
  }

  /**
   * {@code grouped} (one side of {@code join}, its fields from {@code groupedOffset} in the
   * join's row) with its aggregate's input reduced to the keys of {@code other} (its fields from
   * {@code otherOffset}); null where it does not qualify.
   */
  private static RelNode reduced(Join join, RelNode grouped, RelNode other, int groupedOffset, int otherOffset) {
    Aggregate agg = aggregateBelow(grouped);
    if (agg == null || agg.getGroupCount() == 0 || agg.getGroupSets().size() != 1) {
      return null;
    }
    RelMetadataQuery mq = join.getCluster().getMetadataQuery();
    Double groups = mq.getRowCount(agg);
    Double otherRows = mq.getRowCount(other);
    if (groups == null || otherRows == null || otherRows > MAX_SHARE * groups) {
      return null;
    }
    // pairs (column of the aggregate's input, field of the other side) the join equates
    List<int[]> keys = new ArrayList<>();
    int groupedFields = grouped.getRowType().getFieldCount();
    int otherFields = other.getRowType().getFieldCount();
    for (RexNode c : RelOptUtil.conjunctions(join.getCondition())) {
      if (c.getKind() != SqlKind.EQUALS || !(c instanceof RexCall call)
          || !(call.getOperands().get(0) instanceof RexInputRef a) || !(call.getOperands().get(1) instanceof RexInputRef b)) {
        continue;
      }
      for (RexInputRef[] pair : new RexInputRef[][] {{a, b}, {b, a}}) {
        int g = pair[0].getIndex() - groupedOffset;
        int o = pair[1].getIndex() - otherOffset;
        if (g >= 0 && g < groupedFields && o >= 0 && o < otherFields) {
          int aggField = fieldOfAggregate(grouped, g);
          if (aggField >= 0 && aggField < agg.getGroupCount()) {
            keys.add(new int[] {agg.getGroupSet().nth(aggField), o});
          }
        }
      }
    }
    if (keys.isEmpty()) {
      return null;
    }
    RexBuilder rex = join.getCluster().getRexBuilder();
    RelNode input = agg.getInput();
    int inputFields = input.getRowType().getFieldCount();
    List<RexNode> otherKeys = new ArrayList<>();
    List<String> names = new ArrayList<>();
    List<RexNode> equalities = new ArrayList<>();
    for (int k = 0; k < keys.size(); k++) {
      otherKeys.add(rex.makeInputRef(other, keys.get(k)[1]));
      names.add(other.getRowType().getFieldNames().get(keys.get(k)[1]));
      equalities.add(rex.makeCall(SqlStdOperatorTable.EQUALS,
          rex.makeInputRef(input, keys.get(k)[0]),
          new RexInputRef(inputFields + k, otherKeys.get(k).getType())));
    }
    RelNode keysOfOther = LogicalProject.create(other, List.of(), otherKeys, names, Set.of());
    RelNode semi = LogicalJoin.create(input, keysOfOther, List.of(), RexUtil.composeConjunction(rex, equalities),
        Set.of(), JoinRelType.SEMI);
    return replaceAggregateInput(grouped, semi);
  }

  /** The aggregate under {@code rel} through filters and projections, or null. */
  private static Aggregate aggregateBelow(RelNode rel) {
    RelNode r = rel;
    while (r instanceof Filter || r instanceof Project) {
      r = r.getInput(0);
    }
    return r instanceof Aggregate agg ? agg : null;
  }

  /** The aggregate's output field that field {@code f} of {@code rel} passes through unchanged, or -1. */
  private static int fieldOfAggregate(RelNode rel, int f) {
    if (rel instanceof Aggregate) {
      return f;
    }
    if (rel instanceof Filter filter) {
      return fieldOfAggregate(filter.getInput(), f);
    }
    if (rel instanceof Project project && project.getProjects().get(f) instanceof RexInputRef ref) {
      return fieldOfAggregate(project.getInput(), ref.getIndex());
    }
    return -1;
  }

  private static RelNode replaceAggregateInput(RelNode rel, RelNode input) {
    if (rel instanceof Aggregate agg) {
      return agg.copy(agg.getTraitSet(), List.of(input));
    }
    return rel.copy(rel.getTraitSet(), List.of(replaceAggregateInput(rel.getInput(0), input)));
  }
}
