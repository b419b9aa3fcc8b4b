// String columns matched against constants (StringMatch): equal to one of several constants,
// starts with, ends with, or contains one. A warp takes 32 rows and writes one word of result bits
// and one of validity (the input's) by ballot, so the BOOL column needs no second pass. Bytes are
// compared as bytes: a valid UTF-8 constant found in valid UTF-8 starts at a code point.
#include <cstdint>
#include "common.cuh"

namespace gpudf_match {
constexpr int kEquals = 0, kPrefix = 1, kSuffix = 2, kContains = 3;

__device__ __forceinline__ bool same(const unsigned char* a, const unsigned char* b, int len) {
  for (int k = 0; k < len; k++) {
    if (a[k] != b[k]) return false;
  }
  return true;
}

// Whether s (len bytes) matches constant c (m bytes) in `mode`.
__device__ __forceinline__ bool matches(int mode, const unsigned char* s, int len, const unsigned char* c, int m) {
  switch (mode) {
    case kEquals: return len == m && same(s, c, m);
    case kPrefix: return len >= m && same(s, c, m);
    case kSuffix: return len >= m && same(s + len - m, c, m);
    default:
      for (int at = 0; at + m <= len; at++) {
        if (same(s + at, c, m)) return true;
      }
      return false;
  }
}
}  // namespace gpudf_match

// Constant k is pool[bounds[k], bounds[k + 1]); a row matches when it matches any of the `count`.
// out_validity is null when `validity` is (no NULLs); bits past n come out zero.
extern "C" __global__ void string_match_kernel(const int* offsets, const unsigned char* chars, const uint32_t* validity,
                                              long long n, const unsigned char* pool, const int* bounds, int count,
                                              int mode, uint32_t* out, uint32_t* out_validity) {
  int lane = threadIdx.x & 31;
  long long warps = gpudf::grid_threads() / 32;
  for (long long base = gpudf::global_thread() / 32 * 32; base < n; base += warps * 32) {
    long long i = base + lane;
    bool valid = i < n && gpudf::is_valid(validity, i);
    bool hit = false;
    if (valid) {
      int start = offsets[i];
      int len = offsets[i + 1] - start;
      for (int k = 0; k < count && !hit; k++) {
        hit = gpudf_match::matches(mode, chars + start, len, pool + bounds[k], bounds[k + 1] - bounds[k]);
      }
    }
    unsigned bits = __ballot_sync(0xffffffffu, hit);
    unsigned valids = __ballot_sync(0xffffffffu, valid);
    if (lane == 0) {
      out[base >> 5] = bits;
      if (out_validity != nullptr) out_validity[base >> 5] = valids;
    }
  }
}
