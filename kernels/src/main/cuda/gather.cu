// Gather: out[i] = src[map[i]] for fixed-width values, bitmaps and strings. An index outside
// [0, n_src) writes nothing and sets *bad, which the host turns into an error, except that with
// `nullable` the index -1 (an outer join's missing side) gives a null: zero data, a clear
// validity bit, an empty string.
#include <cub/block/block_scan.cuh>
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
}  // namespace gpudf_gather

struct Bytes16 {
  long long lo, hi;
};

// One column of a fused gather. width 1, 2, 4, 8 or 16: fixed-width values; 0: a bitmap of
// values (BOOL); -1: no values (a string column, whose bytes are gathered apart). A non-null
// dst_valid gets the gathered validity, and valid_count the number of valid rows added to it.
struct GatherColumn {
  const void* src;
  void* dst;
  const uint32_t* src_valid;
  uint32_t* dst_valid;
  unsigned long long* valid_count;
  long long n_src;
  int width;
  int unused;
};

// The columns of one launch, passed by value as a kernel parameter, so a gather of a whole table
// costs one launch and no upload. GpuGather.COLUMNS_PER_LAUNCH and DESCRIPTOR_BYTES mirror this.
constexpr int kGatherColumns = 16;
struct GatherColumns {
  GatherColumn c[kGatherColumns];
};
static_assert(sizeof(GatherColumn) == 56, "GpuGather.DESCRIPTOR_BYTES");

namespace gpudf_gather {
template <typename T>
__device__ __forceinline__ void put(const GatherColumn& c, int r, bool ok, long long i) {
  static_cast<T*>(c.dst)[i] = ok ? static_cast<const T*>(c.src)[r] : T{};
}

__device__ __forceinline__ bool bit(const uint32_t* bits, int r) {
  return (bits[r >> 5] >> (r & 31)) & 1u;
}
}  // namespace gpudf_gather

// Gathers `count` columns by one map: a warp takes 32 consecutive output rows, so each lane reads
// its row id once for all columns and a bitmap word is one ballot. Valid rows are summed per block
// in shared memory and added to each column's counter once per block.
extern "C" __global__ void gather_columns_kernel(GatherColumns cols, int count, const int* map, long long n,
                                                 int nullable, int* bad) {
  __shared__ unsigned long long valid[kGatherColumns];
  if (threadIdx.x < kGatherColumns) valid[threadIdx.x] = 0;
  __syncthreads();
  int lane = threadIdx.x & 31;
  long long words = (n + 31) / 32;
  for (long long w = gpudf::global_thread() / 32; w < words; w += gpudf::grid_threads() / 32) {
    long long i = w * 32 + lane;
    bool row = i < n;
    int r = row ? map[i] : -1;
    for (int k = 0; k < count; k++) {
      const GatherColumn& c = cols.c[k];
      bool ok = row && gpudf_gather::in_range(r, c.n_src, nullable, bad);
      // a bad index writes nothing (the host refuses the result); -1 under `nullable` writes zero
      bool write = row && (ok || r == -1);
      switch (c.width) {
        case 1: if (write) gpudf_gather::put<uint8_t>(c, r, ok, i); break;
        case 2: if (write) gpudf_gather::put<uint16_t>(c, r, ok, i); break;
        case 4: if (write) gpudf_gather::put<uint32_t>(c, r, ok, i); break;
        case 8: if (write) gpudf_gather::put<unsigned long long>(c, r, ok, i); break;
        case 16: if (write) gpudf_gather::put<Bytes16>(c, r, ok, i); break;
        case 0: {
          unsigned word = __ballot_sync(~0u, ok && gpudf_gather::bit(static_cast<const uint32_t*>(c.src), r));
          if (lane == 0) static_cast<uint32_t*>(c.dst)[w] = word;
          break;
        }
        default: break;
      }
      if (c.dst_valid != nullptr) {
        unsigned word = __ballot_sync(~0u, ok && (c.src_valid == nullptr || gpudf_gather::bit(c.src_valid, r)));
        if (lane == 0) {
          c.dst_valid[w] = word;
          if (word != 0) atomicAdd(&valid[k], (unsigned long long)__popc(word));
        }
      }
    }
  }
  __syncthreads();
  if (threadIdx.x < count && valid[threadIdx.x] != 0) atomicAdd(cols.c[threadIdx.x].valid_count, valid[threadIdx.x]);
}

// Lengths of the gathered strings, as int64 so the host-side scan cannot overflow.
extern "C" __global__ void gather_string_lengths_kernel(const int* offsets, long long n_src, const int* map,
                                                        long long n, long long* lengths, int nullable, int* bad) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int r = map[i];
    lengths[i] = gpudf_gather::in_range(r, n_src, nullable, bad) ? offsets[r + 1] - offsets[r] : 0;
  }
}

// One string column of a small gather's offsets: its source offsets and rows, its map (with
// `nullable`, -1 is an empty string), where its int32 offsets go and where their total goes.
struct GatherString {
  const int* src_offsets;
  long long n_src;
  const int* map;
  int* dst_offsets;
  unsigned long long* total;
  int nullable;
  int unused;
};

// The string columns of one launch, by value. GpuGather.STRINGS_PER_LAUNCH and STRING_BYTES mirror this.
constexpr int kGatherStrings = 16;
struct GatherStrings {
  GatherString c[kGatherStrings];
};
static_assert(sizeof(GatherString) == 48, "GpuGather.STRING_BYTES");

