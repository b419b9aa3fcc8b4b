// Expressions that build new strings (||, UPPER, LOWER, CAST to VARCHAR): each is two launches,
// a "lengths" kernel (each row's byte length, 0 for a null row, and the validity a word at a time)
// and, after the lengths are scanned into offsets, a "copy" kernel that writes each row's bytes.
// Warps cover 32 consecutive rows so validity words are written whole with __ballot_sync.
#include <cstdint>
#include "common.cuh"

namespace gpudf_strings {
// Decodes the code point at s[i] (of n bytes) into cp and returns its byte length. A byte that
// starts no well-formed sequence stands for itself (cp = the byte, length 1): the CPU twin does
// the same, and nothing is lost.
__device__ __forceinline__ int decode(const uint8_t* s, int i, int n, unsigned int* cp) {
  unsigned int b = s[i];
  int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > n) {
    *cp = b;
    return -1;
  }
  unsigned int c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < len; k++) {
    unsigned int x = s[i + k];
    if ((x & 0xC0) != 0x80) {
      *cp = b;
      return -1;
    }
    c = (c << 6) | (x & 0x3F);
  }
  *cp = c;
  return len;
}

__device__ __forceinline__ int encoded_length(unsigned int cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

__device__ __forceinline__ int encode(unsigned int cp, uint8_t* out) {
  if (cp < 0x80) {
    out[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (uint8_t)(0xC0 | (cp >> 6));
    out[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (cp >> 12));
    out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (cp >> 18));
  out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

// A code point of the Basic Multilingual Plane through the case table; others unchanged.
__device__ __forceinline__ unsigned int map_case(const int* table, unsigned int cp) {
  return cp < 0x10000 ? (unsigned int)table[cp] : cp;
}

// Writes row i's length and the validity word of its warp's 32 rows (all lanes take part; lane 0
// holds the warp's first row, which is below n whenever any lane's is).
__device__ __forceinline__ void put_length(long long i, long long n, bool valid, long long length, long long* lengths,
                                           uint32_t* validity) {
  bool active = i < n;
  unsigned int word = __ballot_sync(0xffffffffu, active && valid);
  if (active) lengths[i] = valid ? length : 0;
  if ((threadIdx.x & 31) == 0 && active) validity[i >> 5] = word;
}

__device__ __forceinline__ long long warp_rows_end(long long n) {
  return (n + 31) / 32 * 32;
}

// Digits of a non-negative 128-bit value, and the value's text: optional '-', the integer part,
// then '.' and exactly `scale` fraction digits when scale > 0 (BigDecimal.toPlainString's form).
__device__ __forceinline__ int decimal_length(__int128 v, int scale) {
  unsigned __int128 m = v < 0 ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  int digits = 0;
  do {
    digits++;
    m /= 10;
  } while (m != 0);
  if (digits <= scale) digits = scale + 1;
  return (v < 0 ? 1 : 0) + digits + (scale > 0 ? 1 : 0);
}

__device__ __forceinline__ void decimal_text(__int128 v, int scale, int length, uint8_t* out) {
  unsigned __int128 m = v < 0 ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  int at = length - 1;
  int written = 0;
  while (at >= (v < 0 ? 1 : 0)) {
    if (scale > 0 && written == scale) {
      out[at--] = '.';
      written++;
      continue;
    }
    out[at--] = (uint8_t)('0' + (int)(m % 10));
    m /= 10;
    written++;
  }
  if (v < 0) out[0] = '-';
}

// Days since 1970-01-01 to the proleptic Gregorian civil date.
__device__ __forceinline__ void civil(long long z, long long* y, int* m, int* d) {
  z += 719468;
  long long era = (z >= 0 ? z : z - 146096) / 146097;
  long long doe = z - era * 146097;
  long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long long mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

// Value kinds that CAST(... AS VARCHAR) formats (FormatKind in StringBuild.java).
enum Kind { I8 = 0, I16, I32, I64, DEC64, DEC128, DATE, BOOL };

__device__ __forceinline__ __int128 load_number(const void* data, int kind, long long i) {
  switch (kind) {
    case I8: return ((const int8_t*)data)[i];
    case I16: return ((const int16_t*)data)[i];
    case I32: return ((const int32_t*)data)[i];
    case DEC128: {
      const unsigned long long* w = (const unsigned long long*)data + 2 * i;
      return (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
    }
    default: return ((const long long*)data)[i];
  }
}

__device__ __forceinline__ int format_length(const void* data, int kind, int scale, long long i) {
  if (kind == BOOL) return ((((const uint32_t*)data)[i >> 5] >> (i & 31)) & 1u) ? 4 : 5;
  if (kind == DATE) {
    long long y;
    int m, d;
    civil(((const int32_t*)data)[i], &y, &m, &d);
    int digits = decimal_length(y < 0 ? -y : y, 0);
    return (digits < 4 ? 4 : digits) + (y < 0 ? 1 : 0) + 6;
  }
  return decimal_length(load_number(data, kind, i), kind == DEC64 || kind == DEC128 ? scale : 0);
}

__device__ __forceinline__ void format_text(const void* data, int kind, int scale, long long i, int length, uint8_t* out) {
  if (kind == BOOL) {
    const char* t = ((((const uint32_t*)data)[i >> 5] >> (i & 31)) & 1u) ? "TRUE" : "FALSE";
    for (int k = 0; k < length; k++) out[k] = (uint8_t)t[k];
    return;
  }
  if (kind == DATE) {
    long long y;
    int m, d;
    civil(((const int32_t*)data)[i], &y, &m, &d);
    // the year has at least four digits (zero-padded) and a '-' when negative
    int ylen = length - 6;
    long long a = y < 0 ? -y : y;
    for (int k = ylen - 1; k >= (y < 0 ? 1 : 0); k--) {
      out[k] = (uint8_t)('0' + (int)(a % 10));
      a /= 10;
    }
    if (y < 0) out[0] = '-';
    out[ylen] = '-';
    out[ylen + 1] = (uint8_t)('0' + m / 10);
    out[ylen + 2] = (uint8_t)('0' + m % 10);
    out[ylen + 3] = '-';
    out[ylen + 4] = (uint8_t)('0' + d / 10);
    out[ylen + 5] = (uint8_t)('0' + d % 10);
    return;
  }
  decimal_text(load_number(data, kind, i), kind == DEC64 || kind == DEC128 ? scale : 0, length, out);
}
}  // namespace gpudf_strings

using namespace gpudf_strings;

extern "C" __global__ void concat_lengths_kernel(const int* off_a, const uint32_t* val_a, const int* off_b,
                                                 const uint32_t* val_b, long long n, long long* lengths,
                                                 uint32_t* validity) {
  for (long long i = gpudf::global_thread(); i < warp_rows_end(n); i += gpudf::grid_threads()) {
    bool valid = i < n && gpudf::is_valid(val_a, i) && gpudf::is_valid(val_b, i);
    long long len = valid ? (long long)(off_a[i + 1] - off_a[i]) + (off_b[i + 1] - off_b[i]) : 0;
    put_length(i, n, valid, len, lengths, validity);
  }
}

extern "C" __global__ void concat_copy_kernel(const int* off_a, const uint8_t* chars_a, const int* off_b,
                                              const uint8_t* chars_b, long long n, const int* out_offsets,
                                              uint8_t* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int at = out_offsets[i];
    if (out_offsets[i + 1] == at) continue;
    for (int k = off_a[i]; k < off_a[i + 1]; k++) out[at++] = chars_a[k];
    for (int k = off_b[i]; k < off_b[i + 1]; k++) out[at++] = chars_b[k];
  }
}

extern "C" __global__ void case_lengths_kernel(const int* offsets, const uint8_t* chars, const uint32_t* val,
                                               const int* table, long long n, long long* lengths,
                                               uint32_t* validity) {
  for (long long i = gpudf::global_thread(); i < warp_rows_end(n); i += gpudf::grid_threads()) {
    bool valid = i < n && gpudf::is_valid(val, i);
    long long len = 0;
    if (valid) {
      const uint8_t* s = chars + offsets[i];
      int bytes = offsets[i + 1] - offsets[i];
      for (int k = 0; k < bytes;) {
        unsigned int cp;
        int step = decode(s, k, bytes, &cp);
        len += step < 0 ? 1 : encoded_length(map_case(table, cp));
        k += step < 0 ? 1 : step;
      }
    }
    put_length(i, n, valid, len, lengths, validity);
  }
}

extern "C" __global__ void case_copy_kernel(const int* offsets, const uint8_t* chars, const int* table, long long n,
                                            const int* out_offsets, uint8_t* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    const uint8_t* s = chars + offsets[i];
    int bytes = offsets[i + 1] - offsets[i];
    uint8_t* o = out + out_offsets[i];
    if (out_offsets[i + 1] == out_offsets[i]) continue;
    for (int k = 0; k < bytes;) {
      unsigned int cp;
      int step = decode(s, k, bytes, &cp);
      if (step < 0) {
        *o++ = s[k++];
      } else {
        o += encode(map_case(table, cp), o);
        k += step;
      }
    }
  }
}

extern "C" __global__ void format_lengths_kernel(const void* data, const uint32_t* val, int kind, int scale,
                                                 long long n, long long* lengths, uint32_t* validity) {
  for (long long i = gpudf::global_thread(); i < warp_rows_end(n); i += gpudf::grid_threads()) {
    bool valid = i < n && gpudf::is_valid(val, i);
    put_length(i, n, valid, valid ? format_length(data, kind, scale, i) : 0, lengths, validity);
  }
}

extern "C" __global__ void format_copy_kernel(const void* data, int kind, int scale, long long n,
                                              const int* out_offsets, uint8_t* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int len = out_offsets[i + 1] - out_offsets[i];
    if (len > 0) format_text(data, kind, scale, i, len, out + out_offsets[i]);
  }
}

namespace gpudf_strings {
// Non-overlapping matches of f (fn > 0 bytes) in s (n bytes), left to right.
__device__ __forceinline__ int count_matches(const uint8_t* s, int n, const uint8_t* f, int fn) {
  int count = 0;
  for (int k = 0; k + fn <= n;) {
    int j = 0;
    while (j < fn && s[k + j] == f[j]) j++;
    if (j == fn) {
      count++;
      k += fn;
    } else {
      k++;
    }
  }
  return count;
}

// The byte offset in s (n bytes) after its first `chars` characters (all of s if it has fewer),
// characters as decode() reads them.
__device__ __forceinline__ int char_prefix(const uint8_t* s, int n, long long chars, long long* counted) {
  int k = 0;
  long long c = 0;
  while (k < n && c < chars) {
    unsigned int cp;
    int step = decode(s, k, n, &cp);
    k += step < 0 ? 1 : step;
    c++;
  }
  *counted = c;
  return k;
}

__device__ __forceinline__ long long char_count(const uint8_t* s, int n) {
  long long c;
  char_prefix(s, n, 0x7fffffffffffffffLL, &c);
  return c;
}

// The bytes LPAD/RPAD(s, target, fill) adds or keeps: keep = the bytes of s kept (its first
// `target` characters), pad = the pad's bytes (whole copies of fill, then a prefix of `rest` bytes).
struct Pad {
  int keep;
  long long copies;
  int rest;
};

__device__ __forceinline__ Pad pad_of(const uint8_t* s, int sn, long long target, const uint8_t* f, int fn) {
  Pad p;
  long long have;
  if (target < 0) target = 0;
  p.keep = char_prefix(s, sn, target, &have);
  p.copies = 0;
  p.rest = 0;
  if (have < target && fn > 0) {
    long long fc = char_count(f, fn);
    long long missing = target - have;
    p.copies = missing / fc;
    long long counted;
    p.rest = char_prefix(f, fn, missing % fc, &counted);
  }
  return p;
}
}  // namespace gpudf_strings

// REPLACE(s, from, to): each non-overlapping occurrence of `from`, left to right, replaced by `to`;
// an empty `from` leaves s as it is (PostgreSQL and DuckDB). NULL in any argument gives NULL.
extern "C" __global__ void replace_lengths_kernel(const int* off_s, const uint8_t* chars_s, const uint32_t* val_s,
                                                  const int* off_f, const uint8_t* chars_f, const uint32_t* val_f,
                                                  const int* off_t, const uint32_t* val_t, long long n,
                                                  long long* lengths, uint32_t* validity) {
  for (long long i = gpudf::global_thread(); i < warp_rows_end(n); i += gpudf::grid_threads()) {
    bool valid = i < n && gpudf::is_valid(val_s, i) && gpudf::is_valid(val_f, i) && gpudf::is_valid(val_t, i);
    long long len = 0;
    if (valid) {
      int sn = off_s[i + 1] - off_s[i];
      int fn = off_f[i + 1] - off_f[i];
      int tn = off_t[i + 1] - off_t[i];
      long long matches = fn == 0 ? 0 : count_matches(chars_s + off_s[i], sn, chars_f + off_f[i], fn);
      len = sn + matches * (tn - fn);
    }
    put_length(i, n, valid, len, lengths, validity);
  }
}

extern "C" __global__ void replace_copy_kernel(const int* off_s, const uint8_t* chars_s, const int* off_f,
                                               const uint8_t* chars_f, const int* off_t, const uint8_t* chars_t,
                                               long long n, const int* out_offsets, uint8_t* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int at = out_offsets[i];
    if (out_offsets[i + 1] == at) continue;
    const uint8_t* s = chars_s + off_s[i];
    const uint8_t* f = chars_f + off_f[i];
    const uint8_t* t = chars_t + off_t[i];
    int sn = off_s[i + 1] - off_s[i];
    int fn = off_f[i + 1] - off_f[i];
    int tn = off_t[i + 1] - off_t[i];
    for (int k = 0; k < sn;) {
      int j = 0;
      while (fn > 0 && k + fn <= sn && j < fn && s[k + j] == f[j]) j++;
      if (fn > 0 && j == fn) {
        for (int m = 0; m < tn; m++) out[at++] = t[m];
        k += fn;
      } else {
        out[at++] = s[k++];
      }
    }
  }
}

