// Expression interpreter: one thread evaluates a compiled Program (ExprCompiler) for K rows.
// Registers hold int64 (integers, dates, scaled decimals, booleans as 0/1) or double bits, a
// null bit and an error code. Errors travel with values (a CASE branch not taken cannot fail the
// query); a row whose result carries an error reports itself through *error (the lowest failing
// row wins, with its code in the low byte). Warps cover 32 consecutive rows so validity and BOOL
// results are written a word at a time with __ballot_sync.
#include <cstdint>
#include <math_constants.h>
#include <climits>
#include "common.cuh"

namespace gpudf_expr {
// Opcode numbering: identical to the Java enum Opcode (OpcodeTest checks this file).
enum Opcode {
  LOAD_COL = 0, LOAD_CONST = 1,
  I_ADD = 2, I_SUB = 3, I_MUL = 4, I_DIV = 5, I_MOD = 6, I_NEG = 7,
  F_ADD = 8, F_SUB = 9, F_MUL = 10, F_DIV = 11, F_MOD = 12, F_NEG = 13,
  I2F = 14, SCALE_UP = 15, D2F = 16, CMP_I = 17, CMP_F = 18,
  AND = 19, OR = 20, NOT = 21, IS_NULL = 22, IS_NOT_NULL = 23, SELECT = 24, FLOOR_DIV = 25, CIVIL = 26,
  RANGE_CHECK = 27, F2I = 28, SCALE_DOWN = 29, PRECISION_CHECK = 30, F2DEC = 31, TO_F32 = 32, F_MATH = 33, I_ABS = 34,
  LOAD_STR_COL = 35, LOAD_STR_CONST = 36, CMP_S = 37, LIKE = 38, CHAR_LENGTH = 39, SUBSTRING = 40, TRIM = 41,
  POSITION = 42, DEC_DIV = 43, ADD_MONTHS = 44, PARSE = 45
};
enum MathFn { M_SQRT = 0, M_LN = 1, M_EXP = 2, M_POWER = 3, M_FLOOR = 4, M_CEIL = 5, M_ABS = 6, M_ROUND = 7 };
enum LoadKind { K_I8 = 0, K_I16 = 1, K_I32 = 2, K_I64 = 3, K_F32 = 4, K_F64 = 5, K_BITS = 6, K_I128 = 7 };
enum Cmp { C_EQ = 0, C_NE = 1, C_LT = 2, C_LE = 3, C_GT = 4, C_GE = 5 };
constexpr int kErrOverflow = 1;
constexpr int kErrDivZero = 2;
constexpr int kErrDomain = 3;
constexpr int kErrNegativeLength = 4;
constexpr int kErrWide = 5;
constexpr int kErrCast = 6;
constexpr int kErrInexact = 7;
enum ParseKind { P_INT64 = 0, P_DECIMAL64 = 1, P_DATE = 2, P_BOOL = 3, P_FLOAT64 = 4 };
constexpr int kWidth = 5;

// Result types the store step writes (Java: Evaluate.StoreKind).
// S_STRLEN writes each row's byte length (int64), S_STRCOPY its bytes at str_offsets[row].
enum Store { S_I8 = 0, S_I16 = 1, S_I32 = 2, S_I64 = 3, S_F32 = 4, S_F64 = 5, S_BITS = 6, S_D128 = 7, S_STRLEN = 8,
             S_STRCOPY = 9 };

// x rounded half away from zero at the scale `scale` (10^digits). Explicit _rn operations: a fused
// multiply-add would round differently from the CPU twin. From 2^52 up a double is an integer.
__device__ __forceinline__ double round_away(double x, double scale) {
  double m = __dmul_rn(fabs(x), scale);
  if (!(m < 4503599627370496.0)) return x;
  return copysign(__ddiv_rn(floor(__dadd_rn(m, 0.5)), scale), x);
}

// past 64 bits: an SQL overflow, or for an instruction declared 128 bits wide (a DECIMAL of more than
// 18 digits) a limit of this interpreter, which the host runs again in 128 bits (Opcode.overflow)
__device__ __forceinline__ int overflow_code(int bits) { return bits == 128 ? kErrWide : kErrOverflow; }

__device__ __forceinline__ bool fits(long long v, int bits) {
  if (bits >= 64) return true;
  long long lim = 1ll << (bits - 1);
  return v >= -lim && v < lim;
}

__device__ __forceinline__ int cmp_f(double x, double y) {
  bool nx = isnan(x), ny = isnan(y);
  if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
  return x < y ? -1 : (x > y ? 1 : 0);  // -0.0 == 0.0 under <
}

__device__ __forceinline__ long long floor_div(long long x, long long y) {
  long long q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

// Year, month or day of a day number since 1970-01-01 (proleptic Gregorian), in 400-year eras
// starting on March 1; CpuEval.civil is the same computation.
__device__ __forceinline__ long long civil(long long days, int field) {
  long long z = days + 719468;
  long long era = floor_div(z, 146097);
  long long doe = z - era * 146097;
  long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long long mp = (5 * doy + 2) / 153;
  long long day = doy - (153 * mp + 2) / 5 + 1;
  long long month = mp < 10 ? mp + 3 : mp - 9;
  long long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return field == 0 ? year : (field == 1 ? month : day);
}

// Day number of a proleptic Gregorian date (the inverse of civil; CpuEval.daysFromCivil).
__device__ __forceinline__ long long days_from_civil(long long y, long long m, long long d) {
  y -= m <= 2 ? 1 : 0;
  long long era = floor_div(y, 400);
  long long yoe = y - era * 400;
  long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Day number `days` moved by `months`, the day clamped to the month's length (CpuEval.addMonths).
__device__ __forceinline__ long long add_months(long long days, long long months) {
  long long y = civil(days, 0), m = civil(days, 1), d = civil(days, 2);
  long long index = y * 12 + (m - 1) + months;
  long long y2 = floor_div(index, 12), m2 = index - y2 * 12 + 1;
  bool leap = (y2 % 4 == 0 && y2 % 100 != 0) || y2 % 400 == 0;
  long long length = m2 == 2 ? (leap ? 29 : 28) : (m2 == 4 || m2 == 6 || m2 == 9 || m2 == 11) ? 30 : 31;
  return days_from_civil(y2, m2, d < length ? d : length);
}

// Strings to values for CAST (CpuEval.parse is the same, step for step). Returns 0 or an error
// code; spaces around the text are ignored.
__device__ __forceinline__ bool digit(unsigned char c) { return c >= '0' && c <= '9'; }

__device__ __forceinline__ bool lower_equals(const unsigned char* s, int n, const char* word) {
  int i = 0;
  for (; word[i] != 0; i++) {
    if (i >= n) return false;
    unsigned char c = s[i];
    if (c >= 'A' && c <= 'Z') c = c - 'A' + 'a';
    if (c != (unsigned char)word[i]) return false;
  }
  return i == n;
}

__device__ int parse_value(const unsigned char* s, int n, int kind, long long scale, long long bound, long long* out) {
  while (n > 0 && s[0] == ' ') { s++; n--; }
  while (n > 0 && s[n - 1] == ' ') n--;
  if (n == 0) return kErrCast;
  if (kind == P_BOOL) {
    if (lower_equals(s, n, "true")) { *out = 1; return 0; }
    if (lower_equals(s, n, "false")) { *out = 0; return 0; }
    return kErrCast;
  }
  if (kind == P_DATE) {
    int i = 0;
    long long part[3] = {0, 0, 0};
    for (int p = 0; p < 3; p++) {
      int start = i;
      while (i < n && digit(s[i]) && i - start < 9) part[p] = part[p] * 10 + (s[i++] - '0');
      int width = i - start;
      if (width == 0 || (p == 0 && width != 4) || (p > 0 && width > 2)) return kErrCast;
      if (p < 2) {
        if (i >= n || s[i] != '-') return kErrCast;
        i++;
      }
    }
    if (i != n) return kErrCast;
    long long y = part[0], m = part[1], d = part[2];
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    long long length = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
    if (m < 1 || m > 12 || d < 1 || d > length) return kErrCast;
    *out = days_from_civil(y, m, d);
    return 0;
  }
  bool neg = false;
  int i = 0;
  if (s[0] == '+' || s[0] == '-') { neg = s[0] == '-'; i = 1; }
  if (kind == P_FLOAT64) {
    const unsigned char* w = s + i;
    int wn = n - i;
    if (lower_equals(w, wn, "nan")) { *out = __double_as_longlong(CUDART_NAN); return 0; }
    if (lower_equals(w, wn, "infinity") || lower_equals(w, wn, "inf")) {
      *out = __double_as_longlong(neg ? -CUDART_INF : CUDART_INF);
      return 0;
    }
  }
  // digits of the value: an unsigned 64-bit mantissa, the exponent of ten it stands at, and
  // whether a nonzero digit had to be dropped
  unsigned long long mant = 0;
  int exp10 = 0, digits = 0, next = -1;
  bool any = false, dot = false, dropped = false;
  for (; i < n; i++) {
    unsigned char c = s[i];
    if (c == '.' && !dot) { dot = true; continue; }
    if (!digit(c)) break;
    any = true;
    int v = c - '0';
    if (kind == P_DECIMAL64 && dot && exp10 <= -scale) {
      // beyond the target scale: the first such digit rounds, the rest do not matter
      if (next < 0) next = v;
      continue;
    }
    if (mant == 0 && v == 0) {
      if (dot) exp10--;
      continue;
    }
    if (digits < 19) {
      mant = mant * 10 + v;
      digits++;
      if (dot) exp10--;
    } else {
      if (kind != P_FLOAT64) return kErrCast;
      if (v != 0) dropped = true;
      if (!dot) exp10++;
    }
  }
  if (!any) return kErrCast;
  if (kind == P_FLOAT64 && i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
    int e = 0, ed = 0;
    while (i < n && digit(s[i])) { if (e < 100000) e = e * 10 + (s[i] - '0'); i++; ed++; }
    if (ed == 0) return kErrCast;
    exp10 += eneg ? -e : e;
  }
  if (i != n) return kErrCast;
  if (kind == P_FLOAT64) {
    const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                          1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double r;
    if (mant == 0) {
      r = 0.0;
    } else if (dropped || mant > (1ull << 53) || exp10 < -22 || exp10 > 22) {
      return kErrInexact;
    } else {
      r = exp10 >= 0 ? __dmul_rn((double)mant, p10[exp10]) : __ddiv_rn((double)mant, p10[-exp10]);
    }
    *out = __double_as_longlong(neg ? -r : r);
    return 0;
  }
  // integers and decimals: mant * 10^exp10 brought to the target scale
  long long target = kind == P_DECIMAL64 ? scale : 0;
  if (kind == P_INT64 && exp10 < 0) return kErrCast;
  __int128 v = mant;
  for (long long k = 0; k < exp10 + target; k++) {
    v *= 10;
    if (v > (__int128)LLONG_MAX + 1) return kErrCast;
  }
  if (next >= 5) v += 1;
  if (neg) v = -v;
  if (v > (__int128)LLONG_MAX || v < (__int128)LLONG_MIN) return kErrCast;
  if (kind == P_DECIMAL64 && (v >= bound || v <= -bound)) return kErrCast;
  *out = (long long)v;
  return 0;
}

// x / d rounded half away from zero, d > 0 (CpuEval.divideRoundingAway).
__device__ __forceinline__ long long divide_rounding_away(long long x, long long d) {
  long long q = x / d, rem = x % d;
  if ((rem < 0 ? -rem : rem) * 2 >= d) q += x < 0 ? -1 : 1;
  return q;
}

// Unsigned byte order, a prefix first (CpuEval.compareBytes).
__device__ int cmp_s(const unsigned char* a, int la, const unsigned char* b, int lb) {
  int n = la < lb ? la : lb;
  for (int i = 0; i < n; i++) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return la < lb ? -1 : (la > lb ? 1 : 0);
}

__device__ __forceinline__ int cp_bytes(unsigned char lead) {
  return lead < 0xC0 ? 1 : (lead < 0xE0 ? 2 : (lead < 0xF0 ? 3 : (lead < 0xF8 ? 4 : 1)));
}

// SQL LIKE over UTF-8 bytes (CpuEval.like is the same loop): '_' takes one code point, '%' any
// run, retried from the last '%' one code point further on a mismatch.
__device__ bool like(const unsigned char* s, int n, const unsigned char* p, int m, int escape) {
  int si = 0, pi = 0, starP = -1, starS = -1;
  while (si < n) {
    bool matched = false;
    if (pi < m) {
      int pc = p[pi];
      if (pc == escape && pi + 1 < m) {
        int w = cp_bytes(p[pi + 1]);
        if (si + w <= n && pi + 1 + w <= m && cmp_s(s + si, w, p + pi + 1, w) == 0) {
          si += w;
          pi += 1 + w;
          matched = true;
        }
      } else if (pc == '%') {
        starP = pi++;
        starS = si;
        continue;
      } else if (pc == '_') {
        si = min(n, si + cp_bytes(s[si]));
        pi++;
        matched = true;
      } else if (s[si] == pc) {
        si++;
        pi++;
        matched = true;
      }
    }
    if (matched) continue;
    if (starP < 0) return false;
    pi = starP + 1;
    starS = min(n, starS + cp_bytes(s[starS]));
    si = starS;
  }
  while (pi < m && p[pi] == '%') pi++;
  return pi == m;
}

// Byte offsets [*start, *end) of characters [from, to) (1-based, from >= 1), clipped to the string.
__device__ void char_range(const unsigned char* s, int n, long long from, long long to, int* start, int* end) {
  long long pos = 1;
  int i = 0;
  while (i < n && pos < from) { i = min(n, i + cp_bytes(s[i])); pos++; }
  *start = i;
  while (i < n && pos < to) { i = min(n, i + cp_bytes(s[i])); pos++; }
  *end = i;
}

// 1-based character position of needle in hay, 0 if absent.
__device__ long long position(const unsigned char* needle, int m, const unsigned char* hay, int n) {
  long long chars = 0;
  for (int i = 0; i + m <= n;) {
    if (cmp_s(needle, m, hay + i, m) == 0) return chars + 1;
    i += cp_bytes(hay[i]);
    chars++;
  }
  return 0;
}

__device__ __forceinline__ bool test(int cmp, int c) {
  switch (cmp) {
    case C_EQ: return c == 0;
    case C_NE: return c != 0;
    case C_LT: return c < 0;
    case C_LE: return c <= 0;
    case C_GT: return c > 0;
    default: return c >= 0;
  }
}
}  // namespace gpudf_expr

// columns: for slot s, columns[3s] = data address, columns[3s+1] = validity address (0: none),
// columns[3s+2] = string offsets address (0 unless STRING). pool: the string constants.
//
// Each thread runs the program over K rows at once (rows base + lane + 32k): an instruction is
// decoded and dispatched once for the K of them, and its K evaluations are independent, so the
// loads of a LOAD_COL are in flight together. Register x of row k is val[x * K + k]: the register
// file is indexed by the program, so it lives in local memory, sized R * K to stay in L1.
namespace gpudf_expr {
#define V(x) val[(x) * K + k]
#define L(x) len[(x) * K + k]
#define E(x) err[(x) * K + k]

// One instruction, opcode OP, for row k (row number `row`) of the thread's K rows.
template <int OP, int R, int K>
__device__ __forceinline__ void step(int k, long long row, int d, int a, int b, int c, long long* val, int* len,
                                     unsigned char* err, unsigned int& nul, unsigned int& errs,
                                     const long long* __restrict__ consts, const unsigned char* __restrict__ pool,
                                     const long long* __restrict__ columns) {
  constexpr int op = OP;
  // operands a and b are registers for the ops that read these flags; masked so the other ops
  // (slots, constants) never index past the register file
  bool na = (nul >> (a & (R - 1))) & 1u, nb = (nul >> (b & (R - 1))) & 1u;
  // errors are rare: the codes are read only when a bit says there is one
  unsigned char ea = ((errs >> (a & (R - 1))) & 1u) ? E(a & (R - 1)) : 0;
  unsigned char eb = ((errs >> (b & (R - 1))) & 1u) ? E(b & (R - 1)) : 0;
  long long r = 0;
  int rl = 0;
  bool rn = false;
  unsigned char re = 0;
    switch (op) {
      case LOAD_STR_COL: {
        const int* offs = (const int*)columns[3 * a + 2];
        rn = !gpudf::is_valid((const uint32_t*)columns[3 * a + 1], row);
        int start = offs[row];
        r = columns[3 * a] + start;
        rl = offs[row + 1] - start;
        break;
      }
      case LOAD_STR_CONST: r = (long long)(pool + a); rl = b; break;
      case CMP_S: case LIKE: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        const unsigned char* x = (const unsigned char*)V(a);
        const unsigned char* y = (const unsigned char*)V(b);
        r = op == CMP_S ? (test(c, cmp_s(x, L(a), y, L(b))) ? 1 : 0) : (like(x, L(a), y, L(b), c) ? 1 : 0);
        break;
      }
      case SUBSTRING: {
        bool hasLength = c >= 0;
        unsigned char ec = hasLength && ((errs >> (c & (R - 1))) & 1u) ? E(c & (R - 1)) : 0;
        if (ea || eb || ec) { re = ea ? ea : (eb ? eb : ec); break; }
        if (na || nb || (hasLength && ((nul >> (c & (R - 1))) & 1u))) { rn = true; break; }
        if (hasLength && V(c & (R - 1)) < 0) { re = kErrNegativeLength; break; }
        long long from = V(b) > 1 ? V(b) : 1;
        long long to = hasLength ? (V(b) + V(c & (R - 1)) > from ? V(b) + V(c & (R - 1)) : from) : LLONG_MAX;
        int start, end;
        char_range((const unsigned char*)V(a), L(a), from, to, &start, &end);
        r = V(a) + start;
        rl = end - start;
        break;
      }
      case TRIM: {
        re = ea;
        rn = na;
        const unsigned char* x = (const unsigned char*)V(a & (R - 1));
        int lo = 0, hi = L(a & (R - 1));
        while (c != 2 && lo < hi && x[lo] == ' ') lo++;
        while (c != 1 && hi > lo && x[hi - 1] == ' ') hi--;
        r = V(a & (R - 1)) + lo;
        rl = hi - lo;
        break;
      }
      case POSITION: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        r = position((const unsigned char*)V(a), L(a), (const unsigned char*)V(b), L(b));
        break;
      }
      case CHAR_LENGTH: {
        re = ea;
        rn = na;
        const unsigned char* x = (const unsigned char*)V(a);
        int count = 0;
        for (int i = 0; i < L(a); i++) count += (x[i] & 0xC0) != 0x80;
        r = count;
        break;
      }
      case LOAD_COL: {
        const void* data = (const void*)columns[3 * a];
        const uint32_t* valid = (const uint32_t*)columns[3 * a + 1];
        rn = !gpudf::is_valid(valid, row);
        switch (c) {
          case K_I8: r = ((const int8_t*)data)[row]; break;
          case K_I16: r = ((const int16_t*)data)[row]; break;
          case K_I32: r = ((const int32_t*)data)[row]; break;
          case K_I64: r = ((const long long*)data)[row]; break;
          case K_F32: r = __double_as_longlong((double)((const float*)data)[row]); break;
          case K_F64: r = ((const long long*)data)[row]; break;
          case K_I128: {
            r = ((const long long*)data)[2 * row];
            if (!rn && ((const long long*)data)[2 * row + 1] != (r >> 63)) re = kErrWide;
            break;
          }
          default: r = (((const uint32_t*)data)[row >> 5] >> (row & 31)) & 1u; break;
        }
        break;
      }
      case LOAD_CONST: r = consts[a]; rn = b != 0; break;
      case I_ADD: case I_SUB: case I_MUL: case I_DIV: case I_MOD:
      case F_ADD: case F_SUB: case F_MUL: case F_DIV: case F_MOD:
      case CMP_I: case CMP_F: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        long long x = V(a), y = V(b);
        switch (op) {
          case I_ADD: r = (long long)((unsigned long long)x + (unsigned long long)y);
            if (((x ^ r) & (y ^ r)) < 0 || !fits(r, c)) re = overflow_code(c); break;
          case I_SUB: r = (long long)((unsigned long long)x - (unsigned long long)y);
            if (((x ^ y) & (x ^ r)) < 0 || !fits(r, c)) re = overflow_code(c); break;
          case I_MUL: {
            r = (long long)((unsigned long long)x * (unsigned long long)y);
            long long hi = __mul64hi(x, y);
            if (hi != (r >> 63) || !fits(r, c)) re = overflow_code(c);
            break;
          }
          case I_DIV:
            if (y == 0) { re = kErrDivZero; break; }
            if (x == LLONG_MIN && y == -1) { re = kErrOverflow; break; }
            r = x / y;
            if (!fits(r, c)) re = kErrOverflow;
            break;
          case I_MOD:
            if (y == 0) { re = kErrDivZero; break; }
            r = y == -1 ? 0 : x % y;
            break;
          case CMP_I: r = test(c, x < y ? -1 : (x > y ? 1 : 0)) ? 1 : 0; break;
          default: {
            double fx = __longlong_as_double(x), fy = __longlong_as_double(y), f = 0;
            if (op == CMP_F) { r = test(c, cmp_f(fx, fy)) ? 1 : 0; break; }
            if ((op == F_DIV || op == F_MOD) && fy == 0.0) { re = kErrDivZero; break; }
            switch (op) {
              case F_ADD: f = fx + fy; break;
              case F_SUB: f = fx - fy; break;
              case F_MUL: f = fx * fy; break;
              case F_DIV: f = fx / fy; break;
              default: f = fmod(fx, fy); break;
            }
            if (c == 1) f = (double)(float)f;
            r = __double_as_longlong(f);
          }
        }
        break;
      }
      case I_NEG:
        if (ea) { re = ea; break; }
        if (na) { rn = true; break; }
        if (V(a) == LLONG_MIN || !fits(-V(a), c)) { re = overflow_code(c); break; }
        r = -V(a);
        break;
      case F_NEG: re = ea; rn = na; r = __double_as_longlong(-__longlong_as_double(V(a))); break;
      case I2F: re = ea; rn = na; r = __double_as_longlong((double)V(a)); break;
      case SCALE_UP: {
        if (ea) { re = ea; break; }
        if (na) { rn = true; break; }
        long long x = V(a), y = consts[b];
        r = (long long)((unsigned long long)x * (unsigned long long)y);
        if (__mul64hi(x, y) != (r >> 63)) re = overflow_code(c);
        break;
      }
      case D2F: re = ea; rn = na; r = __double_as_longlong((double)V(a) / __longlong_as_double(consts[b])); break;
      case AND: case OR: {
        long long decisive = op == AND ? 0 : 1;
        bool aDecides = !ea && !na && V(a) == decisive;
        bool bDecides = !eb && !nb && V(b) == decisive;
        if (aDecides || bDecides) { r = decisive; break; }
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        r = 1 - decisive;
        break;
      }
      case NOT: re = ea; rn = na; r = 1 - V(a); break;
      case IS_NULL: re = ea; r = na ? 1 : 0; break;
      case IS_NOT_NULL: re = ea; r = na ? 0 : 1; break;
      case FLOOR_DIV: re = ea; rn = na; r = floor_div(V(a), consts[b]); break;
      case RANGE_CHECK: case PRECISION_CHECK: case SCALE_DOWN: case I_ABS: {
        if (ea) { re = ea; break; }
        if (na) { rn = true; break; }
        long long x = V(a);
        if (op == RANGE_CHECK) { r = x; if (!fits(x, c)) re = kErrOverflow; }
        else if (op == PRECISION_CHECK) { r = x; if (x == LLONG_MIN || (x < 0 ? -x : x) >= consts[b]) re = kErrOverflow; }
        else if (op == SCALE_DOWN) { r = divide_rounding_away(x, consts[b]); }
        else { r = x == LLONG_MIN ? 0 : (x < 0 ? -x : x); if (x == LLONG_MIN || !fits(r, c)) re = overflow_code(c); }
        break;
      }
      case F2I: case F2DEC: {
        if (ea) { re = ea; break; }
        if (na) { rn = true; break; }
        double x = __longlong_as_double(V(a));
        double rounded = op == F2I ? rint(x) : round(x * __longlong_as_double(consts[b]));
        if (isnan(rounded) || rounded < -9223372036854775808.0 || rounded >= 9223372036854775808.0) {
          // a finite value for a DECIMAL of more than 18 digits may fit 128 bits
          re = isfinite(rounded) ? overflow_code(c) : kErrOverflow;
        } else {
          r = (long long)rounded;
        }
        break;
      }
      case DEC_DIV: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        long long y = V(b);
        if (y == 0) { re = kErrDivZero; break; }
        __int128 num = (__int128)V(a);
        for (int t = 0; t < c; t++) num *= 10;
        __int128 q = num / y, rem = num % y;
        __int128 ar = rem < 0 ? -rem : rem, ay = y < 0 ? -(__int128)y : (__int128)y;
        if (ar * 2 >= ay) q += ((num < 0) != (y < 0)) ? -1 : 1;
        if (q > (__int128)LLONG_MAX || q < (__int128)LLONG_MIN) { re = kErrWide; break; }
        r = (long long)q;
        break;
      }
      case TO_F32: re = ea; rn = na; r = __double_as_longlong((double)(float)__longlong_as_double(V(a))); break;
      case F_MATH: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        double x = __longlong_as_double(V(a)), y = __longlong_as_double(V(b)), f = 0;
        if ((c == M_SQRT && x < 0) || (c == M_LN && x <= 0)) { re = kErrDomain; break; }
        switch (c) {
          case M_SQRT: f = sqrt(x); break;
          case M_LN: f = log(x); break;
          case M_EXP: f = exp(x); break;
          case M_POWER: f = pow(x, y); break;
          case M_FLOOR: f = floor(x); break;
          case M_CEIL: f = ceil(x); break;
          case M_ROUND: f = round_away(x, y); break;
          default: f = fabs(x); break;
        }
        r = __double_as_longlong(f);
        break;
      }
      case CIVIL: re = ea; rn = na; r = civil(V(a), c); break;
      case PARSE: {
        if (ea) { re = ea; break; }
        if (na) { rn = true; break; }
        long long scale = c == P_DECIMAL64 ? consts[b] : 0, bound = c == P_DECIMAL64 ? consts[b + 1] : 0;
        re = parse_value((const unsigned char*)V(a), L(a), c, scale, bound, &r);
        break;
      }
      case ADD_MONTHS: {
        if (ea || eb) { re = ea ? ea : eb; break; }
        if (na || nb) { rn = true; break; }
        long long months = V(b);
        // beyond a million years either way no 32-bit day number is reachable
        if (months > 12000000LL || months < -12000000LL) { re = kErrOverflow; break; }
        r = add_months(V(a), months);
        if (!fits(r, 32)) re = kErrOverflow;
        break;
      }
      default: {  // SELECT
        if (ea) { re = ea; break; }
        int src = (!na && V(a) == 1) ? b : (c & (R - 1));
        r = V(src);
        rl = L(src);
        rn = (nul >> src) & 1u;
        re = ((errs >> src) & 1u) ? E(src) : 0;
        break;
      }
    }
  V(d) = r;
  // a string length matters only in a register that may hold a string (LOAD_CONST: a typed NULL
  // string, whose length CHAR_LENGTH and TRIM read)
  if (op == LOAD_STR_COL || op == LOAD_STR_CONST || op == LOAD_CONST || op == SUBSTRING || op == TRIM || op == SELECT) {
    L(d) = rl;
  }
  if (re != 0) {
    E(d) = re;
    errs |= 1u << d;
  } else {
    errs &= ~(1u << d);
  }
  nul = rn ? (nul | (1u << d)) : (nul & ~(1u << d));
}

