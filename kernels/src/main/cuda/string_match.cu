// String columns matched against constants (StringMatch): equal to one of several constants, or
// LIKE a pattern of constant pieces and '%'s. A warp takes 32 rows and writes one word of result bits
// and one of validity (the input's) by ballot, so the BOOL column needs no second pass. Bytes are
// compared as bytes: a valid UTF-8 constant found in valid UTF-8 starts at a code point.
#include <cstdint>
#include "common.cuh"

namespace gpudf_match {
constexpr int kEquals = 0, kLike = 1;

__device__ __forceinline__ bool same(const unsigned char* a, const unsigned char* b, int len) {
  for (int k = 0; k < len; k++) {
    if (a[k] != b[k]) return false;
  }
  return true;
}

// Whether s (len bytes) equals one of the `count` constants.
__device__ __forceinline__ bool equals_any(const unsigned char* s, int len, const unsigned char* pool, const int* bounds,
                                           int count) {
  for (int k = 0; k < count; k++) {
    int m = bounds[k + 1] - bounds[k];
    if (len == m && same(s, pool + bounds[k], m)) return true;
  }
  return false;
}

// LIKE with '%' only: the pattern's pieces between its '%'s (count >= 2). The first piece must
// start s and the last end it; the others are found in order, each leftmost after the one before,
// which is a match whenever there is one.
__device__ __forceinline__ bool like(const unsigned char* s, int len, const unsigned char* pool, const int* bounds,
                                     int count) {
  int first = bounds[1] - bounds[0];
  int last = bounds[count] - bounds[count - 1];
  int end = len - last;
  if (end < first || !same(s, pool, first) || !same(s + end, pool + bounds[count - 1], last)) return false;
  int at = first;
  for (int k = 1; k < count - 1; k++) {
    const unsigned char* piece = pool + bounds[k];
    int m = bounds[k + 1] - bounds[k];
    while (at + m <= end && !same(s + at, piece, m)) at++;
    if (at + m > end) return false;
    at += m;
  }
  return true;
}

// like() with its search spread over the warp (all 32 lanes call it for one row): lane l tries a
// piece at position at + l, and the lowest lane that matches is the leftmost match. A thread that
// scanned its own long string (o_comment) byte by byte read a cache line per lane per step, which
// the L1 cache could not hold for a whole resident grid; this reads 32 neighbouring bytes a step.
__device__ __forceinline__ bool like_warp(const unsigned char* s, int len, const unsigned char* pool, const int* bounds,
                                          int count, int lane) {
  int first = bounds[1] - bounds[0];
  int last = bounds[count] - bounds[count - 1];
  int end = len - last;
  if (end < first) return false;
  bool bad = false;
  for (int k = lane; k < first; k += 32) bad |= s[k] != pool[k];
  for (int k = lane; k < last; k += 32) bad |= s[end + k] != pool[bounds[count - 1] + k];
  if (__any_sync(0xffffffffu, bad)) return false;
  int at = first;
  for (int k = 1; k < count - 1; k++) {
    const unsigned char* piece = pool + bounds[k];
    int m = bounds[k + 1] - bounds[k];
    int found = -1;
    for (int from = at; from + m <= end && found < 0; from += 32) {
      bool ok = from + lane + m <= end && same(s + from + lane, piece, m);
      unsigned hits = __ballot_sync(0xffffffffu, ok);
      if (hits != 0) found = from + __ffs(hits) - 1;
    }
    if (found < 0) return false;
    at = found + m;
  }
  return true;
}
}  // namespace gpudf_match

// Constant k is pool[bounds[k], bounds[k + 1]). kEquals: a row matches when it equals any of the
// `count`; kLike: they are the pieces of a LIKE pattern between its '%'s (with pieces between
// two '%'s, the whole warp searches each row in turn: like_warp). out_validity is null when
// `validity` is (no NULLs); bits past n come out zero.
extern "C" __global__ void string_match_kernel(const int* offsets, const unsigned char* chars, const uint32_t* validity,
                                              long long n, const unsigned char* pool, const int* bounds, int count,
                                              int mode, uint32_t* out, uint32_t* out_validity) {
  int lane = threadIdx.x & 31;
  long long warps = gpudf::grid_threads() / 32;
  bool searches = mode == gpudf_match::kLike && count > 2;
  for (long long base = gpudf::global_thread() / 32 * 32; base < n; base += warps * 32) {
    long long i = base + lane;
    bool valid = i < n && gpudf::is_valid(validity, i);
    bool hit = false;
    if (searches) {
      unsigned valids = __ballot_sync(0xffffffffu, valid);
      for (unsigned rest = valids; rest != 0; rest &= rest - 1) {
        long long row = base + __ffs(rest) - 1;
        int start = offsets[row];
        bool h = gpudf_match::like_warp(chars + start, offsets[row + 1] - start, pool, bounds, count, lane);
        if (row == i) hit = h;
      }
    } else if (valid) {
      int start = offsets[i];
      int len = offsets[i + 1] - start;
      hit = mode == gpudf_match::kEquals ? gpudf_match::equals_any(chars + start, len, pool, bounds, count)
                                         : gpudf_match::like(chars + start, len, pool, bounds, count);
    }
    unsigned bits = __ballot_sync(0xffffffffu, hit);
    unsigned valids = __ballot_sync(0xffffffffu, valid);
    if (lane == 0) {
      out[base >> 5] = bits;
      if (out_validity != nullptr) out_validity[base >> 5] = valids;
    }
  }
}
