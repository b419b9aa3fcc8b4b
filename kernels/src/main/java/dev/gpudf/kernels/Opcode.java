package dev.gpudf.kernels;

/**
 * Instructions of a {@link Program}. The ordinal is the code the kernel switches on:
 * {@code expr.cu} numbers its opcodes identically, which {@code OpcodeTest} checks.
 */
enum Opcode {
  /** dst = column slot a, loaded as kind c ({@link LoadKind}). */
  LOAD_COL,
  /** dst = constant a, or NULL when b is 1. */
  LOAD_CONST,
  /**
   * Integer arithmetic on int64 with overflow checks; c = result width in bits, 128 for a DECIMAL
   * of more than 18 digits, whose value past 64 bits is {@link #ERR_WIDE} (not an SQL overflow).
   */
  I_ADD, I_SUB, I_MUL, I_DIV, I_MOD, I_NEG,
  /** Double arithmetic; c = 1 rounds the result to float32. */
  F_ADD, F_SUB, F_MUL, F_DIV, F_MOD, F_NEG,
  /** dst = (double) a. */
  I2F,
  /** dst = a * constant b (a power of ten), with an overflow check; c = 128 as for I_MUL. */
  SCALE_UP,
  /** dst = (double) a / constant b (double bits of a power of ten). */
  D2F,
  /** Compare int64 a and b; c = {@link Cmp} ordinal. */
  CMP_I,
  /** Compare doubles a and b in the total order NaN above all, -0.0 == 0.0; c = {@link Cmp} ordinal. */
  CMP_F,
  /** Three-valued AND and OR; a side that decides the result hides the other side's error. */
  AND, OR, NOT,
  IS_NULL, IS_NOT_NULL,
  /** dst = a is TRUE ? b : c (errors only from a and the chosen side). */
  SELECT,
  /** dst = floor(a / constant b), for timestamps before 1970 too. */
  FLOOR_DIV,
  /** dst = calendar field c (0 year, 1 month, 2 day) of the day number a (days since 1970-01-01). */
  CIVIL,
  /** dst = a, an overflow unless a fits in c bits. */
  RANGE_CHECK,
  /** dst = the double a rounded half to even, as int64; NaN, infinities and out of range overflow. */
  F2I,
  /** dst = a / constant b rounded half away from zero. */
  SCALE_DOWN,
  /** dst = a, an overflow unless |a| < constant b. */
  PRECISION_CHECK,
  /**
   * dst = the double a times the double constant b, rounded half away from zero, as int64; c = 128
   * for a DECIMAL of more than 18 digits, as for I_MUL.
   */
  F2DEC,
  /** dst = the double a rounded to float32. */
  TO_F32,
  /** dst = function c of doubles a (and b): {@link MathFn}. */
  F_MATH,
  /** dst = |a|, an overflow unless it fits in c bits. */
  I_ABS,
  /** dst = the string at row of column slot a (address and byte length). */
  LOAD_STR_COL,
  /** dst = the string constant at byte a of the string pool, b bytes long. */
  LOAD_STR_CONST,
  /** Compare strings a and b by unsigned bytes, a prefix first; c = {@link Cmp} ordinal. */
  CMP_S,
  /** dst = string a LIKE pattern b, c = the escape byte or -1. */
  LIKE,
  /** dst = code points of string a. */
  CHAR_LENGTH,
  /** dst = characters [b, b + c) of string a (1-based; c = -1: to the end); registers b and c. */
  SUBSTRING,
  /** dst = string a without spaces at both ends (c = 0), the start (1) or the end (2). */
  TRIM,
  /** dst = 1-based character position of string a in string b, 0 if absent. */
  POSITION,
  /** dst = a * 10^c / b rounded half away from zero, in 128 bits; beyond 64 bits is ERR_WIDE. */
  DEC_DIV,
  /**
   * dst = day number a moved by b calendar months, the day of month clamped to the new month's
   * length (Jan 31 + 1 month = Feb 28 or 29); a result beyond 32 bits overflows.
   */
  ADD_MONTHS,
  /**
   * dst = string a parsed as {@link ParseKind} c (spaces around it ignored); DECIMAL reads its
   * scale and its bound 10^precision from constants b and b + 1. A string that does not parse,
   * or whose value does not fit, is ERR_CAST; a DOUBLE that cannot be converted exactly with
   * one rounding (more than 2^53 in the digits, or a power of ten beyond 22) is ERR_INEXACT.
   */
  PARSE;

  /** What PARSE reads. */
  enum ParseKind { INT64, DECIMAL64, DATE, BOOL, FLOAT64 }

  /** Functions of F_MATH; ROUND takes b = 10^digits and rounds half away from zero. */
  enum MathFn { SQRT, LN, EXP, POWER, FLOOR, CEIL, ABS, ROUND }

  /** How LOAD_COL reads a value. */
  enum LoadKind { I8, I16, I32, I64, F32, F64, BITS, I128 }

  /** Comparison kinds. */
  enum Cmp { EQ, NE, LT, LE, GT, GE }

  /** Error codes a row can end with. */
  static final int ERR_OVERFLOW = 1;
  static final int ERR_DIV_ZERO = 2;
  static final int ERR_DOMAIN = 3;
  static final int ERR_NEGATIVE_LENGTH = 4;
  /**
   * A DECIMAL value beyond 64 bits reached a register (a limit of these evaluators, not an SQL
   * error): {@link Evaluate} runs the program again in 128 bits.
   */
  static final int ERR_WIDE = 5;

  /** The error of a value past 64 bits in an instruction whose c declares {@code bits}. */
  static int overflow(int bits) {
    return bits == 128 ? ERR_WIDE : ERR_OVERFLOW;
  }
  /** A string that is not a value of the cast's type. */
  static final int ERR_CAST = 6;
  /** A string whose DOUBLE value the parser cannot round exactly (a limit of this parser). */
  static final int ERR_INEXACT = 7;
}
