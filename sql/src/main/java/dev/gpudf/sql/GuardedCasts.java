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
 * CAST(i AS INTEGER NOT NULL) ELSE -2 END}), before any simplification. Calcite's simplifier
 * lets such a cast out of the branch that guarded it and then treats the value as never NULL:
 * {@code WHERE 4 < CASE WHEN COALESCE(i, -2) > 3 THEN i ELSE n END} became a condition with
 * {@code CAST(i AS INTEGER NOT NULL) <= 3} in it, which drops the rows where i is NULL (found by
 * the SQL fuzzer against DuckDB). The CASE keeps its type, which the guard makes true.
 */
final class GuardedCasts {
  private GuardedCasts() {}

  static RelNode remove(RelNode plan) {
    return plan.accept(new RelHomogeneousShuttle() {
      @Override
      public RelNode visit(RelNode other) {
        return super.visit(other).accept(new Rex(this));
      }
    });
  }

  /** The rewrite of expressions, sub-queries' plans included. */
  private static final class Rex extends RexShuttle {
    private final RelHomogeneousShuttle plans;

    Rex(RelHomogeneousShuttle plans) {
      this.plans = plans;
    }

    @Override
    public RexNode visitCall(RexCall call) {
      RexCall visited = (RexCall) super.visitCall(call);
      if (visited.getKind() == SqlKind.CAST && visited.getType().isNullable() && visited.getOperands().get(0) instanceof RexCall in
          && nullabilityCast(in)) {
        // CAST(CAST(i AS INTEGER NOT NULL) AS INTEGER): the branch value cast back to the CASE's type
        RexNode value = in.getOperands().get(0);
        return value.getType().equals(visited.getType()) ? value : visited.clone(visited.getType(), List.of(value));
      }
      if (visited.getKind() != SqlKind.CASE) {
        return visited;
      }
      List<RexNode> operands = new ArrayList<>(visited.getOperands());
      boolean changed = false;
      for (int i = 0; i < operands.size(); i++) {
        boolean value = i % 2 == 1 || i == operands.size() - 1; // THEN values and the ELSE value
        if (value && operands.get(i) instanceof RexCall cast && nullabilityCast(cast)) {
          operands.set(i, cast.getOperands().get(0));
          changed = true;
        }
      }
      return changed ? visited.clone(visited.getType(), operands) : visited;
    }

    @Override
    public RexNode visitSubQuery(RexSubQuery subQuery) {
      RexSubQuery visited = (RexSubQuery) super.visitSubQuery(subQuery);
      return visited.clone(visited.rel.accept(plans));
    }

    /** A cast that only makes a nullable value NOT NULL. */
    private static boolean nullabilityCast(RexCall call) {
      if (call.getKind() != SqlKind.CAST || call.getType().isNullable()) {
        return false;
      }
      RexNode from = call.getOperands().get(0);
      return from.getType().isNullable() && SqlTypeUtil.equalSansNullability(from.getType(), call.getType());
    }
  }
}
