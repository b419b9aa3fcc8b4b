// Hash join. The build side's rows go into an open-addressing multimap of (tag, row) slots
// (keys.cuh; rows with a NULL key are left out, they match nothing). The probe side then runs
// twice over the same blocks of rows: the count pass stores each row's number of output rows
// and each block's total, the host scans the totals, and the write pass places every row's
// output at its block's offset plus a block-wide scan of the counts. So output follows the probe
// side's row order; a probe row's matches follow the table's slot order.
//
// Kinds: 0 INNER, 1 LEFT, 2 RIGHT, 3 FULL, 4 SEMI, 5 ANTI, 6 null-aware ANTI (NOT IN: a probe row
// with a NULL key is kept only when the build side is empty). RIGHT and FULL also mark the build
// rows that matched, so the host can append the others.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>
#include "common.cuh"
#include "keys.cuh"

using gpudf_keys::KeyCol;

namespace gpudf_join {
constexpr int kInner = 0, kLeft = 1, kRight = 2, kFull = 3, kSemi = 4, kAnti = 5, kNullAwareAnti = 6;

// Calls on_match(j) for each build row j whose keys equal probe row i's (stopping after the first
// when `first_only`), and returns how many there were.
template <typename F>
__device__ __forceinline__ long long probe(const KeyCol* pk, const KeyCol* bk, int nkeys, long long i,
                                           unsigned long long h, const unsigned long long* table, long long mask,
                                           bool first_only, F on_match) {
  long long matches = 0;
  unsigned long long tag = h >> 32;
  for (long long s = (long long)(h & (unsigned long long)mask);; s = (s + 1) & mask) {
    unsigned long long e = table[s];
    if (e == gpudf_keys::kEmpty) break;
    long long j = gpudf_keys::entry_row(e);
    if ((e >> 32) == tag && gpudf_keys::rows_equal(pk, i, bk, j, nkeys, false)) {
      matches++;
      on_match(j);
      if (first_only) break;
    }
  }
  return matches;
}

// Output rows of probe row i for `kind`, given its matches.
__device__ __forceinline__ long long output_rows(int kind, long long matches, bool null_key, long long build_rows) {
  switch (kind) {
    case kLeft:
    case kFull: return matches > 0 ? matches : 1;
    case kSemi: return matches > 0 ? 1 : 0;
    case kAnti: return matches > 0 ? 0 : 1;
    case kNullAwareAnti: return matches > 0 || (null_key && build_rows > 0) ? 0 : 1;
    default: return matches;
  }
}
}  // namespace gpudf_join

extern "C" __global__ void join_build_kernel(const KeyCol* keys, int nkeys, long long m, unsigned long long* table,
                                             long long mask) {
  for (long long j = gpudf::global_thread(); j < m; j += gpudf::grid_threads()) {
    bool any_null;
    unsigned long long h = gpudf_keys::row_hash(keys, nkeys, j, &any_null);
    if (any_null) continue;
    unsigned long long mine = gpudf_keys::slot_entry(h, j);
    long long s = (long long)(h & (unsigned long long)mask);
    while (atomicCAS(&table[s], gpudf_keys::kEmpty, mine) != gpudf_keys::kEmpty) s = (s + 1) & mask;
  }
}

// Block b owns probe rows [b * chunk, (b + 1) * chunk).
extern "C" __global__ void join_count_kernel(const KeyCol* pk, const KeyCol* bk, int nkeys, long long n,
                                             long long chunk, const unsigned long long* table, long long mask,
                                             int kind, long long build_rows, int* counts, long long* block_totals,
                                             uint32_t* matched) {
  using BR = cub::BlockReduce<long long, gpudf::kBlock>;
  __shared__ typename BR::TempStorage temp;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  bool first_only = (kind == gpudf_join::kSemi || kind == gpudf_join::kAnti || kind == gpudf_join::kNullAwareAnti);
  long long total = 0;
  for (long long i = begin + threadIdx.x; i < end; i += gpudf::kBlock) {
    bool null_key;
    unsigned long long h = gpudf_keys::row_hash(pk, nkeys, i, &null_key);
    long long matches = 0;
    if (!null_key) {
      matches = gpudf_join::probe(pk, bk, nkeys, i, h, table, mask, first_only, [&](long long j) {
        if (matched != nullptr) atomicOr(&matched[j >> 5], 1u << (j & 31));
      });
    }
    long long out = gpudf_join::output_rows(kind, matches, null_key, build_rows);
    if (out > 0x7fffffff) out = 0x7fffffff;  // the host refuses totals past 2^31 - 1 anyway
    counts[i] = (int)out;
    total += out;
  }
  long long sum = BR(temp).Sum(total);
  if (threadIdx.x == 0) block_totals[blockIdx.x] = sum;
}

// Writes each probe row's output: (i, j) per match, or (i, -1) for a kept unmatched or SEMI/ANTI
// row. `right` may be null when only the probe side is wanted (SEMI, ANTI).
extern "C" __global__ void join_write_kernel(const KeyCol* pk, const KeyCol* bk, int nkeys, long long n,
                                             long long chunk, const unsigned long long* table, long long mask,
                                             int kind, const int* counts, const long long* offsets, int* left,
                                             int* right) {
  using BS = cub::BlockScan<long long, gpudf::kBlock>;
  __shared__ typename BS::TempStorage temp;
  __shared__ long long carry;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  if (threadIdx.x == 0) carry = offsets[blockIdx.x];
  __syncthreads();
  bool pairs = kind == gpudf_join::kInner || kind == gpudf_join::kLeft || kind == gpudf_join::kRight ||
               kind == gpudf_join::kFull;
  for (long long base = begin; base < end; base += gpudf::kBlock) {
    long long i = base + threadIdx.x;
    long long c = i < end ? counts[i] : 0;
    long long at, tile;
    BS(temp).ExclusiveSum(c, at, tile);
    at += carry;
    if (c > 0) {
      if (!pairs) {
        left[at] = (int)i;
        if (right != nullptr) right[at] = -1;
      } else {
        bool null_key;
        unsigned long long h = gpudf_keys::row_hash(pk, nkeys, i, &null_key);
        long long k = 0;
        if (!null_key) {
          gpudf_join::probe(pk, bk, nkeys, i, h, table, mask, false, [&](long long j) {
            left[at + k] = (int)i;
            right[at + k] = (int)j;
            k++;
          });
        }
        if (k == 0) {
          left[at] = (int)i;
          right[at] = -1;
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) carry += tile;
    __syncthreads();
  }
}

// A bitmap of the build rows that no probe row matched (for RIGHT and FULL joins).
extern "C" __global__ void join_unmatched_kernel(const uint32_t* matched, long long m, uint32_t* unmatched) {
  long long words = (m + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) unmatched[w] = ~matched[w];
}

// Every pair of a join without keys, left row major.
extern "C" __global__ void join_cross_kernel(long long n, long long m, int* left, int* right) {
  for (long long p = gpudf::global_thread(); p < n * m; p += gpudf::grid_threads()) {
    left[p] = (int)(p / m);
    right[p] = (int)(p % m);
  }
}
