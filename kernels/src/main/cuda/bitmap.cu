// Validity-bitmap kernels: counting set bits (valid rows) of an Arrow LSB-first bitmap.
#include <cub/block/block_reduce.cuh>
#include <cstdint>

namespace gpudf_bitmap {
constexpr int kBlock = 256;
}

// Adds to *out the number of set bits among the first `bits` bits of `bitmap`. Bytes are read
// as 32-bit words where whole, so the bitmap must be 4-byte aligned (device buffers are 256).
extern "C" __global__ void bitmap_count_set_kernel(const uint32_t* __restrict__ bitmap, long long bits,
                                                   unsigned long long* __restrict__ out) {
  using BlockReduce = cub::BlockReduce<unsigned long long, gpudf_bitmap::kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  long long words = bits / 32;
  unsigned long long local = 0;
  for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words;
       w += (long long)gridDim.x * blockDim.x) {
    local += __popc(bitmap[w]);
  }
  int tail = (int)(bits % 32);
  if (tail != 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    // the last partial word: read byte-wise so nothing past the bitmap's last byte is touched
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(bitmap + words);
    uint32_t v = 0;
    for (int b = 0; b * 8 < tail; b++) v |= (uint32_t)bytes[b] << (8 * b);
    local += __popc(v & ((1u << tail) - 1u));
  }
  unsigned long long sum = BlockReduce(temp).Sum(local);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(out, sum);
}
