// Gather: out[i] = src[map[i]] for fixed-width values, bitmaps and strings. An index outside
// [0, n_src) writes nothing and sets *bad, which the host turns into an error, except that with
// `nullable` the index -1 (an outer join's missing side) gives a null: zero data, a clear
// validity bit, an empty string.
#include <cstdint>
#include "common.cuh"

namespace gpudf_gather {
__device__ __forceinline__ bool in_range(int r, long long n_src, int nullable, int* bad) {
  if (r < 0 || r >= n_src) {
    if (nullable && r == -1) return false;
    atomicExch(bad, 1);
    return false;
  }
  return true;
}

template <typename T>
__device__ void gather(const T* src, long long n_src, const int* map, long long n, T* dst, int nullable, int* bad) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int r = map[i];
    if (in_range(r, n_src, nullable, bad)) {
      dst[i] = src[r];
    } else if (r == -1) {
      dst[i] = T{};
    }
  }
}
}  // namespace gpudf_gather

struct Bytes16 {
  long long lo, hi;
};

#define GPUDF_GATHER(NAME, T)                                                                          \
  extern "C" __global__ void gather_##NAME##_kernel(const T* src, long long n_src, const int* map,     \
                                                     long long n, T* dst, int nullable, int* bad) {    \
    gpudf_gather::gather<T>(src, n_src, map, n, dst, nullable, bad);                                   \
  }
GPUDF_GATHER(w1, uint8_t)
GPUDF_GATHER(w2, uint16_t)
GPUDF_GATHER(w4, uint32_t)
GPUDF_GATHER(w8, unsigned long long)
GPUDF_GATHER(w16, Bytes16)

// One thread per output word of 32 bits; a null `src` means all bits set (an all-valid column).
extern "C" __global__ void gather_bits_kernel(const uint32_t* src, long long n_src, const int* map, long long n,
                                              uint32_t* dst, int nullable, int* bad) {
  long long words = (n + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    uint32_t out = 0;
    for (int k = 0; k < 32; k++) {
      long long i = w * 32 + k;
      if (i >= n) break;
      int r = map[i];
      if (gpudf_gather::in_range(r, n_src, nullable, bad) && (src == nullptr || ((src[r >> 5] >> (r & 31)) & 1u))) {
        out |= 1u << k;
      }
    }
    dst[w] = out;
  }
}

// Lengths of the gathered strings, as int64 so the host-side scan cannot overflow.
extern "C" __global__ void gather_string_lengths_kernel(const int* offsets, long long n_src, const int* map,
                                                        long long n, long long* lengths, int nullable, int* bad) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int r = map[i];
    lengths[i] = gpudf_gather::in_range(r, n_src, nullable, bad) ? offsets[r + 1] - offsets[r] : 0;
  }
}

// Narrows scanned int64 offsets (already checked to fit) to Arrow's int32 offsets.
extern "C" __global__ void narrow_offsets_kernel(const long long* wide, long long count, int* out) {
  for (long long i = gpudf::global_thread(); i < count; i += gpudf::grid_threads()) out[i] = (int)wide[i];
}

// One thread per string: for short strings (q1's one-letter flags), where a warp per string
// would leave 31 lanes idle and walk the rows one warp step at a time.
extern "C" __global__ void gather_string_chars_thread_kernel(const int* src_offsets, const uint8_t* src_chars,
                                                             long long n_src, const int* map, long long n,
                                                             const int* dst_offsets, uint8_t* dst_chars) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int r = map[i];
    if (r < 0 || r >= n_src) continue;
    int from = src_offsets[r];
    int len = src_offsets[r + 1] - from;
    int to = dst_offsets[i];
    for (int k = 0; k < len; k++) dst_chars[to + k] = src_chars[from + k];
  }
}

// One warp per string, copying bytes in parallel lanes: for long strings.
extern "C" __global__ void gather_string_chars_kernel(const int* src_offsets, const uint8_t* src_chars,
                                                      long long n_src, const int* map, long long n,
                                                      const int* dst_offsets, uint8_t* dst_chars) {
  long long warp = gpudf::global_thread() / 32;
  long long warps = gpudf::grid_threads() / 32;
  int lane = threadIdx.x & 31;
  for (long long i = warp; i < n; i += warps) {
    int r = map[i];
    if (r < 0 || r >= n_src) continue;
    int from = src_offsets[r];
    int len = src_offsets[r + 1] - from;
    int to = dst_offsets[i];
    for (int k = lane; k < len; k += 32) dst_chars[to + k] = src_chars[from + k];
  }
}
