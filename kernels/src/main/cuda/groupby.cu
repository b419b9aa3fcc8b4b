// Hash group-by. Rows are inserted into an open-addressing table of (tag, row) slots
// (keys.cuh); a second pass lowers each slot's row to the group's first row, so groups come out
// in the order of their first row, as on the CPU. Leaders are then numbered in row order
// (the host compacts a leader bitmap with filter.cu), and every row learns its group id.
//
// With a `keep` mask (a BOOL column's bits and validity; null: every row), the rows it does not
// keep join no group: their slot and group id are -1, which every later pass and every aggregate
// passes over, so a filter's rows are grouped without compacting its columns first.
//
// Aggregates accumulate per group with atomics. Lanes of a warp that hold the same group are
// combined first (__match_any_sync), so a skewed key costs one atomic per warp, not per row.
// Integer and decimal sums are exact in 192 bits; float sums are in double (their order, and so
// their last bits, may differ from run to run); float MIN/MAX use an order-preserving integer
// image of the value, with NaNs counted apart (NaN is above every number, as in Reduction).
#include <cub/block/block_reduce.cuh>
#include <cstdint>
#include "common.cuh"
#include "keys.cuh"

using gpudf_keys::KeyCol;

extern "C" __global__ void groupby_insert_kernel(const KeyCol* keys, int nkeys, long long n,
                                                 const uint32_t* keep, const uint32_t* keep_valid,
                                                 unsigned long long* table, long long mask, int* slot_of) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (keep != nullptr && !(gpudf::is_valid(keep, i) && gpudf::is_valid(keep_valid, i))) {
      slot_of[i] = -1;
      continue;
    }
    bool any_null;
    unsigned long long h = gpudf_keys::row_hash(keys, nkeys, i, &any_null);
    unsigned long long mine = gpudf_keys::slot_entry(h, i);
    long long s = (long long)(h & (unsigned long long)mask);
    while (true) {
      unsigned long long cur = table[s];
      if (cur == gpudf_keys::kEmpty) {
        cur = atomicCAS(&table[s], gpudf_keys::kEmpty, mine);
        if (cur == gpudf_keys::kEmpty) break;
      }
      if ((cur >> 32) == (mine >> 32) &&
          gpudf_keys::rows_equal(keys, gpudf_keys::entry_row(cur), keys, i, nkeys, true)) {
        break;
      }
      s = (s + 1) & mask;
    }
    slot_of[i] = (int)s;
  }
}

// Lowers each slot's row to the smallest row of its group. Most rows come after the winner of
// the insert race, so the plain read spares them the atomic.
extern "C" __global__ void groupby_first_kernel(long long n, const int* slot_of, unsigned long long* table) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (slot_of[i] < 0) continue;
    unsigned long long* e = &table[slot_of[i]];
    unsigned long long cur = *e;
    if (gpudf_keys::entry_row(cur) > i) atomicMin(e, (cur & 0xffffffff00000000ull) | (unsigned long long)i);
  }
}

// Bit i of `mask` is set when row i leads its group; one warp per 32-row word, a lane per row,
// so that the warp reads its 32 slots in one coalesced load (a thread per word read them 128
// bytes apart: q18's 60M rows took 1.5 ms a launch) and the word is the warp's ballot.
extern "C" __global__ void groupby_leader_mask_kernel(long long n, const int* slot_of,
                                                      const unsigned long long* table, uint32_t* mask) {
  long long words = (n + 31) / 32;
  int lane = threadIdx.x & 31;
  long long warps = gpudf::grid_threads() / 32;
  for (long long w = gpudf::global_thread() / 32; w < words; w += warps) {
    long long i = w * 32 + lane;
    int s = i < n ? slot_of[i] : -1;
    bool leads = s >= 0 && gpudf_keys::entry_row(table[s]) == i;
    uint32_t bits = __ballot_sync(0xffffffffu, leads);
    if (lane == 0) mask[w] = bits;
  }
}

