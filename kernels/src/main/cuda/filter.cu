// Stream compaction by a BOOL mask (bit-packed data and validity; null counts as false). Block b
// owns rows [b*chunk, (b+1)*chunk) with chunk a multiple of 32, so each warp reads whole mask
// words: the word itself is the warp's ballot. Pass 1 counts kept rows per block, the host-side
// driver scans the counts (scan_offsets_i64_kernel), pass 2 writes kept row ids in order.
#include <cub/block/block_reduce.cuh>
#include <cstdint>
#include "common.cuh"

namespace gpudf_filter {
using gpudf::kBlock;

// Mask word `w` restricted to rows below n.
__device__ __forceinline__ uint32_t keep_word(const uint32_t* mask, const uint32_t* validity, long long w, long long n) {
  uint32_t m = mask[w] & (validity == nullptr ? ~0u : validity[w]);
  long long rest = n - w * 32;
  return rest >= 32 ? m : (m & ((1u << rest) - 1u));
}
}  // namespace gpudf_filter

extern "C" __global__ void filter_count_kernel(const uint32_t* mask, const uint32_t* validity, long long n,
                                               long long chunk, long long* counts) {
  using BR = cub::BlockReduce<long long, gpudf::kBlock>;
  __shared__ typename BR::TempStorage temp;
  long long wbegin = blockIdx.x * (chunk / 32);
  long long wend = min((n + 31) / 32, wbegin + chunk / 32);
  long long c = 0;
  for (long long w = wbegin + threadIdx.x; w < wend; w += gpudf::kBlock) {
    c += __popc(gpudf_filter::keep_word(mask, validity, w, n));
  }
  long long r = BR(temp).Sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = r;
}

// Writes the ids of kept rows, in row order, starting at offsets[block]. Each warp takes one mask
// word (32 rows) per step; warps' counts are scanned through shared memory.
extern "C" __global__ void filter_indices_kernel(const uint32_t* mask, const uint32_t* validity, long long n,
                                                 long long chunk, const long long* offsets, int* out) {
  constexpr int kWarps = gpudf::kBlock / 32;
  __shared__ int warpCount[kWarps];
  __shared__ long long carry;
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  long long wbegin = blockIdx.x * (chunk / 32);
  long long wend = min((n + 31) / 32, wbegin + chunk / 32);
  if (threadIdx.x == 0) carry = offsets[blockIdx.x];
  __syncthreads();
  for (long long base = wbegin; base < wend; base += kWarps) {
    long long w = base + warp;
    uint32_t m = w < wend ? gpudf_filter::keep_word(mask, validity, w, n) : 0u;
    if (lane == 0) warpCount[warp] = __popc(m);
    __syncthreads();
    long long before = carry;
    for (int k = 0; k < warp; k++) before += warpCount[k];
    if ((m >> lane) & 1u) {
      out[before + __popc(m & ((1u << lane) - 1u))] = (int)(w * 32 + lane);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      long long t = 0;
      for (int k = 0; k < kWarps; k++) t += warpCount[k];
      carry += t;
    }
    __syncthreads();
  }
}
