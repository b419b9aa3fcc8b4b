package dev.gpudf.kernels;

/**
 * The reductions over a column. Nulls are ignored as in SQL; over no valid row every reduction
 * but the counts gives NULL. Result types: counts INT64; SUM of integers INT64 (overflow is an
 * error), of floats FLOAT64, of DECIMAL(p, s) DECIMAL(38, s) accumulated in 128 bits (overflow is
 * an error); MIN and MAX the input type (NaN above every number; FALSE below TRUE; VARCHAR by
 * unsigned bytes, a prefix first, from a sort: {@link RankedExtremes}); MEAN FLOAT64 from the exact sum
 * (so infinities give infinities); VAR_* and STDDEV_* FLOAT64 by Welford's method, NaN when the
 * input holds an infinity; ANY and ALL, over BOOL, BOOL. ANY_VALUE and COUNT_DISTINCT are
 * grouped only (see {@link GroupBy}): a group's first non-null value, and its number of distinct
 * non-null values (INT64).
 */
public enum Reduction {
  COUNT_ALL, COUNT_VALID, SUM, MIN, MAX, MEAN, VAR_SAMP, VAR_POP, STDDEV_SAMP, STDDEV_POP, ANY, ALL, ANY_VALUE, COUNT_DISTINCT
}