// Writes group ids into the leaders' slots, then (second kernel) turns each row's slot into its
// group id in place.
extern "C" __global__ void groupby_label_kernel(const int* leaders, long long groups, const int* slot_of,
                                                unsigned long long* table) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    table[slot_of[leaders[g]]] = (unsigned long long)g;
  }
}

extern "C" __global__ void groupby_assign_kernel(long long n, int* slot_of, const unsigned long long* table) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (slot_of[i] >= 0) slot_of[i] = (int)table[slot_of[i]];
  }
}

namespace gpudf_groupby {
struct W192 {
  unsigned long long w[3];
};

__device__ __forceinline__ W192 add(W192 a, W192 b) {
  W192 r;
  unsigned long long c = 0;
  for (int k = 0; k < 3; k++) {
    unsigned long long s = a.w[k] + b.w[k];
    unsigned long long c1 = s < a.w[k];
    r.w[k] = s + c;
    c = c1 | (r.w[k] < s);
  }
  return r;
}

__device__ __forceinline__ void atomic_add(unsigned long long* acc, W192 v) {
  unsigned long long carry = 0;
  for (int k = 0; k < 3; k++) {
    unsigned long long add = v.w[k] + carry;
    unsigned long long c1 = add < v.w[k];
    unsigned long long old = atomicAdd(&acc[k], add);
    carry = c1 + (old + add < old);
  }
}

template <typename T>
__device__ __forceinline__ W192 widen(const T* data, long long i) {
  long long v = (long long)data[i];
  unsigned long long ext = v < 0 ? ~0ull : 0ull;
  return W192{{(unsigned long long)v, ext, ext}};
}

template <>
__device__ __forceinline__ W192 widen<ulonglong2>(const ulonglong2* data, long long i) {
  ulonglong2 v = data[i];
  return W192{{v.x, v.y, (long long)v.y < 0 ? ~0ull : 0ull}};
}

template <typename T>
__device__ __forceinline__ double as_double(const T* data, long long i) {
  return (double)data[i];
}

// An order-preserving image of a double: unsigned comparison of images orders the numbers.
__device__ __forceinline__ unsigned long long ordered(double x) {
  unsigned long long b = (unsigned long long)__double_as_longlong(x);
  return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

__device__ __forceinline__ double unordered(unsigned long long k) {
  unsigned long long b = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
  return __longlong_as_double((long long)b);
}

// For each 32-row step of a warp: rows of a group (id >= 0) that `load` gives a value for (false:
// NULL, ignored) are combined per group within the warp, and the first lane of each group flushes the combination
// and the number of rows in it.
template <typename V, typename Load, typename Combine, typename Flush>
__device__ void warp_grouped(long long n, const int* group, Load load, Combine combine, Flush flush) {
  __shared__ V vals[gpudf::kBlock];
  int lane = threadIdx.x & 31;
  int first = threadIdx.x & ~31;
  long long warps = gpudf::grid_threads() / 32;
  for (long long base = gpudf::global_thread() / 32 * 32; base < n; base += warps * 32) {
    long long i = base + lane;
    V v{};
    int g = -1;
    if (i < n) {
      g = group[i];
      if (g >= 0 && !load(i, &v)) g = -1;
    }
    unsigned peers = __match_any_sync(0xffffffffu, g);
    vals[threadIdx.x] = v;
    __syncwarp();
    if (g >= 0 && lane == __ffs(peers) - 1) {
      V acc = v;
      for (unsigned rest = peers & (peers - 1); rest != 0; rest &= rest - 1) {
        acc = combine(acc, vals[first + __ffs(rest) - 1]);
      }
      flush(g, acc, (unsigned long long)__popc(peers));
    }
    __syncwarp();
  }
}
}  // namespace gpudf_groupby

// With at most kFewGroups groups, every row's group is one of a few hot addresses: the warps'
// combined values go to per-block copies of the accumulators in shared memory, and each block
// adds its copies to the global ones once at its end (q1: 60M rows into 4 groups).
constexpr int kFewGroups = 128;

// COUNT(*) with a null `validity`, COUNT(col) otherwise.
extern "C" __global__ void groupby_count_kernel(const uint32_t* validity, long long n, const int* group,
                                                unsigned long long* count, long long groups) {
  __shared__ unsigned long long local[kFewGroups];
  bool few = groups <= kFewGroups;
  if (few) {
    for (int g = threadIdx.x; g < groups; g += blockDim.x) local[g] = 0;
    __syncthreads();
  }
  unsigned long long* into = few ? local : count;
  gpudf_groupby::warp_grouped<int>(
      n, group, [&](long long i, int* v) { return gpudf::is_valid(validity, i); },
      [](int a, int b) { return a; }, [&](int g, int v, unsigned long long c) { atomicAdd(&into[g], c); });
  if (few) {
    __syncthreads();
    for (int g = threadIdx.x; g < groups; g += blockDim.x) {
      if (local[g] != 0) atomicAdd(&count[g], local[g]);
    }
  }
}

// Exact sums (192-bit accumulators of three words per group) and non-null counts; with few
// groups, through per-block copies in shared memory (see kFewGroups).
#define GPUDF_GROUPBY_SUM_INT(NAME, T)                                                                   \
  extern "C" __global__ void groupby_sum_int_##NAME##_kernel(const T* data, const uint32_t* validity,     \
                                                             long long n, const int* group,               \
                                                             unsigned long long* acc,                     \
                                                             unsigned long long* count, long long groups) { \
    using gpudf_groupby::W192;                                                                           \
    __shared__ unsigned long long local_acc[3 * kFewGroups];                                             \
    __shared__ unsigned long long local_count[kFewGroups];                                               \
    bool few = groups <= kFewGroups;                                                                     \
    if (few) {                                                                                           \
      for (int g = threadIdx.x; g < groups; g += blockDim.x) {                                           \
        local_acc[3 * g] = local_acc[3 * g + 1] = local_acc[3 * g + 2] = 0;                              \
        local_count[g] = 0;                                                                              \
      }                                                                                                  \
      __syncthreads();                                                                                   \
    }                                                                                                    \
    unsigned long long* into_acc = few ? local_acc : acc;                                                \
    unsigned long long* into_count = few ? local_count : count;                                          \
    gpudf_groupby::warp_grouped<W192>(                                                                   \
        n, group,                                                                                        \
        [&](long long i, W192* v) {                                                                      \
          if (!gpudf::is_valid(validity, i)) return false;                                               \
          *v = gpudf_groupby::widen<T>(data, i);                                                         \
          return true;                                                                                   \
        },                                                                                               \
        [](W192 a, W192 b) { return gpudf_groupby::add(a, b); },                                         \
        [&](int g, W192 v, unsigned long long c) {                                                       \
          gpudf_groupby::atomic_add(into_acc + 3LL * g, v);                                              \
          atomicAdd(&into_count[g], c);                                                                  \
        });                                                                                              \
    if (few) {                                                                                           \
      __syncthreads();                                                                                   \
      for (int g = threadIdx.x; g < groups; g += blockDim.x) {                                           \
        if (local_count[g] == 0) continue;                                                               \
        gpudf_groupby::atomic_add(acc + 3LL * g,                                                         \
                                  W192{{local_acc[3 * g], local_acc[3 * g + 1], local_acc[3 * g + 2]}}); \
        atomicAdd(&count[g], local_count[g]);                                                            \
      }                                                                                                  \
    }                                                                                                    \
  }