// LPAD/RPAD(s, target, fill): s cut to its first `target` characters, or filled to `target`
// characters with copies of fill (the last one cut) on the left (left != 0) or the right; an empty
// fill leaves s short. NULL in any argument gives NULL.
extern "C" __global__ void pad_lengths_kernel(const int* off_s, const uint8_t* chars_s, const uint32_t* val_s,
                                              const long long* target, const uint32_t* val_target, const int* off_f,
                                              const uint8_t* chars_f, const uint32_t* val_f, long long n,
                                              long long* lengths, uint32_t* validity) {
  for (long long i = gpudf::global_thread(); i < warp_rows_end(n); i += gpudf::grid_threads()) {
    bool valid = i < n && gpudf::is_valid(val_s, i) && gpudf::is_valid(val_target, i) && gpudf::is_valid(val_f, i);
    long long len = 0;
    if (valid) {
      int fn = off_f[i + 1] - off_f[i];
      Pad p = pad_of(chars_s + off_s[i], off_s[i + 1] - off_s[i], target[i], chars_f + off_f[i], fn);
      len = p.keep + p.copies * fn + p.rest;
      // a row past 2 GiB fails the column anyway; capping it keeps the scan of many from overflowing
      if (p.copies > 0x7fffffffLL || len > 0x7fffffffLL) len = 0x80000000LL;
    }
    put_length(i, n, valid, len, lengths, validity);
  }
}

extern "C" __global__ void pad_copy_kernel(const int* off_s, const uint8_t* chars_s, const long long* target,
                                           const int* off_f, const uint8_t* chars_f, int left, long long n,
                                           const int* out_offsets, uint8_t* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int at = out_offsets[i];
    if (out_offsets[i + 1] == at) continue;
    const uint8_t* s = chars_s + off_s[i];
    const uint8_t* f = chars_f + off_f[i];
    int fn = off_f[i + 1] - off_f[i];
    Pad p = pad_of(s, off_s[i + 1] - off_s[i], target[i], f, fn);
    if (!left) {
      for (int k = 0; k < p.keep; k++) out[at++] = s[k];
    }
    for (long long c = 0; c < p.copies; c++) {
      for (int k = 0; k < fn; k++) out[at++] = f[k];
    }
    for (int k = 0; k < p.rest; k++) out[at++] = f[k];
    if (left) {
      for (int k = 0; k < p.keep; k++) out[at++] = s[k];
    }
  }
}
