package dev.gpudf.sql.files;

/**
 * What a file's metadata says about one column of one chunk, for skipping chunks a filter cannot
 * match: its smallest and largest value (null where the chunk has no value), and whether it has
 * NULLs and values at all. Values are {@link Long} (integers), {@link Integer} (DATE, days since
 * 1970-01-01) or {@link String}; a Hive partition column's range is its one value.
 */
public record ValueRange(Comparable<?> min, Comparable<?> max, boolean hasNulls, boolean hasValues) {
  /** Every row holds {@code value} (null: every row is NULL). */
  public static ValueRange constant(Comparable<?> value) {
    return value == null ? new ValueRange(null, null, true, false) : new ValueRange(value, value, false, true);
  }
}
