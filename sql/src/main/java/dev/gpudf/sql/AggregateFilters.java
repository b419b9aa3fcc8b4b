package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelShuttleImpl;
import org.apache.calcite.rel.core.AggregateCall;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;

/**
 * A logical rewrite: an aggregate's {@code FILTER (WHERE c)} becomes its argument made NULL where
 * {@code c} is not true ({@code SUM(x) FILTER (WHERE c)} is {@code SUM(CASE WHEN c THEN x END)}),
 * for the aggregates that skip NULLs, so that every backend runs it as a plain aggregate;
 * {@code COUNT(*) FILTER (WHERE c)} counts {@code CASE WHEN c THEN 1 END}. The result types stay
 * the call's own (a filtered SUM of no row is NULL either way, a COUNT 0). A filter on any other
 * aggregate is left, and refused as not supported.
 */
final class AggregateFilters {
  private AggregateFilters() {}

  /** Aggregates whose value ignores NULL arguments: filtering their rows out is making them NULL. */
  private static final Set<SqlKind> SKIP_NULLS = EnumSet.of(SqlKind.COUNT, SqlKind.SUM, SqlKind.SUM0, SqlKind.MIN,
      SqlKind.MAX, SqlKind.AVG, SqlKind.STDDEV_POP, SqlKind.STDDEV_SAMP, SqlKind.VAR_POP, SqlKind.VAR_SAMP);

  /** {@code rel} with every aggregate's filters that can be rewritten so. */
  static RelNode apply(RelNode rel) {
    return rel.accept(new RelShuttleImpl() {
      @Override
      public RelNode visit(LogicalAggregate aggregate) {
        RelNode visited = super.visit(aggregate);
        return visited instanceof LogicalAggregate a ? rewritten(a) : visited;
      }
    });
  }

  private static RelNode rewritten(LogicalAggregate a) {
    if (a.getAggCallList().stream().noneMatch(AggregateFilters::rewritable)) {
      return a;
    }
    RexBuilder rex = a.getCluster().getRexBuilder();
    RelNode input = a.getInput();
    List<RexNode> projects = new ArrayList<>(rex.identityProjects(input.getRowType()));
    List<String> names = new ArrayList<>(input.getRowType().getFieldNames());
    List<AggregateCall> calls = new ArrayList<>();
    for (AggregateCall call : a.getAggCallList()) {
      if (!rewritable(call)) {
        calls.add(call);
        continue;
      }
      RexNode when = rex.makeInputRef(input, call.filterArg);
      List<RexNode> values = call.getArgList().isEmpty()
          ? List.of(rex.makeExactLiteral(java.math.BigDecimal.ONE))
          : call.getArgList().stream().map(i -> (RexNode) rex.makeInputRef(input, i)).toList();
      List<Integer> args = new ArrayList<>();
      for (RexNode value : values) {
        RelDataType type = rex.getTypeFactory().createTypeWithNullability(value.getType(), true);
        args.add(projects.size());
        projects.add(rex.makeCall(type, SqlStdOperatorTable.CASE, List.of(when, value, rex.makeNullLiteral(type))));
        names.add("$filtered" + args.get(args.size() - 1));
      }
      calls.add(AggregateCall.create(call.getParserPosition(), call.getAggregation(), call.isDistinct(),
          call.isApproximate(), call.ignoreNulls(), call.rexList, args, -1, call.distinctKeys, call.collation,
          call.getType(), call.getName()));
    }
    RelNode projected = LogicalProject.create(input, List.of(), projects, names, java.util.Set.of());
    return a.copy(a.getTraitSet(), projected, a.getGroupSet(), a.getGroupSets(), calls);
  }

  private static boolean rewritable(AggregateCall call) {
    return call.filterArg >= 0 && SKIP_NULLS.contains(call.getAggregation().getKind());
  }
}
