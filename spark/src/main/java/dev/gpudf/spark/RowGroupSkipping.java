package dev.gpudf.spark;

import dev.gpudf.formats.ValueRange;
import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Or;

/**
 * Row groups a scan need not read: Spark's filters pushed down to the scan (all of which hold for
 * every row the query keeps), checked against each row group's statistics from the footer. A row
 * group is skipped only where a filter proves no row of it can pass; anything it cannot decide
 * (another kind of filter, a column without statistics, a value of another kind) keeps the row
 * group, and the filter above the scan still applies every condition to the rows read.
 */
final class RowGroupSkipping implements Serializable {
  private static final long serialVersionUID = 1L;
  private final Filter[] filters;
  private final List<String> columns;

  /** Skipping by {@code filters} (Spark's pushed-down filters) over the scan's {@code columns}, by name. */
  RowGroupSkipping(List<Filter> filters, List<String> columns) {
    this.filters = filters.toArray(new Filter[0]);
    this.columns = List.copyOf(columns);
  }

  /**
   * Whether a row of a row group whose column {@code c} has the range {@code ranges.apply(c)} (null:
   * unknown) may pass every filter.
   */
  boolean mayMatch(java.util.function.IntFunction<ValueRange> ranges) {
    for (Filter f : filters) {
      if (never(f, ranges)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code f} is false (or NULL) for every row of the row group: only where its statistics prove it. */
  private boolean never(Filter f, java.util.function.IntFunction<ValueRange> ranges) {
    if (f instanceof And a) {
      return never(a.left(), ranges) || never(a.right(), ranges);
    }
    if (f instanceof Or o) {
      return never(o.left(), ranges) && never(o.right(), ranges);
    }
    if (f instanceof IsNull n) {
      ValueRange r = range(n.attribute(), ranges);
      return r != null && !r.hasNulls();
    }
    if (f instanceof IsNotNull n) {
      ValueRange r = range(n.attribute(), ranges);
      return r != null && !r.hasValues();
    }
    if (f instanceof In in) {
      ValueRange r = range(in.attribute(), ranges);
      if (r == null) {
        return false;
      }
      for (Object v : in.values()) {
        if (!outside(r, v)) {
          return false;
        }
      }
      return true;
    }
    String attribute;
    Object value;
    // -1: the column's values must be below the value to pass, 1: above, 0: equal; inclusive or not
    int side;
    boolean inclusive;
    if (f instanceof EqualTo e) {
      attribute = e.attribute();
      value = e.value();
      side = 0;
      inclusive = true;
    } else if (f instanceof LessThan l) {
      attribute = l.attribute();
      value = l.value();
      side = -1;
      inclusive = false;
    } else if (f instanceof LessThanOrEqual l) {
      attribute = l.attribute();
      value = l.value();
      side = -1;
      inclusive = true;
    } else if (f instanceof GreaterThan g) {
      attribute = g.attribute();
      value = g.value();
      side = 1;
      inclusive = false;
    } else if (f instanceof GreaterThanOrEqual g) {
      attribute = g.attribute();
      value = g.value();
      side = 1;
      inclusive = true;
    } else {
      return false;
    }
    ValueRange r = range(attribute, ranges);
    if (r == null) {
      return false;
    }
    if (side == 0) {
      return outside(r, value);
    }
    if (!r.hasValues()) {
      return true;
    }
    Comparable<?> v = comparable(value, side < 0 ? r.min() : r.max());
    if (v == null) {
      return false;
    }
    // below: every value is >= min, so none is < v when min >= v (none <= v when min > v); above: mirrored
    int c = side < 0 ? ValueRange.compare(r.min(), v) : ValueRange.compare(v, r.max());
    return inclusive ? c > 0 : c >= 0;
  }

  /** Whether no value of {@code r} equals {@code value} (false where that cannot be told). */
  private static boolean outside(ValueRange r, Object value) {
    if (!r.hasValues()) {
      return true;
    }
    Comparable<?> v = comparable(value, r.min());
    return v != null && (ValueRange.compare(v, r.min()) < 0 || ValueRange.compare(v, r.max()) > 0);
  }

  private ValueRange range(String attribute, java.util.function.IntFunction<ValueRange> ranges) {
    int c = columns.indexOf(attribute);
    return c < 0 ? null : ranges.apply(c);
  }

  /**
   * Spark's literal {@code value} as a value of the same kind as {@code like} (a statistics bound:
   * Long, Integer days or String), or null when it is not one that compares so (a NULL, a
   * fraction, a decimal, a timestamp, a date before 1583).
   */
  private static Comparable<?> comparable(Object value, Comparable<?> like) {
    if (like instanceof Long) {
      return value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte
          ? (Comparable<?>) ((Number) value).longValue() : null;
    }
    if (like instanceof Integer) {
      if (value instanceof java.time.LocalDate d) {
        return Math.toIntExact(d.toEpochDay());
      }
      // (a java.sql.Date before the Gregorian calendar's start is in another calendar than the footer's days)
      if (value instanceof java.sql.Date d && d.toLocalDate().getYear() > 1583) {
        return Math.toIntExact(d.toLocalDate().toEpochDay());
      }
      return null;
    }
    if (like instanceof String) {
      return value instanceof String s ? s : null;
    }
    return null;
  }
}