GPUDF_GROUPBY_SUM_INT(i8, int8_t)
GPUDF_GROUPBY_SUM_INT(i16, int16_t)
GPUDF_GROUPBY_SUM_INT(i32, int32_t)
GPUDF_GROUPBY_SUM_INT(i64, long long)
GPUDF_GROUPBY_SUM_INT(d128, ulonglong2)

// With at most kPrivateGroups groups (q1 has four), each thread sums its rows into accumulators of
// its own, in registers (the unrolled compares keep them there): per row no atomic, no warp
// matching and no serial combining. At the end the warps reduce them by shuffles, the block's
// warps meet in shared memory, and each block adds one total per group to the global ones. The
// per-thread sums are 192 bits too, so no order of additions can overflow where the total fits.
constexpr int kPrivateGroups = 4;

namespace gpudf_groupby {
__device__ __forceinline__ W192 shfl_down(W192 v, int d) {
  return W192{{__shfl_down_sync(0xffffffffu, v.w[0], d), __shfl_down_sync(0xffffffffu, v.w[1], d),
               __shfl_down_sync(0xffffffffu, v.w[2], d)}};
}

template <typename T>
__device__ void sum_private(const T* data, const uint32_t* validity, long long n, const int* group,
                            unsigned long long* acc, unsigned long long* count, int groups) {
  __shared__ unsigned long long block_acc[3 * kPrivateGroups];
  __shared__ unsigned long long block_count[kPrivateGroups];
  if (threadIdx.x < 3 * kPrivateGroups) block_acc[threadIdx.x] = 0;
  if (threadIdx.x < kPrivateGroups) block_count[threadIdx.x] = 0;
  __syncthreads();
  W192 mine[kPrivateGroups];
  unsigned long long rows[kPrivateGroups];
#pragma unroll
  for (int k = 0; k < kPrivateGroups; k++) {
    mine[k] = W192{{0, 0, 0}};
    rows[k] = 0;
  }
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int g = group[i];
    if (g < 0 || !gpudf::is_valid(validity, i)) continue;
    W192 v = widen<T>(data, i);
#pragma unroll
    for (int k = 0; k < kPrivateGroups; k++) {
      if (g == k) {
        mine[k] = add(mine[k], v);
        rows[k]++;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kPrivateGroups; k++) {
    W192 s = mine[k];
    unsigned long long c = rows[k];
    for (int d = 16; d > 0; d >>= 1) {
      s = add(s, shfl_down(s, d));
      c += __shfl_down_sync(0xffffffffu, c, d);
    }
    if ((threadIdx.x & 31) == 0 && c != 0) {
      atomic_add(block_acc + 3 * k, s);
      atomicAdd(&block_count[k], c);
    }
  }
  __syncthreads();
  int g = threadIdx.x;
  if (g < groups && g < kPrivateGroups && block_count[g] != 0) {
    atomic_add(acc + 3LL * g, W192{{block_acc[3 * g], block_acc[3 * g + 1], block_acc[3 * g + 2]}});
    atomicAdd(&count[g], block_count[g]);
  }
}
}  // namespace gpudf_groupby

// groupby_sum_int_*_kernel for at most kPrivateGroups groups (the host chooses), same arguments.
#define GPUDF_GROUPBY_SUM_INT_PRIVATE(NAME, T)                                                          \
  extern "C" __global__ void groupby_sum_int_private_##NAME##_kernel(                                   \
      const T* data, const uint32_t* validity, long long n, const int* group, unsigned long long* acc,   \
      unsigned long long* count, long long groups) {                                                    \
    gpudf_groupby::sum_private<T>(data, validity, n, group, acc, count, (int)groups);                   \
  }
