// Sorting by LSD radix passes over order-preserving unsigned keys. Each sort key column becomes
// one or more "subkeys" (its value bits, 8 bytes of a string at a time, a string's length, its
// null flag), each materialised in the current row order through the permutation, then sorted
// stably by CUB's onesweep passes (radix.cu). Stable passes from the least significant subkey to
// the most significant one give a stable multi-column sort. Also here: top-N selection.
#include <cstdint>
#include "common.cuh"
#include "sort.cuh"


// ---- subkeys: value bits of a column, read through an optional row map; null rows get 0 ----
#define GPUDF_SORT_INT_KEYS(NAME, T, K)                                                                        \
  extern "C" __global__ void sort_keys_##NAME##_kernel(const T* data, const uint32_t* validity, const int* map, \
                                                        long long n, int bits, int desc, K* out) {             \
    for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {                            \
      long long r = gpudf_sort::row_of(map, i);                                                               \
      out[i] = gpudf::is_valid(validity, r) ? gpudf_sort::norm_int<K>((long long)data[r], bits, desc != 0) : (K)0; \
    }                                                                                                          \
  }
GPUDF_SORT_INT_KEYS(i8, int8_t, unsigned int)
GPUDF_SORT_INT_KEYS(i16, int16_t, unsigned int)
GPUDF_SORT_INT_KEYS(i32, int32_t, unsigned int)
GPUDF_SORT_INT_KEYS(i64, long long, unsigned long long)

extern "C" __global__ void sort_keys_f32_kernel(const float* data, const uint32_t* validity, const int* map,
                                                long long n, int bits, int desc, unsigned int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    out[i] = gpudf::is_valid(validity, r) ? gpudf_sort::norm_f32(data[r], desc != 0) : 0u;
  }
}
extern "C" __global__ void sort_keys_f64_kernel(const double* data, const uint32_t* validity, const int* map,
                                                long long n, int bits, int desc, unsigned long long* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    out[i] = gpudf::is_valid(validity, r) ? gpudf_sort::norm_f64(data[r], desc != 0) : 0ull;
  }
}

// DECIMAL128: word 0 is the low 64 bits (unsigned order), word 1 the high 64 bits (signed order).
extern "C" __global__ void sort_keys_d128_kernel(const long long* data, const uint32_t* validity, const int* map,
                                                 long long n, int word, int desc, unsigned long long* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    unsigned long long k = 0;
    if (gpudf::is_valid(validity, r)) {
      k = (unsigned long long)data[2 * r + word];
      if (word == 1) k ^= 0x8000000000000000ull;
      if (desc) k = ~k;
    }
    out[i] = k;
  }
}

// BOOL values: false < true.
extern "C" __global__ void sort_keys_bits_kernel(const uint32_t* data, const uint32_t* validity, const int* map,
                                                 long long n, int bits, int desc, unsigned int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    unsigned int v = (data[r >> 5] >> (r & 31)) & 1u;
    out[i] = gpudf::is_valid(validity, r) ? (desc ? 1u - v : v) : 0u;
  }
}

// The null flag, sorted after all value subkeys of a column: 0 sorts first.
extern "C" __global__ void sort_nullkey_kernel(const uint32_t* validity, const int* map, long long n, int nulls_first,
                                               unsigned int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    bool valid = gpudf::is_valid(validity, gpudf_sort::row_of(map, i));
    out[i] = (valid == (nulls_first != 0)) ? 1u : 0u;
  }
}

// Strings: bytes [8*chunk, 8*chunk + 8) big-endian, zero-padded, so unsigned order is byte order.
extern "C" __global__ void sort_keys_strchunk_kernel(const int* offsets, const uint8_t* chars, const uint32_t* validity,
                                                     const int* map, long long n, int chunk, int desc,
                                                     unsigned long long* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    unsigned long long k = 0;
    if (gpudf::is_valid(validity, r)) {
      int from = offsets[r] + 8 * chunk;
      int end = offsets[r + 1];
      for (int b = 0; b < 8; b++) {
        k = (k << 8) | (from + b < end ? chars[from + b] : 0u);
      }
      if (desc) k = ~k;
    }
    out[i] = k;
  }
}

