package dev.gpudf.kernels;

/** The operators of an {@link Expr} tree, with SQL semantics (three-valued logic, NULL in, NULL out). */
public enum Op {
  ADD, SUB, MUL, DIV, MOD, NEG,
  EQ, NE, LT, LE, GT, GE, IS_DISTINCT_FROM, IS_NOT_DISTINCT_FROM,
  AND, OR, NOT, IS_NULL, IS_NOT_NULL,
  /** args: when1, then1, when2, then2, ..., else. */
  CASE,
  COALESCE,
  /** args: value, then the list. */
  IN,
  /** args: value, low, high (inclusive). */
  BETWEEN
}
