package dev.gpudf.kernels;

/**
 * One ORDER BY key: a column by position, its direction, and where its nulls go. Floats order
 * NaN above every number (so first when descending) and -0.0 equal to 0.0.
 *
 * @param column the key column's position in the table
 * @param ascending true for ascending
 * @param nullsFirst true to put nulls before all values
 */
public record SortKey(int column, boolean ascending, boolean nullsFirst) {
  /** Ascending with nulls last, the SQL default for ASC. */
  public static SortKey asc(int column) {
    return new SortKey(column, true, false);
  }

  /** Descending with nulls first, the SQL default for DESC. */
  public static SortKey desc(int column) {
    return new SortKey(column, false, true);
  }
}