GPUDF_GROUPBY_SUM_INT_PRIVATE(i8, int8_t)
GPUDF_GROUPBY_SUM_INT_PRIVATE(i16, int16_t)
GPUDF_GROUPBY_SUM_INT_PRIVATE(i32, int32_t)
GPUDF_GROUPBY_SUM_INT_PRIVATE(i64, long long)
GPUDF_GROUPBY_SUM_INT_PRIVATE(d128, ulonglong2)

// Float sums in double and non-null counts; with `mean` non-null, the sum of squared distances
// from the group's mean instead (the second pass of VARIANCE and STDDEV).
#define GPUDF_GROUPBY_SUM_FLOAT(NAME, T)                                                                 \
  extern "C" __global__ void groupby_sum_float_##NAME##_kernel(const T* data, const uint32_t* validity,   \
                                                               long long n, const int* group,             \
                                                               const double* mean, double* acc,           \
                                                               unsigned long long* count) {               \
    gpudf_groupby::warp_grouped<double>(                                                                 \
        n, group,                                                                                        \
        [&](long long i, double* v) {                                                                    \
          if (!gpudf::is_valid(validity, i)) return false;                                               \
          double x = gpudf_groupby::as_double<T>(data, i);                                               \
          if (mean != nullptr) {                                                                         \
            double d = x - mean[group[i]];                                                               \
            x = d * d;                                                                                   \
          }                                                                                              \
          *v = x;                                                                                        \
          return true;                                                                                   \
        },                                                                                               \
        [](double a, double b) { return a + b; },                                                        \
        [&](int g, double v, unsigned long long c) {                                                     \
          atomicAdd(&acc[g], v);                                                                         \
          if (count != nullptr) atomicAdd(&count[g], c);                                                 \
        });                                                                                              \
  }