// The whole program over the thread's K rows; FULL: all K rows exist (no bounds checks, so the
// compiler may issue their loads together). ARITH: the program uses only the arithmetic, logic
// and comparison opcodes of the first switch (Program.ARITHMETIC in Java), and the kernel leaves the
// others out: without string scans, 128-bit division and math functions it needs fewer
// registers (more warps per SM) and its dispatch and code stay small.
template <int R, int K, bool FULL, bool ARITH>
__device__ __forceinline__ void run(const int* __restrict__ code, int instructions, const long long* __restrict__ consts,
                                    const unsigned char* __restrict__ pool, const long long* __restrict__ columns,
                                    long long first, long long n, long long* val, int* len, unsigned char* err,
                                    unsigned int* nul, unsigned int* errs) {
  for (int pc = 0; pc < instructions; pc++) {
    const int* ins = code + pc * kWidth;
    int op = ins[0], d = ins[1] & (R - 1), a = ins[2], b = ins[3], c = ins[4];
#define GPUDF_STEP(OPC)                                                                                   \
  case OPC:                                                                                               \
    _Pragma("unroll") for (int k = 0; k < K; k++) {                                                       \
      long long row = first + 32 * k;                                                                     \
      if (FULL || row < n)                                                                                \
        step<OPC, R, K>(k, row, d, a, b, c, val, len, err, nul[k], errs[k], consts, pool, columns);        \
    }                                                                                                     \
    break;
    switch (op) {
      // arithmetic opcodes (OpcodeTest checks these against Program.ARITHMETIC)
      GPUDF_STEP(LOAD_COL)
      GPUDF_STEP(LOAD_CONST)
      GPUDF_STEP(I_ADD)
      GPUDF_STEP(I_SUB)
      GPUDF_STEP(I_MUL)
      GPUDF_STEP(I_NEG)
      GPUDF_STEP(F_ADD)
      GPUDF_STEP(F_SUB)
      GPUDF_STEP(F_MUL)
      GPUDF_STEP(F_DIV)
      GPUDF_STEP(F_NEG)
      GPUDF_STEP(I2F)
      GPUDF_STEP(SCALE_UP)
      GPUDF_STEP(D2F)
      GPUDF_STEP(CMP_I)
      GPUDF_STEP(CMP_F)
      GPUDF_STEP(AND)
      GPUDF_STEP(OR)
      GPUDF_STEP(NOT)
      GPUDF_STEP(IS_NULL)
      GPUDF_STEP(IS_NOT_NULL)
      GPUDF_STEP(SELECT)
      GPUDF_STEP(FLOOR_DIV)
      GPUDF_STEP(CIVIL)
      GPUDF_STEP(RANGE_CHECK)
      GPUDF_STEP(PRECISION_CHECK)
      GPUDF_STEP(SCALE_DOWN)
      GPUDF_STEP(I_ABS)
      GPUDF_STEP(TO_F32)
      // end of the arithmetic opcodes
      default:
        if constexpr (!ARITH) {
          switch (op) {
            GPUDF_STEP(I_DIV)
            GPUDF_STEP(I_MOD)
            GPUDF_STEP(F_MOD)
            GPUDF_STEP(F2I)
            GPUDF_STEP(F2DEC)
            GPUDF_STEP(F_MATH)
            GPUDF_STEP(LOAD_STR_COL)
            GPUDF_STEP(LOAD_STR_CONST)
            GPUDF_STEP(CMP_S)
            GPUDF_STEP(LIKE)
            GPUDF_STEP(CHAR_LENGTH)
            GPUDF_STEP(SUBSTRING)
            GPUDF_STEP(TRIM)
            GPUDF_STEP(POSITION)
            GPUDF_STEP(DEC_DIV)
            GPUDF_STEP(ADD_MONTHS)
            GPUDF_STEP(PARSE)
            default: break;
          }
        }
        break;
    }
#undef GPUDF_STEP
  }
}
}  // namespace gpudf_expr

