// Shared device helpers for the gpudf kernels: validity bits and grid-stride bounds.
#pragma once
#include <cstdint>

namespace gpudf {
constexpr int kBlock = 256;

// Arrow validity: LSB-first bits, 1 = valid; a null bitmap pointer means every row is valid.
__device__ __forceinline__ bool is_valid(const uint32_t* validity, long long i) {
  return validity == nullptr || ((validity[i >> 5] >> (i & 31)) & 1u);
}

__device__ __forceinline__ long long global_thread() {
  return blockIdx.x * (long long)blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_threads() {
  return (long long)gridDim.x * blockDim.x;
}
}  // namespace gpudf