GPUDF_GROUPBY_SUM_FLOAT(i8, int8_t)
GPUDF_GROUPBY_SUM_FLOAT(i16, int16_t)
GPUDF_GROUPBY_SUM_FLOAT(i32, int32_t)
GPUDF_GROUPBY_SUM_FLOAT(i64, long long)
GPUDF_GROUPBY_SUM_FLOAT(f32, float)
GPUDF_GROUPBY_SUM_FLOAT(f64, double)

// MIN (is_max = 0) or MAX of integer-like values into int64 accumulators (preset to the
// identity by the host), and non-null counts.
#define GPUDF_GROUPBY_MINMAX_INT(NAME, T)                                                                \
  extern "C" __global__ void groupby_minmax_int_##NAME##_kernel(const T* data, const uint32_t* validity,  \
                                                                long long n, const int* group,            \
                                                                int is_max, long long* acc,               \
                                                                unsigned long long* count) {              \
    gpudf_groupby::warp_grouped<long long>(                                                              \
        n, group,                                                                                        \
        [&](long long i, long long* v) {                                                                 \
          if (!gpudf::is_valid(validity, i)) return false;                                               \
          *v = (long long)data[i];                                                                       \
          return true;                                                                                   \
        },                                                                                               \
        [&](long long a, long long b) { return is_max ? max(a, b) : min(a, b); },                        \
        [&](int g, long long v, unsigned long long c) {                                                  \
          if (is_max) {                                                                                  \
            atomicMax(&acc[g], v);                                                                       \
          } else {                                                                                       \
            atomicMin(&acc[g], v);                                                                       \
          }                                                                                              \
          atomicAdd(&count[g], c);                                                                       \
        });                                                                                              \
  }
GPUDF_GROUPBY_MINMAX_INT(i8, int8_t)
GPUDF_GROUPBY_MINMAX_INT(i16, int16_t)
GPUDF_GROUPBY_MINMAX_INT(i32, int32_t)
GPUDF_GROUPBY_MINMAX_INT(i64, long long)

namespace gpudf_groupby {
struct FloatExt {
  unsigned long long key;  // ordered image of the extreme non-NaN value; identity when none
  unsigned long long nans;
};
}  // namespace gpudf_groupby