// The gathered offsets of up to kGatherStrings string columns of few rows (at most
// GpuGather.SMALL_GATHER_ROWS), a block of kStringThreads per column walking its rows
// kStringItems a thread at a time: lengths, their scan and Arrow's int32 offsets in one launch,
// where a column of many rows takes four and two copies. The total (int64) goes to *total; past
// 2^31 - 1 the offsets are not valid, and the host, which reads the total before it uses them,
// refuses the column.
constexpr int kStringThreads = 1024, kStringItems = 4;
extern "C" __global__ void __launch_bounds__(kStringThreads)
    gather_string_offsets_kernel(GatherStrings cols, long long n, int* bad) {
  using BS = cub::BlockScan<long long, kStringThreads>;
  __shared__ typename BS::TempStorage temp;
  __shared__ long long carry;
  const GatherString& c = cols.c[blockIdx.x];
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (long long base = 0; base < n; base += (long long)kStringThreads * kStringItems) {
    long long first = base + (long long)threadIdx.x * kStringItems;
    long long len[kStringItems];
#pragma unroll
    for (int k = 0; k < kStringItems; k++) {
      long long i = first + k;
      len[k] = 0;
      if (i < n) {
        int r = c.map[i];
        if (gpudf_gather::in_range(r, c.n_src, c.nullable, bad)) len[k] = c.src_offsets[r + 1] - c.src_offsets[r];
      }
    }
    long long step;
    BS(temp).ExclusiveSum(len, len, step);
#pragma unroll
    for (int k = 0; k < kStringItems; k++) {
      if (first + k < n) c.dst_offsets[first + k] = (int)(carry + len[k]);
    }
    __syncthreads();
    if (threadIdx.x == 0) carry += step;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    c.dst_offsets[n] = (int)carry;
    *c.total = (unsigned long long)carry;
  }
}

// One string column of a small gather's bytes, once its offsets are written and its bytes allocated.
struct GatherChars {
  const int* src_offsets;
  const uint8_t* src_chars;
  long long n_src;
  const int* map;
  const int* dst_offsets;
  uint8_t* dst_chars;
};

// The string columns of one launch, by value. GpuGather.CHARS_BYTES mirrors this.
struct GatherCharsAll {
  GatherChars c[kGatherStrings];
};
static_assert(sizeof(GatherChars) == 48, "GpuGather.CHARS_BYTES");

// The bytes of up to kGatherStrings string columns of a small gather (gather_string_offsets_kernel
// wrote their offsets) in one launch: a warp per string of each column, its lanes copying bytes
// side by side. A row whose index is outside its column (or -1) has no bytes.
extern "C" __global__ void gather_strings_chars_kernel(GatherCharsAll cols, int count, long long n) {
  int lane = threadIdx.x & 31;
  long long items = n * count;
  for (long long w = gpudf::global_thread() / 32; w < items; w += gpudf::grid_threads() / 32) {
    const GatherChars& c = cols.c[w / n];
    long long i = w % n;
    int r = c.map[i];
    if (r < 0 || r >= c.n_src) continue;
    int from = c.src_offsets[r];
    int len = c.src_offsets[r + 1] - from;
    int to = c.dst_offsets[i];
    for (int k = lane; k < len; k += 32) c.dst_chars[to + k] = c.src_chars[from + k];
  }
}

// Narrows scanned int64 offsets (already checked to fit) to Arrow's int32 offsets.
extern "C" __global__ void narrow_offsets_kernel(const long long* wide, long long count, int* out) {
  for (long long i = gpudf::global_thread(); i < count; i += gpudf::grid_threads()) out[i] = (int)wide[i];
}

// A warp per 32 consecutive output rows: their bytes are one range of dst_chars, which the lanes
// copy side by side, 32 neighbouring bytes a step, each byte's row found by a binary search over the
// rows' output offsets, one a lane. A thread per string (short strings) read each lane's own row a
// byte at a time, and a warp per string waited on three dependent loads (map, offsets, bytes) for
// every row; here a warp loads its 32 rows' map entries and offsets at once, and the bytes of
// short and long strings alike go out in full 32-byte sectors. A row whose index is outside its
// column (or -1) has no bytes (gather_string_lengths_kernel gave it none).
extern "C" __global__ void gather_string_chars_kernel(const int* src_offsets, const uint8_t* src_chars,
                                                      long long n_src, const int* map, long long n,
                                                      const int* dst_offsets, uint8_t* dst_chars) {
  int lane = threadIdx.x & 31;
  long long warps = gpudf::grid_threads() / 32;
  for (long long base = gpudf::global_thread() / 32 * 32; base < n; base += warps * 32) {
    long long i = base + lane;
    // rows past n start past every byte, so no byte's search lands on one
    int dst = i < n ? dst_offsets[i] : 0x7fffffff;
    int r = i < n ? map[i] : -1;
    // where a row's bytes come from, less where they go
    int delta = r >= 0 && r < n_src ? src_offsets[r] - dst : 0;
    long long start = __shfl_sync(0xffffffffu, dst, 0);
    long long end = dst_offsets[min(n, base + 32)];
    // positions as 64-bit: a last step may pass 2^31 - 1 by up to 31
    for (long long q = start; q < end; q += 32) {
      long long p = q + lane;
      // the last row that starts at or before p owns it (rows before it that start there are empty)
      int j = 0;
#pragma unroll
      for (int step = 16; step > 0; step >>= 1) {
        if (__shfl_sync(0xffffffffu, dst, j + step) <= p) j += step;
      }
      int d = __shfl_sync(0xffffffffu, delta, j);
      if (p < end) dst_chars[p] = src_chars[p + d];
    }
  }
}
