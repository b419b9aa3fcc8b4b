package dev.gpudf.sql;

import dev.gpudf.formats.ValueRange;
import java.util.List;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.util.DateString;
import org.apache.calcite.util.NlsString;

/**
 * Whether a filter can be true for any row of a chunk, judged from what the files' metadata says
 * of the chunk's columns ({@link ValueRange}: a Hive partition's value, a column's min and max):
 * a chunk is skipped only when the filter is certainly false or NULL for every row. What this
 * cannot judge (expressions, casts, functions, columns without a range) keeps the chunk.
 */
final class ChunkPruning {
  private ChunkPruning() {}

  /** True when no row of a chunk whose columns have {@code ranges} can pass {@code condition}. */
  static boolean excludes(RexNode condition, List<ValueRange> ranges, RexBuilder rex) {
    return never(condition, ranges, rex);
  }

  private static boolean never(RexNode e, List<ValueRange> ranges, RexBuilder rex) {
    if (!(e instanceof RexCall call)) {
      return e.isAlwaysFalse();
    }
    switch (call.getKind()) {
      case AND:
        return call.getOperands().stream().anyMatch(o -> never(o, ranges, rex));
      case OR:
        return call.getOperands().stream().allMatch(o -> never(o, ranges, rex));
      case SEARCH:
        return never(RexUtil.expandSearch(rex, null, call), ranges, rex);
      case IS_NULL:
      case IS_NOT_NULL: {
        ValueRange r = range(call.getOperands().get(0), ranges);
        return r != null && (call.getKind() == SqlKind.IS_NULL ? !r.hasNulls() : !r.hasValues());
      }
      case EQUALS:
      case NOT_EQUALS:
      case LESS_THAN:
      case LESS_THAN_OR_EQUAL:
      case GREATER_THAN:
      case GREATER_THAN_OR_EQUAL:
        return comparisonNever(call, ranges);
      default:
        return false;
    }
  }

  /** {@code column op literal} (either side): never true when the column's range lies wholly outside. */
  private static boolean comparisonNever(RexCall call, List<ValueRange> ranges) {
    RexNode a = call.getOperands().get(0);
    RexNode b = call.getOperands().get(1);
    SqlKind kind = call.getKind();
    if (a instanceof RexLiteral && b instanceof RexInputRef) {
      RexNode t = a;
      a = b;
      b = t;
      kind = kind.reverse();
    }
    ValueRange r = range(a, ranges);
    if (r == null || !(b instanceof RexLiteral lit)) {
      return false;
    }
    if (!r.hasValues()) {
      return true; // only NULLs: no comparison is true
    }
    Comparable<?> v = value(lit, r.min());
    if (v == null || r.min() == null || r.max() == null) {
      return lit.isNull(); // comparing with NULL is never true
    }
    int vsMin = ValueRange.compare(v, r.min());
    int vsMax = ValueRange.compare(v, r.max());
    return switch (kind) {
      case EQUALS -> vsMin < 0 || vsMax > 0;
      case NOT_EQUALS -> vsMin == 0 && vsMax == 0;
      case LESS_THAN -> vsMin <= 0; // every value >= min >= v
      case LESS_THAN_OR_EQUAL -> vsMin < 0;
      case GREATER_THAN -> vsMax >= 0;
      case GREATER_THAN_OR_EQUAL -> vsMax > 0;
      default -> false;
    };
  }

  private static ValueRange range(RexNode e, List<ValueRange> ranges) {
    return e instanceof RexInputRef ref && ref.getIndex() < ranges.size() ? ranges.get(ref.getIndex()) : null;
  }

  /** The literal as a value of the range's kind ({@link Long}, {@link Integer} days, {@link String}), or null when it is not one. */
  private static Comparable<?> value(RexLiteral lit, Comparable<?> like) {
    if (lit.isNull()) {
      return null;
    }
    // only a literal of the range's own family converts (getValueAs throws across families)
    org.apache.calcite.sql.type.SqlTypeFamily family = lit.getType().getSqlTypeName().getFamily();
    boolean fits = like instanceof Long ? family == org.apache.calcite.sql.type.SqlTypeFamily.NUMERIC
        : like instanceof Integer ? family == org.apache.calcite.sql.type.SqlTypeFamily.DATE
        : like instanceof String && family == org.apache.calcite.sql.type.SqlTypeFamily.CHARACTER;
    if (!fits) {
      return null;
    }
    if (like instanceof Long) {
      java.math.BigDecimal d = lit.getValueAs(java.math.BigDecimal.class);
      if (d == null || d.stripTrailingZeros().scale() > 0 || d.toBigInteger().bitLength() > 63) {
        return null;
      }
      return d.longValueExact();
    }
    if (like instanceof Integer) {
      DateString d = lit.getValueAs(DateString.class);
      return d == null ? null : d.getDaysSinceEpoch();
    }
    if (like instanceof String) {
      NlsString s = lit.getValueAs(NlsString.class);
      return s == null ? null : s.getValue();
    }
    return null;
  }
}
