// Order-preserving normal forms of sort key values, shared by the radix sort (sort.cu), whose
// subkeys are these as unsigned integers, and the comparison sort (merge_sort.cu), which compares
// them, so both order every type the same way.
#pragma once
#include <cstdint>

namespace gpudf_sort {
__device__ __forceinline__ long long row_of(const int* map, long long i) { return map == nullptr ? i : map[i]; }

// Signed integers of `bits` width: flip the sign bit so unsigned order is numeric order.
template <typename K>
__device__ __forceinline__ K norm_int(long long x, int bits, bool desc) {
  K mask = bits == (int)(sizeof(K) * 8) ? (K)~(K)0 : (K)(((K)1 << bits) - 1);
  K k = ((K)x & mask) ^ ((K)1 << (bits - 1));
  return desc ? (K)(~k & mask) : k;
}

// IEEE floats: all NaNs above +inf, -0.0 equal to 0.0.
__device__ __forceinline__ unsigned long long norm_f64(double x, bool desc) {
  unsigned long long b;
  if (isnan(x)) {
    b = 0x7FF8000000000000ull;
  } else {
    b = __double_as_longlong(x == 0.0 ? 0.0 : x);
  }
  unsigned long long k = (b >> 63) ? ~b : (b | 0x8000000000000000ull);
  return desc ? ~k : k;
}
__device__ __forceinline__ unsigned int norm_f32(float x, bool desc) {
  unsigned int b = isnan(x) ? 0x7FC00000u : __float_as_uint(x == 0.0f ? 0.0f : x);
  unsigned int k = (b >> 31) ? ~b : (b | 0x80000000u);
  return desc ? ~k : k;
}

}  // namespace gpudf_sort
