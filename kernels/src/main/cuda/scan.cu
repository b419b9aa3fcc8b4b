// Prefix sums (reduce-then-scan): block b owns rows [b*chunk, (b+1)*chunk); pass 1 writes each
// block's total, pass 2 scans those totals in one block, pass 3 rescans each chunk from its offset.
// A few thousand rows take pass 3 alone, in one block.
// Nulls add nothing (and stay null in the output, which the host handles).
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>
#include "common.cuh"

namespace gpudf_scan {
using gpudf::kBlock;

template <typename T, typename A>
__device__ void partials(const T* data, const uint32_t* validity, long long n, long long chunk, A* out) {
  using BR = cub::BlockReduce<A, kBlock>;
  __shared__ typename BR::TempStorage temp;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  A s = 0;
  for (long long i = begin + threadIdx.x; i < end; i += kBlock) {
    if (gpudf::is_valid(validity, i)) s += (A)data[i];
  }
  A r = BR(temp).Sum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// Exclusive scan of `count` values (at most kBlock * 16) in place; out[count] gets the total.
template <typename A>
__device__ void offsets(A* values, int count) {
  constexpr int kItems = 16;
  using BS = cub::BlockScan<A, kBlock>;
  __shared__ typename BS::TempStorage temp;
  A items[kItems];
  for (int k = 0; k < kItems; k++) {
    int i = threadIdx.x * kItems + k;
    items[k] = i < count ? values[i] : 0;
  }
  A total;
  BS(temp).ExclusiveSum(items, items, total);
  for (int k = 0; k < kItems; k++) {
    int i = threadIdx.x * kItems + k;
    if (i < count) values[i] = items[k];
  }
  if (threadIdx.x == 0) values[count] = total;
}

// Pass 3; with `offs` null (one block over every row: the whole scan in one launch) the carry
// starts at 0 and the block's total goes to *total.
template <typename T, typename A>
__device__ void apply(const T* data, const uint32_t* validity, long long n, long long chunk, const A* offs,
                      A* out, bool inclusive, A* total) {
  using BS = cub::BlockScan<A, kBlock>;
  __shared__ typename BS::TempStorage temp;
  __shared__ A carry;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  if (threadIdx.x == 0) carry = offs == nullptr ? (A)0 : offs[blockIdx.x];
  __syncthreads();
  for (long long base = begin; base < end; base += kBlock) {
    long long i = base + threadIdx.x;
    A x = (i < end && gpudf::is_valid(validity, i)) ? (A)data[i] : (A)0;
    A excl, tile;
    BS(temp).ExclusiveSum(x, excl, tile);
    if (i < end) out[i] = carry + excl + (inclusive ? x : (A)0);
    __syncthreads();
    if (threadIdx.x == 0) carry += tile;
    __syncthreads();
  }
  if (offs == nullptr && threadIdx.x == 0) *total = carry;
}
}  // namespace gpudf_scan

#define GPUDF_SCAN(NAME, T, A)                                                                             \
  extern "C" __global__ void scan_partials_##NAME##_kernel(const T* d, const uint32_t* v, long long n,   \
                                                            long long chunk, A* out) {                    \
    gpudf_scan::partials<T, A>(d, v, n, chunk, out);                                                      \
  }                                                                                                       \
  extern "C" __global__ void scan_apply_##NAME##_kernel(const T* d, const uint32_t* v, long long n,      \
                                                         long long chunk, const A* offs, A* out, int incl,   \
                                                         A* total) {                                         \
    gpudf_scan::apply<T, A>(d, v, n, chunk, offs, out, incl != 0, total);                                 \
  }

GPUDF_SCAN(i8, int8_t, long long)
GPUDF_SCAN(i16, int16_t, long long)
GPUDF_SCAN(i32, int32_t, long long)
GPUDF_SCAN(i64, long long, long long)
GPUDF_SCAN(f32, float, double)
GPUDF_SCAN(f64, double, double)

extern "C" __global__ void scan_offsets_i64_kernel(long long* values, int count) {
  gpudf_scan::offsets<long long>(values, count);
}
extern "C" __global__ void scan_offsets_f64_kernel(double* values, int count) {
  gpudf_scan::offsets<double>(values, count);
}