// A string's length breaks ties between strings that agree on every zero-padded chunk.
extern "C" __global__ void sort_keys_strlen_kernel(const int* offsets, const uint32_t* validity, const int* map,
                                                   long long n, int bits, int desc, unsigned int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long r = gpudf_sort::row_of(map, i);
    unsigned int len = gpudf::is_valid(validity, r) ? (unsigned int)(offsets[r + 1] - offsets[r]) : 0u;
    out[i] = desc ? ~len : len;
  }
}

// Longest string among the first n rows, into *out (which starts at 0).
extern "C" __global__ void string_max_length_kernel(const int* offsets, long long n, int* out) {
  int best = 0;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    best = max(best, offsets[i + 1] - offsets[i]);
  }
  atomicMax(out, best);
}


// Sorted keys back to values, for sorting a lone null-free column by itself.
extern "C" __global__ void sort_decode_i32_kernel(const unsigned int* keys, long long n, int bits, int desc, int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    unsigned int k = desc ? ~keys[i] : keys[i];
    out[i] = (int)(k ^ 0x80000000u);
  }
}
extern "C" __global__ void sort_decode_i64_kernel(const unsigned long long* keys, long long n, int bits, int desc,
                                                  long long* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    unsigned long long k = desc ? ~keys[i] : keys[i];
    out[i] = (long long)(k ^ 0x8000000000000000ull);
  }
}

// ---- top-N: a monotone 64-bit prefix of the first sort key, a radix select of its n-th smallest
// value, and a mask of the rows at or below it (a superset of the top n when prefixes tie) ----
#define GPUDF_TOPN_PREFIX(NAME, K, SHIFT_OUT)                                                                   \
  extern "C" __global__ void topn_prefix_##NAME##_kernel(const K* vk, const uint32_t* validity, long long n,    \
                                                          int has_nulls, int nulls_first, unsigned long long* out) { \
    for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {                             \
      unsigned long long v = (unsigned long long)vk[i];                                                         \
      if (has_nulls) {                                                                                          \
        unsigned long long flag = (gpudf::is_valid(validity, i) == (nulls_first != 0)) ? 1ull : 0ull;           \
        v = (flag << 63) | (v >> SHIFT_OUT);                                                                    \
      }                                                                                                         \
      out[i] = v;                                                                                               \
    }                                                                                                           \
  }
GPUDF_TOPN_PREFIX(u32, unsigned int, 0)
GPUDF_TOPN_PREFIX(u64, unsigned long long, 1)

// Digit counts at `shift` among rows whose bits above it equal `prefix` (under `mask`).
extern "C" __global__ void select_hist_kernel(const unsigned long long* p, long long n, int shift,
                                              unsigned long long mask, unsigned long long prefix,
                                              unsigned long long* hist) {
  __shared__ unsigned int h[256];
  for (int d = threadIdx.x; d < 256; d += blockDim.x) h[d] = 0;
  __syncthreads();
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    unsigned long long v = p[i];
    if ((v & mask) == prefix) atomicAdd(&h[(v >> shift) & 255], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < 256; d += blockDim.x) {
    if (h[d] != 0) atomicAdd(&hist[d], (unsigned long long)h[d]);
  }
}

// BOOL bitmap of rows whose prefix is at most `threshold`; one thread per 32-row word.
extern "C" __global__ void select_mask_kernel(const unsigned long long* p, long long n, unsigned long long threshold,
                                              uint32_t* bits) {
  long long words = (n + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    uint32_t word = 0;
    for (int k = 0; k < 32; k++) {
      long long i = w * 32 + k;
      if (i < n && p[i] <= threshold) word |= 1u << k;
    }
    bits[w] = word;
  }
}
