package dev.gpudf.kernels;

/** The operators of an {@link Expr} tree, with SQL semantics (three-valued logic, NULL in, NULL out). */
public enum Op {
  /** DIV takes an optional third argument, an integer constant: the scale of a decimal quotient. */
  ADD, SUB, MUL, DIV, MOD, NEG,
  EQ, NE, LT, LE, GT, GE, IS_DISTINCT_FROM, IS_NOT_DISTINCT_FROM,
  AND, OR, NOT, IS_NULL, IS_NOT_NULL,
  /** args: when1, then1, when2, then2, ..., else. */
  CASE,
  COALESCE,
  /** args: value, then the list. */
  IN,
  /** args: value, low, high (inclusive). */
  BETWEEN,
  /**
   * args: DATE or TIMESTAMP, integer count: calendar months added (a day past the new month's
   * end becomes its last day), or days added; the result has the first argument's type.
   */
  ADD_MONTHS, ADD_DAYS,
  /** args: TIMESTAMP, integer count of milliseconds added (a day-time interval). */
  ADD_MILLIS,
  /** Calendar fields of a DATE or TIMESTAMP (proleptic Gregorian, UTC), as INT32. */
  EXTRACT_YEAR, EXTRACT_MONTH, EXTRACT_DAY,
  /** Same type as the argument; the most negative integer is an overflow. */
  ABS,
  /** FLOAT64 results; a negative SQRT argument or a non-positive LN argument is an error. */
  SQRT, LN, EXP, POWER,
  /** Floats stay floats, integers are unchanged, DECIMAL(p, s) becomes DECIMAL(p - s + 1, 0). */
  FLOOR, CEIL,
  /**
   * args: value[, digits, an integer constant, default 0]: rounded half away from zero to that
   * many digits after the point (before it when negative), keeping the value's type.
   */
  ROUND,
  /** -1, 0 or 1 in the argument's type (a float's NaN and -0.0 stay as they are). */
  SIGN,
  /**
   * args: value, pattern[, escape]: {@code %} matches any run of characters, {@code _} one
   * character (a Unicode code point, not a byte); the optional one-character escape literal
   * makes the next pattern character literal.
   */
  LIKE,
  /** Characters (code points) of a string, as INT32. */
  CHAR_LENGTH,
  /**
   * args: string, start[, length] in characters, 1-based; positions before the first character
   * count towards the length (SQL's rule); a negative length is an error.
   */
  SUBSTRING,
  /** Spaces removed from both ends, the start, or the end. */
  TRIM, LTRIM, RTRIM,
  /** args: needle, haystack: the 1-based character position of the first match, 0 if none, as INT32. */
  POSITION,
  /**
   * Strings built anew (see {@code StringBuild}): {@code a || b} (NULL if either is), and a
   * string with each character upper- or lower-cased (Java's simple case mapping).
   */
  CONCAT, UPPER, LOWER,
  /** args: string, from, to: each non-overlapping {@code from}, left to right, replaced by {@code to} (none if it is empty). */
  REPLACE,
  /**
   * args: string, length (INT64), fill: the string cut to {@code length} characters, or filled to
   * it with copies of {@code fill} on the left (LPAD) or the right (RPAD); an empty fill adds nothing.
   */
  LPAD, RPAD
}