// The interpreter for programs of at most R registers (a power of two up to 32), K rows a thread.
template <int R, int K, bool ARITH>
__device__ __forceinline__ void eval_rows(const int* __restrict__ code, int instructions,
                                          const long long* __restrict__ consts, const unsigned char* __restrict__ pool,
                                          const long long* __restrict__ columns,
                                          long long n, int result_reg, int store, void* out,
                                          uint32_t* out_validity, unsigned long long* error,
                                          const int* __restrict__ str_offsets, unsigned char* __restrict__ str_chars) {
  using namespace gpudf_expr;
  long long val[R * K];
  int len[R * K];  // byte length of a string register
  unsigned char err[R * K];
  unsigned int nul[K];   // bit r: register r of row k is NULL
  unsigned int errs[K];  // bit r: register r of row k carries an error, its code in err
  const int lane = threadIdx.x & 31;
  const long long warps = gpudf::grid_threads() / 32;
  for (long long base = (gpudf::global_thread() / 32) * (32 * K); base < n; base += warps * 32 * K) {
#pragma unroll
    for (int k = 0; k < K; k++) {
      nul[k] = 0;
      errs[k] = 0;
    }
    if (base + 32 * K <= n) {
      run<R, K, true, ARITH>(code, instructions, consts, pool, columns, base + lane, n, val, len, err, nul, errs);
    } else {
      run<R, K, false, ARITH>(code, instructions, consts, pool, columns, base + lane, n, val, len, err, nul, errs);
    }
#pragma unroll
    for (int k = 0; k < K; k++) {
      long long row = base + lane + 32 * k;
      bool active = row < n;
      bool isNull = true;
      if (active) {
        isNull = (nul[k] >> result_reg) & 1u;
        if ((errs[k] >> result_reg) & 1u) {
          atomicMin(error, ((unsigned long long)row << 8) | E(result_reg));
          isNull = true;
        }
        if (isNull && store == S_STRLEN) ((long long*)out)[row] = 0;
        if (!isNull) {
          long long v = V(result_reg);
          switch (store) {
            case S_I8: ((int8_t*)out)[row] = (int8_t)v; break;
            case S_I16: ((int16_t*)out)[row] = (int16_t)v; break;
            case S_I32: ((int32_t*)out)[row] = (int32_t)v; break;
            case S_I64: case S_F64: ((long long*)out)[row] = v; break;
            case S_F32: ((float*)out)[row] = (float)__longlong_as_double(v); break;
            case S_D128: ((long long*)out)[2 * row] = v; ((long long*)out)[2 * row + 1] = v < 0 ? -1 : 0; break;
            case S_STRLEN: ((long long*)out)[row] = L(result_reg); break;
            case S_STRCOPY: {
              const unsigned char* src = (const unsigned char*)v;
              unsigned char* dst = str_chars + str_offsets[row];
              for (int i = 0; i < L(result_reg); i++) dst[i] = src[i];
              break;
            }
            default: break;
          }
        }
      }
      // words past the last row are not written: the validity buffer holds ceil(n / 32) words
      long long word = (base >> 5) + k;
      unsigned int validWord = __ballot_sync(0xffffffffu, active && !isNull);
      if (store == S_BITS) {
        unsigned int bitWord = __ballot_sync(0xffffffffu, active && !isNull && V(result_reg) == 1);
        if (lane == 0 && 32 * word < n) ((uint32_t*)out)[word] = bitWord;
      }
      if (lane == 0 && 32 * word < n) out_validity[word] = validWord;
    }
  }
}
#undef V
#undef L
#undef E

