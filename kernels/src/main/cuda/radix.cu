// Radix sort passes by CUB's onesweep agents (the sorter behind cub::DeviceRadixSort and
// cupy.sort), instantiated here as extern "C" kernels so the driver API can launch them; the
// host side of CUB's dispatch (histogram of every pass, exclusive sums, one onesweep launch per
// pass and portion) is GpuSort.radix. Keys are unsigned, already in sort order (sort.cu's subkeys),
// so every pass is ascending; row ids ride along as values, or nothing for a keys-only sort.
#include <cub/device/dispatch/kernels/radix_sort.cuh>
#include <cub/device/dispatch/tuning/tuning_radix_sort.cuh>
#include <cstdint>

namespace gpudf_radix {
using Offset = int;
template <typename K, typename V>
using Policy = typename cub::detail::radix::policy_hub<K, V, Offset>::Policy900;

template <typename K, typename V>
using Onesweep = cub::detail::radix_sort::AgentRadixSortOnesweep<typename Policy<K, V>::OnesweepPolicy, false, K, V, Offset,
                                                                  int, cub::detail::identity_decomposer_t>;
template <typename K, typename V>
using Histogram = cub::detail::radix_sort::AgentRadixSortHistogram<typename Policy<K, V>::HistogramPolicy, false, K, Offset,
                                                                    cub::detail::identity_decomposer_t>;

// What the host needs to launch the kernels of one (key, value) pair: radix bits, onesweep
// threads per block and items per thread, histogram threads, exclusive-sum threads.
template <typename K, typename V>
__device__ void config(int* out) {
  out[0] = Policy<K, V>::ONESWEEP_RADIX_BITS;
  out[1] = Policy<K, V>::OnesweepPolicy::BLOCK_THREADS;
  out[2] = Policy<K, V>::OnesweepPolicy::ITEMS_PER_THREAD;
  out[3] = Policy<K, V>::HistogramPolicy::BLOCK_THREADS;
  out[4] = Policy<K, V>::ExclusiveSumPolicy::BLOCK_THREADS;
}
}  // namespace gpudf_radix

// Five ints per variant, in the order u32 keys only, u32 with rows, u64 keys only, u64 with rows.
extern "C" __global__ void cub_radix_config_kernel(int* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    gpudf_radix::config<unsigned int, cub::NullType>(out);
    gpudf_radix::config<unsigned int, int>(out + 5);
    gpudf_radix::config<unsigned long long, cub::NullType>(out + 10);
    gpudf_radix::config<unsigned long long, int>(out + 15);
  }
}

// Digit counts of every pass over bits [begin_bit, end_bit), added into `bins` (zeroed by the host).
#define GPUDF_CUB_HISTOGRAM(NAME, K, V)                                                                      \
  extern "C" __global__ void __launch_bounds__(gpudf_radix::Policy<K, V>::HistogramPolicy::BLOCK_THREADS)    \
      cub_radix_histogram_##NAME##_kernel(int* bins, const K* keys, int n, int begin_bit, int end_bit) {      \
    using Agent = gpudf_radix::Histogram<K, V>;                                                              \
    __shared__ typename Agent::TempStorage temp;                                                             \
    Agent(temp, bins, keys, n, begin_bit, end_bit, cub::detail::identity_decomposer_t{}).Process();          \
  }

// Exclusive sums of each pass's bins: one block per pass.
#define GPUDF_CUB_EXCLUSIVE_SUM(NAME, K, V)                                                                  \
  extern "C" __global__ void cub_radix_exclusive_sum_##NAME##_kernel(int* bins) {                            \
    using P = typename gpudf_radix::Policy<K, V>::ExclusiveSumPolicy;                                        \
    constexpr int kDigits = 1 << P::RADIX_BITS;                                                              \
    constexpr int kPerThread = (kDigits + P::BLOCK_THREADS - 1) / P::BLOCK_THREADS;                          \
    using Scan = cub::BlockScan<int, P::BLOCK_THREADS>;                                                      \
    __shared__ typename Scan::TempStorage temp;                                                              \
    int v[kPerThread];                                                                                       \
    int start = blockIdx.x * kDigits;                                                                        \
    for (int u = 0; u < kPerThread; u++) {                                                                   \
      int bin = threadIdx.x * kPerThread + u;                                                                \
      v[u] = bin < kDigits ? bins[start + bin] : 0;                                                          \
    }                                                                                                        \
    Scan(temp).ExclusiveSum(v, v);                                                                           \
    for (int u = 0; u < kPerThread; u++) {                                                                   \
      int bin = threadIdx.x * kPerThread + u;                                                                \
      if (bin < kDigits) bins[start + bin] = v[u];                                                           \
    }                                                                                                        \
  }

// One stable pass over `num_bits` bits from `current_bit` for one portion of the input.
#define GPUDF_CUB_ONESWEEP(NAME, K, V, VPTR)                                                                 \
  extern "C" __global__ void __launch_bounds__(gpudf_radix::Policy<K, V>::OnesweepPolicy::BLOCK_THREADS)     \
      cub_radix_onesweep_##NAME##_kernel(int* lookback, int* ctrs, int* bins_out, const int* bins_in,        \
                                         K* keys_out, const K* keys_in, VPTR values_out,                     \
                                         const VPTR values_in, int n, int current_bit, int num_bits) {        \
    using Agent = gpudf_radix::Onesweep<K, V>;                                                               \
    __shared__ typename Agent::TempStorage temp;                                                             \
    Agent(temp, lookback, ctrs, bins_out, bins_in, keys_out, keys_in, (V*)values_out, (const V*)values_in, n, \
          current_bit, num_bits, cub::detail::identity_decomposer_t{})                                       \
        .Process();                                                                                          \
  }

GPUDF_CUB_HISTOGRAM(u32, unsigned int, cub::NullType)
GPUDF_CUB_HISTOGRAM(u32_rows, unsigned int, int)
GPUDF_CUB_HISTOGRAM(u64, unsigned long long, cub::NullType)
GPUDF_CUB_HISTOGRAM(u64_rows, unsigned long long, int)
GPUDF_CUB_EXCLUSIVE_SUM(u32, unsigned int, cub::NullType)
GPUDF_CUB_EXCLUSIVE_SUM(u32_rows, unsigned int, int)
GPUDF_CUB_EXCLUSIVE_SUM(u64, unsigned long long, cub::NullType)
GPUDF_CUB_EXCLUSIVE_SUM(u64_rows, unsigned long long, int)
GPUDF_CUB_ONESWEEP(u32, unsigned int, cub::NullType, void*)
GPUDF_CUB_ONESWEEP(u32_rows, unsigned int, int, int*)
GPUDF_CUB_ONESWEEP(u64, unsigned long long, cub::NullType, void*)
GPUDF_CUB_ONESWEEP(u64_rows, unsigned long long, int, int*)
