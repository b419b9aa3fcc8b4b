package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Evaluate;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexExecutor;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.util.DateString;

/**
 * Folds the planner's constant expressions ({@code DATE '1998-12-01' - INTERVAL '90' DAY}, {@code
 * 0.06 + 0.01}, casts of literals) with gpudf's own CPU evaluator, so that a constant has the value
 * the engine gives the same expression over a column. Calcite's executor, which wrote Java for
 * every batch of constants and compiled it with Janino, truncated casts that gpudf and DuckDB
 * round ({@code CAST(12.345 AS DECIMAL(15, 2))} 12.34, {@code CAST(12.5 AS INTEGER)} 12) and
 * divided decimals into doubles with 16 digits ({@code 7.0 / 3} 2.333333333333333).
 *
 * <p>An expression whose result is a boolean, an integer, an exact decimal, a finite floating-point
 * number, a date or a VARCHAR is folded here. One the evaluator cannot translate or type, and
 * results of other types (CHAR with its padding, timestamps, intervals) or a NaN or infinity, go
 * to Calcite's executor as before. An expression whose evaluation fails (division by zero, a cast
 * that does not fit) stays as it is, so that the error comes at run time, and only if a row
 * evaluates it.
 */
final class ConstantFolder implements RexExecutor {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ConstantFolder.class);
  /** The one folder; it holds no state but counters. */
  static final ConstantFolder INSTANCE = new ConstantFolder();
  private static final AtomicLong FOLDED = new AtomicLong();
  private static final AtomicLong DELEGATED = new AtomicLong();
  /** {@code -Dgpudf.plan.foldConstants=false} leaves every constant to Calcite's executor, as before this folder. */
  private static final boolean ON = Boolean.parseBoolean(System.getProperty("gpudf.plan.foldConstants", "true"));

  private ConstantFolder() {}

  /** Constant expressions this process took itself: folded, or kept for run time where evaluating them failed. */
  static long folded() {
    return FOLDED.get();
  }

  /** Constant expressions this process left to Calcite's executor. */
  static long delegated() {
    return DELEGATED.get();
  }

  @Override
  public void reduce(RexBuilder rexBuilder, List<RexNode> constExps, List<RexNode> reducedValues) {
    RexNode[] out = new RexNode[constExps.size()];
    List<Integer> rest = new ArrayList<>();
    try (RootAllocator allocator = new RootAllocator(); Exec cpu = Exec.onCpu(allocator)) {
      for (int i = 0; i < out.length; i++) {
        out[i] = ON ? fold(rexBuilder, constExps.get(i), cpu) : null;
        if (out[i] == null) {
          rest.add(i);
        }
      }
    }
    FOLDED.addAndGet(out.length - rest.size());
    if (!rest.isEmpty()) {
      DELEGATED.addAndGet(rest.size());
      List<RexNode> reduced = new ArrayList<>();
      RexUtil.EXECUTOR.reduce(rexBuilder, rest.stream().map(constExps::get).toList(), reduced);
      for (int j = 0; j < rest.size(); j++) {
        out[rest.get(j)] = reduced.get(j);
      }
    }
    reducedValues.addAll(List.of(out));
  }

  /** {@code e}'s value as a literal of its type; {@code e} itself where it fails; null where Calcite's executor must fold it. */
  private static RexNode fold(RexBuilder rexBuilder, RexNode e, Exec cpu) {
    RelDataType type = e.getType();
    if (!folds(type.getSqlTypeName())) {
      return null;
    }
    Expr expr;
    try {
      expr = RexToExpr.translate(e, List.of(), rexBuilder, List.of());
    } catch (NotSupportedException | UserException unsupported) {
      return null;
    } catch (RuntimeException bug) {
      LOG.warn("translating {} failed; Calcite's executor folds it", e, bug);
      return null;
    }
    // one row and no column: the expression's value, once
    try (HostTable one = new HostTable(List.of(), List.of(), 1); HostColumn value = Evaluate.evaluate(cpu, one, expr)) {
      return literal(rexBuilder, value.vector(), SqlTypes.fromCalcite(type), type);
    } catch (NotSupportedException unsupported) {
      return null;
    } catch (UserException failed) {
      return e;
    } catch (RuntimeException bug) {
      // a fault of the folder or the evaluator must not fail a plan that Calcite's executor folds:
      // said in the log, and the expression goes there
      LOG.warn("folding {} failed; Calcite's executor folds it", e, bug);
      return null;
    }
  }

  private static boolean folds(SqlTypeName t) {
    return switch (t) {
      case BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, DECIMAL, REAL, FLOAT, DOUBLE, DATE, VARCHAR -> true;
      default -> false;
    };
  }

  private static RexNode literal(RexBuilder rexBuilder, FieldVector v, DataType t, RelDataType type) {
    Object raw = v.getObject(0);
    if (raw == null) {
      return rexBuilder.makeNullLiteral(type);
    }
    Object value = switch (t.id()) {
      case BOOL -> (Boolean) raw;
      case INT8, INT16, INT32, INT64 -> BigDecimal.valueOf(((Number) raw).longValue());
      case DECIMAL -> (BigDecimal) raw;
      // the shortest decimal that reads back as the same double; NaN and infinities have none
      case FLOAT32, FLOAT64 -> Double.isFinite(((Number) raw).doubleValue())
          ? new BigDecimal(Double.toString(((Number) raw).doubleValue())) : null;
      case DATE -> DateString.fromDaysSinceEpoch(((Number) raw).intValue());
      case STRING -> raw.toString();
      default -> null;
    };
    return value == null ? null : rexBuilder.makeLiteral(value, type, true);
  }
}
