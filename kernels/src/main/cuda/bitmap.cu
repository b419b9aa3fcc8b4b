// Validity-bitmap kernels on Arrow LSB-first bitmaps.
#include <cub/block/block_reduce.cuh>
#include <cstdint>
#include "common.cuh"

// Adds to *out the number of positions among the first `bits` where `a` is set and, unless `b`
// is null, `b` is set too (valid trues of a BOOL column: data AND validity). Bitmaps are read as
// 32-bit words where whole, so they must be 4-byte aligned (device buffers are 256).
extern "C" __global__ void bitmap_count_set_kernel(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b,
                                                   long long bits, unsigned long long* __restrict__ out) {
  using BlockReduce = cub::BlockReduce<unsigned long long, gpudf::kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  long long words = bits / 32;
  unsigned long long local = 0;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    local += __popc(a[w] & (b == nullptr ? ~0u : b[w]));
  }
  int tail = (int)(bits % 32);
  if (tail != 0 && gpudf::global_thread() == 0) {
    // the last partial word, byte by byte, so nothing past the bitmaps' last byte is read
    const uint8_t* ab = reinterpret_cast<const uint8_t*>(a + words);
    const uint8_t* bb = b == nullptr ? nullptr : reinterpret_cast<const uint8_t*>(b + words);
    uint32_t v = 0;
    for (int k = 0; k * 8 < tail; k++) v |= (uint32_t)(ab[k] & (bb == nullptr ? 0xFF : bb[k])) << (8 * k);
    local += __popc(v & ((1u << tail) - 1u));
  }
  unsigned long long sum = BlockReduce(temp).Sum(local);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(out, sum);
}