// MIN or MAX of floats: ordered images (accumulators preset to the identity: all ones for MIN,
// zero for MAX), NaN counts and non-null counts.
#define GPUDF_GROUPBY_MINMAX_FLOAT(NAME, T)                                                              \
  extern "C" __global__ void groupby_minmax_float_##NAME##_kernel(                                       \
      const T* data, const uint32_t* validity, long long n, const int* group, int is_max,               \
      unsigned long long* acc, unsigned long long* nans, unsigned long long* count) {                     \
    using gpudf_groupby::FloatExt;                                                                       \
    unsigned long long identity = is_max ? 0ull : ~0ull;                                                 \
    gpudf_groupby::warp_grouped<FloatExt>(                                                               \
        n, group,                                                                                        \
        [&](long long i, FloatExt* v) {                                                                  \
          if (!gpudf::is_valid(validity, i)) return false;                                               \
          double x = (double)data[i];                                                                    \
          *v = x != x ? FloatExt{identity, 1} : FloatExt{gpudf_groupby::ordered(x), 0};                  \
          return true;                                                                                   \
        },                                                                                               \
        [&](FloatExt a, FloatExt b) {                                                                    \
          return FloatExt{is_max ? max(a.key, b.key) : min(a.key, b.key), a.nans + b.nans};              \
        },                                                                                               \
        [&](int g, FloatExt v, unsigned long long c) {                                                   \
          if (v.key != identity) {                                                                       \
            if (is_max) {                                                                                \
              atomicMax(&acc[g], v.key);                                                                 \
            } else {                                                                                     \
              atomicMin(&acc[g], v.key);                                                                 \
            }                                                                                            \
          }                                                                                              \
          if (v.nans != 0) atomicAdd(&nans[g], v.nans);                                                  \
          atomicAdd(&count[g], c);                                                                       \
        });                                                                                              \
  }
GPUDF_GROUPBY_MINMAX_FLOAT(f32, float)
GPUDF_GROUPBY_MINMAX_FLOAT(f64, double)

// The first non-null row of each group (ANY_VALUE), into int64 accumulators preset to INT64_MAX.
extern "C" __global__ void groupby_first_valid_kernel(const uint32_t* validity, long long n, const int* group,
                                                      long long* first) {
  gpudf_groupby::warp_grouped<long long>(
      n, group,
      [&](long long i, long long* v) {
        *v = i;
        return gpudf::is_valid(validity, i);
      },
      [](long long a, long long b) { return min(a, b); },
      [&](int g, long long v, unsigned long long c) { atomicMin(&first[g], v); });
}

// Gather map of the ANY_VALUE rows: the first valid row, or -1 (a null) where a group has none.
extern "C" __global__ void groupby_first_to_map_kernel(const long long* first, long long groups, int* map) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    map[g] = first[g] == 0x7fffffffffffffffll ? -1 : (int)first[g];
  }
}

// Validity of aggregate results: group g is valid when count[g] > min_count; the valid groups
// are added to *valid.
extern "C" __global__ void groupby_validity_kernel(const unsigned long long* count, long long groups,
                                                   long long min_count, uint32_t* validity, unsigned long long* valid) {
  using BlockReduce = cub::BlockReduce<unsigned long long, gpudf::kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  unsigned long long local = 0;
  long long words = (groups + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    uint32_t bits = 0;
    for (int k = 0; k < 32 && w * 32 + k < groups; k++) {
      if (count[w * 32 + k] > (unsigned long long)min_count) bits |= 1u << k;
    }
    validity[w] = bits;
    local += __popc(bits);
  }
  unsigned long long sum = BlockReduce(temp).Sum(local);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(valid, sum);
}

namespace gpudf_groupby {
__device__ __forceinline__ bool negative(const unsigned long long* a) { return (long long)a[2] < 0; }

// |a| as a double, for a 192-bit two's complement value.
__device__ __forceinline__ double magnitude(const unsigned long long* a) {
  unsigned long long w0 = a[0], w1 = a[1], w2 = a[2];
  if (negative(a)) {
    w0 = ~w0 + 1;
    w1 = ~w1 + (w0 == 0);
    w2 = ~w2 + (w0 == 0 && w1 == 0);
  }
  return (double)w2 * 3.402823669209385e38 + (double)w1 * 18446744073709551616.0 + (double)w0;
}
}  // namespace gpudf_groupby

