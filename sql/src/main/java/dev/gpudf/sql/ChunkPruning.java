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
 * cannot judge (expressions, casts, functions, columns without a range) keeps the chunk. Also an
 * estimate of the share of a chunk's rows a filter passes ({@link #passing}), for sizing the
 * inputs of joins and aggregates.
 */
final class ChunkPruning {
  private ChunkPruning() {}

  /** True when no row of a chunk whose columns have {@code ranges} can pass {@code condition}. */
  static boolean excludes(RexNode condition, List<ValueRange> ranges, RexBuilder rex) {
    return never(condition, ranges, rex);
  }

  /**
   * The share of the rows of a chunk whose columns have {@code ranges} that could pass {@code
   * condition}, as estimated from the ranges with the values spread evenly over each: a comparison
   * of an integer or date column with a literal passes the part of the column's range it keeps; a
   * conjunction passes at most what its most selective part does (no independence is assumed, so
   * correlated columns, TPC-H's ship and commit dates, are not counted twice); a disjunction at
   * most the sum of its parts. Anything else passes every row. Values bunched in part of their range
   * make it wrong either way: it sizes work, it never decides an answer.
   */
  static double passing(RexNode condition, List<ValueRange> ranges, RexBuilder rex) {
    if (never(condition, ranges, rex)) {
      return 0;
    }
    return share(condition, ranges, rex);
  }

  private static double share(RexNode e, List<ValueRange> ranges, RexBuilder rex) {
    if (!(e instanceof RexCall call)) {
      return e.isAlwaysFalse() ? 0 : 1;
    }
    switch (call.getKind()) {
      case AND: {
        // comparisons of one column narrow one interval, whose share counts once
        java.util.Map<Integer, Interval> intervals = new java.util.HashMap<>();
        double least = 1;
        for (RexNode o : call.getOperands()) {
          Interval i = interval(o, ranges);
          if (i != null) {
            intervals.merge(i.column(), i, Interval::and);
          } else {
            least = Math.min(least, share(o, ranges, rex));
          }
        }
        for (Interval i : intervals.values()) {
          least = Math.min(least, i.share(ranges.get(i.column())));
        }
        return least;
      }
      case OR:
        return Math.min(1, call.getOperands().stream().mapToDouble(o -> share(o, ranges, rex)).sum());
      case SEARCH:
        return share(RexUtil.expandSearch(rex, null, call), ranges, rex);
      default: {
        Interval i = interval(call, ranges);
        return i == null ? 1 : i.share(ranges.get(i.column()));
      }
    }
  }

  private static final java.util.Set<SqlKind> COMPARISONS = java.util.EnumSet.of(SqlKind.EQUALS, SqlKind.LESS_THAN,
      SqlKind.LESS_THAN_OR_EQUAL, SqlKind.GREATER_THAN, SqlKind.GREATER_THAN_OR_EQUAL);

  /** The closed interval [lo, hi] of integer or day values of input {@code column} that a comparison keeps. */
  private record Interval(int column, long lo, long hi) {
    Interval and(Interval other) {
      return new Interval(column, Math.max(lo, other.lo), Math.min(hi, other.hi));
    }

    /** The share of the values of {@code r} (integers or days, spread evenly) inside it. */
    double share(ValueRange r) {
      long min = ((Number) r.min()).longValue();
      long max = ((Number) r.max()).longValue();
      long from = Math.max(min, lo);
      long to = Math.min(max, hi);
      // as doubles: max - min can pass a long
      return from > to ? 0 : ((double) to - from + 1) / ((double) max - min + 1);
    }
  }

  /**
   * The interval that {@code column op literal} (either side) keeps of an integer or date column
   * with a range; null for anything else.
   */
  private static Interval interval(RexNode e, List<ValueRange> ranges) {
    if (!(e instanceof RexCall call) || !COMPARISONS.contains(call.getKind())) {
      return null;
    }
    Comparison c = Comparison.of(call);
    ValueRange r = range(c.column(), ranges);
    if (r == null || !(c.value() instanceof RexLiteral lit) || !(r.min() instanceof Number) || !(r.max() instanceof Number)
        || !(value(lit, r.min()) instanceof Number n)) {
      return null;
    }
    int column = ((RexInputRef) c.column()).getIndex();
    long x = n.longValue();
    return switch (c.kind()) {
      case EQUALS -> new Interval(column, x, x);
      // x - 1 and x + 1 where they do not wrap; where they would, nothing passes
      case LESS_THAN -> x == Long.MIN_VALUE ? new Interval(column, 1, 0) : new Interval(column, Long.MIN_VALUE, x - 1);
      case LESS_THAN_OR_EQUAL -> new Interval(column, Long.MIN_VALUE, x);
      case GREATER_THAN -> x == Long.MAX_VALUE ? new Interval(column, 1, 0) : new Interval(column, x + 1, Long.MAX_VALUE);
      case GREATER_THAN_OR_EQUAL -> new Interval(column, x, Long.MAX_VALUE);
      default -> null;
    };
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

  /** A comparison's operands and kind as {@code column kind value}: a literal first changes sides. */
  private record Comparison(RexNode column, RexNode value, SqlKind kind) {
    static Comparison of(RexCall call) {
      RexNode a = call.getOperands().get(0);
      RexNode b = call.getOperands().get(1);
      return a instanceof RexLiteral && b instanceof RexInputRef ? new Comparison(b, a, call.getKind().reverse())
          : new Comparison(a, b, call.getKind());
    }
  }

  /** {@code column op literal} (either side): never true when the column's range lies wholly outside. */
  private static boolean comparisonNever(RexCall call, List<ValueRange> ranges) {
    Comparison c = Comparison.of(call);
    SqlKind kind = c.kind();
    ValueRange r = range(c.column(), ranges);
    if (r == null || !(c.value() instanceof RexLiteral lit)) {
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
