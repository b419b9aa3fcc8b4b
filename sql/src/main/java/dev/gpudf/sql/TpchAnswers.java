package dev.gpudf.sql;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Whether two engines' answers to a TPC-H query agree, by TPC-H's rules as far as they bind a
 * comparison: same rows in the same order, integers and strings exact, dates by day, other
 * numbers within a cent or a relative 1e-9, whichever is larger.
 */
public final class TpchAnswers {
  private TpchAnswers() {}

  /** The rows of an Arrow result (a DATE as its day number). */
  public static List<Object[]> rows(VectorSchemaRoot result) {
    List<Object[]> rows = new ArrayList<>();
    for (int r = 0; r < result.getRowCount(); r++) {
      Object[] row = new Object[result.getFieldVectors().size()];
      for (int c = 0; c < row.length; c++) {
        row[c] = day(result.getVector(c).getObject(r));
      }
      rows.add(row);
    }
    return rows;
  }

  /** The rows of a JDBC result (a DATE as its day number, as in {@link #rows(VectorSchemaRoot)}). */
  public static List<Object[]> rows(ResultSet result) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    int cols = result.getMetaData().getColumnCount();
    while (result.next()) {
      Object[] row = new Object[cols];
      for (int c = 0; c < cols; c++) {
        row[c] = day(result.getObject(c + 1));
      }
      rows.add(row);
    }
    return rows;
  }

  private static Object day(Object v) {
    if (v instanceof java.sql.Date d) {
      return d.toLocalDate().toEpochDay();
    }
    return v instanceof LocalDate d ? d.toEpochDay() : v;
  }

  /** Null when {@code got} agrees with {@code want}, else the first difference. */
  public static String difference(List<Object[]> want, List<Object[]> got) {
    for (int r = 0; r < want.size(); r++) {
      if (r >= got.size()) {
        return "only " + got.size() + " rows, " + want.size() + " wanted";
      }
      if (want.get(r).length != got.get(r).length) {
        return "row " + r + " has " + got.get(r).length + " columns, " + want.get(r).length + " wanted";
      }
      for (int c = 0; c < want.get(r).length; c++) {
        Object w = want.get(r)[c];
        Object g = got.get(r)[c];
        if (!same(w, g)) {
          return "row " + r + " column " + (c + 1) + ": " + g + ", " + w + " wanted";
        }
      }
    }
    return got.size() > want.size() ? got.size() + " rows, " + want.size() + " wanted" : null;
  }

  private static boolean same(Object want, Object got) {
    if (want == null || got == null) {
      return want == got;
    }
    if (want instanceof Number w && got instanceof Number g) {
      boolean exact = (w instanceof Long || w instanceof Integer) && (g instanceof Long || g instanceof Integer);
      if (exact) {
        return w.longValue() == g.longValue();
      }
      double x = new BigDecimal(w.toString()).doubleValue();
      double y = new BigDecimal(g.toString()).doubleValue();
      return Math.abs(x - y) <= Math.max(0.01, 1e-9 * Math.abs(x));
    }
    return want.toString().equals(got.toString());
  }

  /**
   * {@link #difference}, but rows that agree only as a set also agree: where an ORDER BY leaves
   * ties (TPC-DS orders by few keys), engines may return tied rows in another order. Numbers are
   * compared rounded to cents for the set comparison. Null when they agree.
   */
  public static String differenceUpToTies(List<Object[]> want, List<Object[]> got) {
    String inOrder = difference(want, got);
    if (inOrder == null || want.size() != got.size()) {
      return inOrder;
    }
    return difference(canonical(want), canonical(got)) == null ? null : inOrder;
  }

  private static List<Object[]> canonical(List<Object[]> rows) {
    List<Object[]> sorted = new ArrayList<>(rows);
    sorted.sort((a, b) -> key(a).compareTo(key(b)));
    return sorted;
  }

  /** A row's sort key for comparing as sets: numbers rounded to cents, so that equal answers sort alike. */
  private static String key(Object[] row) {
    StringBuilder b = new StringBuilder();
    for (Object v : row) {
      b.append(v instanceof Number n && !(v instanceof Integer || v instanceof Long)
          ? new BigDecimal(n.toString()).setScale(2, java.math.RoundingMode.HALF_UP).toPlainString()
          : String.valueOf(v)).append('\u0001');
    }
    return b.toString();
  }
}