// Turns 192-bit sums into results: mode 0 INT64 (an overflow sets *bad), mode 1 DECIMAL(38)
// words (beyond 38 digits sets *bad), mode 2 the mean as a double, scaled down by 10^scale.
// Groups without values are left as zero; their validity bit is clear.
extern "C" __global__ void groupby_finish_sum_int_kernel(const unsigned long long* acc, const unsigned long long* count,
                                                         long long groups, int mode, int scale, void* out, int* bad) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    const unsigned long long* a = acc + 3 * g;
    bool fits64 = a[1] == ((long long)a[0] < 0 ? ~0ull : 0ull) && a[2] == a[1];
    if (mode == 0) {
      if (!fits64) atomicExch(bad, 1);
      ((unsigned long long*)out)[g] = a[0];
    } else if (mode == 1) {
      // |sum| < 10^38 = 0x4B3B4CA85A86C47A098A224000000000, and the top word only extends the sign
      unsigned long long w0 = a[0], w1 = a[1];
      bool neg = gpudf_groupby::negative(a);
      if (a[2] != (neg ? ~0ull : 0ull)) {
        atomicExch(bad, 1);
      } else {
        if (neg) {
          w0 = ~w0 + 1;
          w1 = ~w1 + (w0 == 0);
        }
        const unsigned long long hi = 0x4B3B4CA85A86C47Aull, lo = 0x098A224000000000ull;
        if (w1 > hi || (w1 == hi && w0 >= lo)) atomicExch(bad, 1);
      }
      ((unsigned long long*)out)[2 * g] = a[0];
      ((unsigned long long*)out)[2 * g + 1] = a[1];
    } else {
      double m = count[g] == 0 ? 0.0 : gpudf_groupby::magnitude(a) / exp10((double)scale) / (double)count[g];
      ((double*)out)[g] = gpudf_groupby::negative(a) ? -m : m;
    }
  }
}

// Turns double sums into results: op 0 SUM, 1 MEAN, 2 VAR_POP, 3 VAR_SAMP, 4 STDDEV_POP,
// 5 STDDEV_SAMP (for 2..5 `acc` holds squared distances from the mean).
extern "C" __global__ void groupby_finish_sum_float_kernel(const double* acc, const unsigned long long* count,
                                                           long long groups, int op, double* out) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    double c = (double)count[g];
    double s = acc[g];
    double r;
    switch (op) {
      case 0: r = s; break;
      case 1: r = s / c; break;
      case 2: r = s / c; break;
      case 3: r = s / (c - 1); break;
      case 4: r = sqrt(s / c); break;
      default: r = sqrt(s / (c - 1)); break;
    }
    out[g] = count[g] == 0 ? 0.0 : r;
  }
}

// MIN/MAX results of width 1, 2, 4 or 8 bytes from int64 accumulators.
extern "C" __global__ void groupby_finish_minmax_int_kernel(const long long* acc, const unsigned long long* count,
                                                            long long groups, int width, void* out) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    long long v = count[g] == 0 ? 0 : acc[g];
    switch (width) {
      case 1: ((int8_t*)out)[g] = (int8_t)v; break;
      case 2: ((int16_t*)out)[g] = (int16_t)v; break;
      case 4: ((int32_t*)out)[g] = (int32_t)v; break;
      default: ((long long*)out)[g] = v; break;
    }
  }
}

// Float MIN/MAX results (float when is_f32): NaN when MIN saw only NaNs or MAX saw any.
extern "C" __global__ void groupby_finish_minmax_float_kernel(const unsigned long long* acc,
                                                              const unsigned long long* nans,
                                                              const unsigned long long* count, long long groups,
                                                              int is_max, int is_f32, void* out) {
  for (long long g = gpudf::global_thread(); g < groups; g += gpudf::grid_threads()) {
    double v;
    if (count[g] == 0) {
      v = 0.0;
    } else if (is_max ? nans[g] > 0 : nans[g] == count[g]) {
      v = __longlong_as_double(0x7ff8000000000000ll);
    } else {
      v = gpudf_groupby::unordered(acc[g]);
    }
    if (is_f32) {
      ((float*)out)[g] = (float)v;
    } else {
      ((double*)out)[g] = v;
    }
  }
}
