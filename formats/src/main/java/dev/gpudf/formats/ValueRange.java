package dev.gpudf.formats;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

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

  /** The range of this chunk's rows and {@code other}'s together. */
  public ValueRange union(ValueRange other) {
    if (!hasValues || !other.hasValues) {
      ValueRange values = hasValues ? this : other;
      return new ValueRange(values.min, values.max, hasNulls || other.hasNulls, values.hasValues);
    }
    return new ValueRange(compare(min, other.min) <= 0 ? min : other.min, compare(max, other.max) >= 0 ? max : other.max,
        hasNulls || other.hasNulls, true);
  }

  /** Values of one kind compared as the engine does (strings by unsigned UTF-8 bytes). */
  public static int compare(Comparable<?> x, Comparable<?> y) {
    if (x instanceof String a && y instanceof String b) {
      return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
    if (x instanceof Long a && y instanceof Long b) {
      return Long.compare(a, b);
    }
    if (x instanceof Integer a && y instanceof Integer b) {
      return Integer.compare(a, b);
    }
    throw new IllegalArgumentException("values of different kinds: " + x + ", " + y);
  }
}
