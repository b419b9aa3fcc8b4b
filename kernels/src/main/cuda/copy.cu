// Copies for slicing and concatenation: bit ranges at any bit offset, and string offsets moved
// by a constant. Fixed-width values and string bytes are plain cuMemcpyDtoDAsync.
#include <cstdint>
#include "common.cuh"

// dst bits [dst_off, dst_off + n) = src bits [src_off, src_off + n); a null src writes ones.
// One thread per destination word; words only partly in range keep their other bits, which is
// safe because launches for neighbouring ranges run one after the other on the stream.
extern "C" __global__ void bits_copy_kernel(const uint32_t* src, long long src_off, long long n, uint32_t* dst,
                                            long long dst_off) {
  if (n <= 0) return;
  long long first = dst_off / 32;
  long long last = (dst_off + n - 1) / 32;
  for (long long w = first + gpudf::global_thread(); w <= last; w += gpudf::grid_threads()) {
    uint32_t word = dst[w];
    for (int k = 0; k < 32; k++) {
      long long d = w * 32 + k;
      if (d < dst_off || d >= dst_off + n) continue;
      long long s = src_off + (d - dst_off);
      uint32_t bit = src == nullptr ? 1u : ((src[s >> 5] >> (s & 31)) & 1u);
      word = (word & ~(1u << k)) | (bit << k);
    }
    dst[w] = word;
  }
}

// dst[i] = src[i] + delta for i in [0, count).
extern "C" __global__ void offsets_shift_kernel(const int* src, long long count, int delta, int* dst) {
  for (long long i = gpudf::global_thread(); i < count; i += gpudf::grid_threads()) dst[i] = src[i] + delta;
}

// dst[i] = start + i: identity gather maps.
extern "C" __global__ void iota_kernel(int* dst, long long n, int start) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) dst[i] = start + (int)i;
}

// map[idx[j]] = max(map[idx[j]], base + j): scatter as a gather over [target; source], where a
// repeated index takes the last source row, as a sequential scatter would.
extern "C" __global__ void scatter_map_kernel(const int* idx, long long n, int base, int* map, long long n_map,
                                              int* bad) {
  for (long long j = gpudf::global_thread(); j < n; j += gpudf::grid_threads()) {
    int t = idx[j];
    if (t < 0 || t >= n_map) {
      atomicExch(bad, 1);
    } else {
      atomicMax(&map[t], base + (int)j);
    }
  }
}

// dst[i] = value for i in [0, n): accumulators preset to an identity that is not a byte pattern.
extern "C" __global__ void fill_i64_kernel(long long* dst, long long n, long long value) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) dst[i] = value;
}
