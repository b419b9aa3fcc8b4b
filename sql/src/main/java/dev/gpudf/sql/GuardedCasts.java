package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.rel.RelHomogeneousShuttle;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.rex.RexSubQuery;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.SqlTypeUtil;

/**
 * Removes the NOT NULL casts that SQL-to-relational conversion puts into CASE branches guarded
 * by {@code IS NOT NULL} ({@code COALESCE(i, -2)} becomes {@code CASE WHEN i IS NOT NULL THEN
 * CAST(i AS INTEGER NOT NULL) ELSE -2 END}; a cast that widens as well is kept, nullable), before
 * any simplification. Calcite's simplifier lets such a cast out of the branch that guarded it and
 * then treats the value as never NULL: {@code WHERE 4 < CASE WHEN COALESCE(i, -2) > 3 THEN i ELSE
 * n END} became a condition with {@code CAST(i AS INTEGER NOT NULL) <= 3} in it, which drops the
 * rows where i is NULL (found by the SQL fuzzer against DuckDB). A CASE that is NOT NULL by its
 * guard becomes a nullable CASE inside a cast to its NOT NULL type: typed NOT NULL over a
 * nullable branch, the simplifier negated its condition as if never NULL.
 */
final class GuardedCasts {
  private GuardedCasts() {}

  static RelNode remove(RelNode plan) {
    return plan.accept(new RelHomogeneousShuttle() {
      @Override
      public RelNode visit(RelNode other) {
        return super.visit(other).accept(new Rex(this, other.getCluster().getRexBuilder()));
      }
    });
  }

  /** The rewrite of expressions, sub-queries' plans included. */
  private static final class Rex extends RexShuttle {
    private final org.apache.calcite.rex.RexBuilder rex;
    private final RelHomogeneousShuttle plans;

    Rex(RelHomogeneousShuttle plans, org.apache.calcite.rex.RexBuilder rex) {
      this.plans = plans;
      this.rex = rex;
    }

    @Override
    public RexNode visitCall(RexCall call) {
      RexCall visited = (RexCall) super.visitCall(call);
      if (visited.getKind() == SqlKind.CAST && visited.getType().isNullable()) {
        // CAST(CAST(i AS INTEGER NOT NULL) AS INTEGER): the branch value cast back to the CASE's type
        RexNode value = opened(visited.getOperands().get(0));
        if (value != null) {
          return value.getType().equals(visited.getType()) ? value : visited.clone(visited.getType(), List.of(value));
        }
        return visited;
      }
      if (visited.getKind() != SqlKind.CASE) {
        return visited;
      }
      List<RexNode> operands = new ArrayList<>(visited.getOperands());
      boolean changed = false;
      for (int i = 0; i < operands.size(); i++) {
        boolean value = i % 2 == 1 || i == operands.size() - 1; // THEN values and the ELSE value
        RexNode opened = value ? opened(operands.get(i)) : null;
        if (opened != null) {
          operands.set(i, opened);
          changed = true;
        }
      }
      if (!changed) {
        return visited;
      }
      if (visited.getType().isNullable()) {
        return visited.clone(visited.getType(), operands);
      }
      // the CASE is NOT NULL by its guard, but a simplifier that sees a NOT NULL CASE over a
      // nullable branch may push a comparison into the branches and drop the guard: the CASE is
      // typed nullable, and a cast outside it, where nothing can take it apart from the guard,
      // keeps the type its parent expects
      RexNode open = visited.clone(rex.getTypeFactory().createTypeWithNullability(visited.getType(), true), operands);
      return rex.makeAbstractCast(visited.getType(), open, false);
    }

    /**
     * {@code e} as the same value, nullable, where it is a cast to NOT NULL of a nullable value,
     * directly ({@code CAST(i AS INTEGER NOT NULL)}) or through further casts ({@code COALESCE(n,
     * 4)} of a DECIMAL(10, 2) {@code n} gives {@code CAST(CAST(n AS DECIMAL(10, 2) NOT NULL) AS
     * DECIMAL(12, 2) NOT NULL)}); null where it is not.
     */
    private RexNode opened(RexNode e) {
      if (!(e instanceof RexCall cast) || cast.getKind() != SqlKind.CAST || cast.getType().isNullable()) {
        return null;
      }
      RexNode from = cast.getOperands().get(0);
      RexNode inner = from.getType().isNullable() ? from : opened(from);
      if (inner == null) {
        return null;
      }
      if (SqlTypeUtil.equalSansNullability(inner.getType(), cast.getType())) {
        return inner;
      }
      return cast.clone(rex.getTypeFactory().createTypeWithNullability(cast.getType(), true), List.of(inner));
    }

    @Override
    public RexNode visitSubQuery(RexSubQuery subQuery) {
      RexSubQuery visited = (RexSubQuery) super.visitSubQuery(subQuery);
      return visited.clone(visited.rel.accept(plans));
    }
  }
}