// K rows a thread: 4 for small register files and arithmetic; 1 for programs that scan strings
// (a thread walking four strings one after another leaves the SM short of parallel work) and for
// the largest register files (local memory grows as R * K). expr_arith_*: arithmetic only.
#define GPUDF_EXPR_EVAL(NAME, R, K, ARITH, MIN_BLOCKS)                                                      \
  extern "C" __global__ void __launch_bounds__(gpudf::kBlock, MIN_BLOCKS) NAME(                             \
      const int* __restrict__ code, int instructions, const long long* __restrict__ consts,                 \
      const unsigned char* __restrict__ pool, const long long* __restrict__ columns, long long n,           \
      int result_reg, int store, void* out, uint32_t* out_validity, unsigned long long* error,              \
      const int* __restrict__ str_offsets, unsigned char* __restrict__ str_chars) {                         \
    eval_rows<R, K, ARITH>(code, instructions, consts, pool, columns, n, result_reg, store, out,            \
                           out_validity, error, str_offsets, str_chars);                                    \
  }

// MIN_BLOCKS 5 caps the arithmetic builds at 48 registers (40 warps per SM instead of 32): a few
// spills to L1, and charge_decimal ran 2.46 ms against 2.60 ms without the cap (H200, session 5)
GPUDF_EXPR_EVAL(expr_arith_r4_k4_kernel, 4, 4, true, 5)
GPUDF_EXPR_EVAL(expr_arith_r8_k4_kernel, 8, 4, true, 5)
GPUDF_EXPR_EVAL(expr_eval_r4_k4_kernel, 4, 4, false, 1)
GPUDF_EXPR_EVAL(expr_eval_r8_k4_kernel, 8, 4, false, 1)
GPUDF_EXPR_EVAL(expr_eval_r4_k1_kernel, 4, 1, false, 1)
GPUDF_EXPR_EVAL(expr_eval_r8_k1_kernel, 8, 1, false, 1)
GPUDF_EXPR_EVAL(expr_eval_r16_k1_kernel, 16, 1, false, 1)
GPUDF_EXPR_EVAL(expr_eval_r32_k1_kernel, 32, 1, false, 1)
