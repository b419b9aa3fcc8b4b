// Window functions over rows sorted by partition keys, then order keys (GpuWindow.java drives
// these; Window.java is the CPU twin). A head flag marks where a partition or a peer group (rows
// equal on the order keys) starts; an inclusive scan of the flags numbers the runs and the run
// starts are compacted, so every row finds its partition's and peer group's bounds in O(1).
// Frame sums and counts come from prefix sums restarted at every partition head (a frame is the
// difference of two prefixes); MIN and MAX from a sparse table of the best row of every 2^k rows
// (two lookups a row); value functions become a gather map. No frame costs work per frame row.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <climits>
#include <cstdint>
#include "common.cuh"
#include "keys.cuh"

namespace gpudf_window {
using gpudf::kBlock;
using gpudf_keys::KeyCol;

// Run ids are 1-based (an inclusive scan of head flags); starts[id - 1] is the run's first row and
// starts[id] - 1 its last (starts[runs] = n).
__device__ __forceinline__ long long run_start(const long long* id, const long long* starts, long long i) {
  return starts[id[i] - 1];
}
__device__ __forceinline__ long long run_end(const long long* id, const long long* starts, long long i) {
  return starts[id[i]] - 1;
}

// Java's Double.compare order: -0.0 below 0.0, every NaN equal and above every number.
__device__ __forceinline__ long long float_order(double x) {
  long long b = x != x ? 0x7ff8000000000000ll : __double_as_longlong(x);
  return b ^ ((b >> 63) & 0x7fffffffffffffffll);
}

// Sign of (row x - row y) of a non-null column, in the engine's value order (strings as unsigned
// UTF-8 bytes).
__device__ int compare(const KeyCol& c, long long x, long long y) {
  switch (c.kind) {
    case 1: { int8_t a = ((const int8_t*)c.data)[x], b = ((const int8_t*)c.data)[y]; return (a > b) - (a < b); }
    case 2: { int16_t a = ((const int16_t*)c.data)[x], b = ((const int16_t*)c.data)[y]; return (a > b) - (a < b); }
    case 4: { int a = ((const int*)c.data)[x], b = ((const int*)c.data)[y]; return (a > b) - (a < b); }
    case 8: { long long a = ((const long long*)c.data)[x], b = ((const long long*)c.data)[y]; return (a > b) - (a < b); }
    case gpudf_keys::kBits: {
      int a = (((const uint32_t*)c.data)[x >> 5] >> (x & 31)) & 1, b = (((const uint32_t*)c.data)[y >> 5] >> (y & 31)) & 1;
      return a - b;
    }
    case gpudf_keys::kF32:
    case gpudf_keys::kF64: {
      double a = c.kind == gpudf_keys::kF32 ? (double)((const float*)c.data)[x] : ((const double*)c.data)[x];
      double b = c.kind == gpudf_keys::kF32 ? (double)((const float*)c.data)[y] : ((const double*)c.data)[y];
      long long p = float_order(a), q = float_order(b);
      return (p > q) - (p < q);
    }
    case gpudf_keys::kD128: {
      const long long* a = (const long long*)c.data + 2 * x;
      const long long* b = (const long long*)c.data + 2 * y;
      if (a[1] != b[1]) return a[1] > b[1] ? 1 : -1;
      unsigned long long u = (unsigned long long)a[0], v = (unsigned long long)b[0];
      return (u > v) - (u < v);
    }
    default: {  // kString
      int sa = c.offsets[x], la = c.offsets[x + 1] - sa;
      int sb = c.offsets[y], lb = c.offsets[y + 1] - sb;
      int m = la < lb ? la : lb;
      for (int k = 0; k < m; k++) {
        uint8_t a = c.data[sa + k], b = c.data[sb + k];
        if (a != b) return a < b ? -1 : 1;
      }
      return (la > lb) - (la < lb);
    }
  }
}

// Of rows x and y, the one with the smaller (larger for max) value, the earlier on ties; NULL loses.
__device__ __forceinline__ int better(const KeyCol& c, int x, int y, bool max) {
  if (gpudf_keys::is_null(c, x)) return y;
  if (gpudf_keys::is_null(c, y)) return x;
  int s = compare(c, x, y);
  return (max ? s > 0 : s < 0) || (s == 0 && x <= y) ? x : y;
}

// A prefix of a segmented scan: the sum and count of valid values since the last head; `head`
// tells whether a head lies in the span, so a later span that holds one restarts the sums.
template <typename A>
struct Seg {
  A s;
  long long c;
  int head;
};
template <typename A>
struct SegOp {
  __device__ __forceinline__ Seg<A> operator()(const Seg<A>& a, const Seg<A>& b) const {
    return b.head ? b : Seg<A>{a.s + b.s, a.c + b.c, a.head};
  }
};

template <typename T, typename A>
__device__ __forceinline__ A load(const T* data, long long i) {
  return data == nullptr ? (A)0 : (A)data[i];
}
// DECIMAL128: (lo, hi) words of a two's complement integer.
template <>
__device__ __forceinline__ __int128 load<__int128, __int128>(const __int128* data, long long i) {
  if (data == nullptr) return 0;
  const unsigned long long* w = (const unsigned long long*)data + 2 * i;
  return (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
}

// The rows [b*chunk, (b+1)*chunk) of block b, a tile of kBlock rows at a time, from `carry`; with
// `out` each row's inclusive segmented prefix is written. Returns (to thread 0) the chunk's total.
template <typename T, typename A>
__device__ Seg<A> scan_chunk(const T* data, const uint32_t* validity, const int* head, long long n, long long chunk,
                             Seg<A> carry, A* sums, long long* counts) {
  using BS = cub::BlockScan<Seg<A>, kBlock>;
  __shared__ typename BS::TempStorage temp;
  __shared__ Seg<A> shared_carry;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  if (threadIdx.x == 0) shared_carry = carry;
  __syncthreads();
  for (long long base = begin; base < end; base += kBlock) {
    long long i = base + threadIdx.x;
    Seg<A> x{(A)0, 0, 0};
    if (i < end) {
      bool valid = gpudf::is_valid(validity, i);
      x = Seg<A>{valid ? load<T, A>(data, i) : (A)0, valid ? 1 : 0, head[i]};
    }
    Seg<A> incl, tile;
    BS(temp).InclusiveScan(x, incl, SegOp<A>(), tile);
    Seg<A> before = shared_carry;
    if (i < end && sums != nullptr) {
      Seg<A> r = SegOp<A>()(before, incl);
      sums[i] = r.s;
      counts[i] = r.c;
    }
    __syncthreads();
    if (threadIdx.x == 0) shared_carry = SegOp<A>()(before, tile);
    __syncthreads();
  }
  return shared_carry;
}
}  // namespace gpudf_window

using gpudf_window::Seg;
using gpudf_window::SegOp;
using gpudf_keys::KeyCol;

// phead[i] = 1 where a partition starts (keys differ from the row before; NULLs equal), qhead[i]
// where a peer group starts (a partition start, or order keys that differ).
extern "C" __global__ void window_heads_kernel(const KeyCol* part, int part_count, const KeyCol* order, int order_count,
                                               long long n, int* phead, int* qhead) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    bool p = i == 0 || !gpudf_keys::rows_equal(part, i, part, i - 1, part_count, true);
    bool q = p || !gpudf_keys::rows_equal(order, i, order, i - 1, order_count, true);
    phead[i] = p;
    qhead[i] = q;
  }
}

// starts[id[i] - 1] = i at every head; starts[runs] = n.
extern "C" __global__ void window_starts_kernel(const int* head, const long long* id, long long n, long long* starts) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (head[i]) starts[id[i] - 1] = i;
    if (i == n - 1) starts[id[i]] = n;
  }
}

// kind: 0 ROW_NUMBER, 1 RANK, 2 DENSE_RANK, 3 NTILE (into int64 out), 4 PERCENT_RANK, 5 CUME_DIST (float64).
extern "C" __global__ void window_rank_kernel(int kind, long long buckets, long long n, const long long* pid,
                                              const long long* pstarts, const long long* qid, const long long* qstarts,
                                              void* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long ps = gpudf_window::run_start(pid, pstarts, i), pe = gpudf_window::run_end(pid, pstarts, i);
    long long qs = gpudf_window::run_start(qid, qstarts, i), qe = gpudf_window::run_end(qid, qstarts, i);
    long long size = pe - ps + 1;
    long long v = 0;
    switch (kind) {
      case 0: v = i - ps + 1; break;
      case 1: v = qs - ps + 1; break;
      case 2: v = qid[i] - qid[ps] + 1; break;
      case 3: {
        long long j = i - ps, q = size / buckets, r = size % buckets;
        v = j < r * (q + 1) ? j / (q + 1) + 1 : r + (j - r * (q + 1)) / (q > 1 ? q : 1) + 1;
        break;
      }
      case 4: ((double*)out)[i] = size == 1 ? 0.0 : (double)(qs - ps) / (double)(size - 1); continue;
      default: ((double*)out)[i] = (double)(qe - ps + 1) / (double)size; continue;
    }
    ((long long*)out)[i] = v;
  }
}

// Each row's frame as rows lo..hi of its partition (lo = i, hi = i - 1 where empty). ROWS frames
// reach `lower` rows back and `upper` ahead (LLONG_MAX: unbounded; the host clamps the rest to
// +-(n + 1)); RANGE frames without offsets end at the partition or at the peer group.
extern "C" __global__ void window_frame_kernel(int rows, long long lower, long long upper, long long n,
                                               const long long* pid, const long long* pstarts, const long long* qid,
                                               const long long* qstarts, int* lo, int* hi) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long ps = gpudf_window::run_start(pid, pstarts, i), pe = gpudf_window::run_end(pid, pstarts, i);
    long long l, h;
    if (rows) {
      l = lower == LLONG_MAX ? ps : max(ps, i - lower);
      h = upper == LLONG_MAX ? pe : min(pe, i + upper);
    } else {
      l = lower == LLONG_MAX ? ps : gpudf_window::run_start(qid, qstarts, i);
      h = upper == LLONG_MAX ? pe : gpudf_window::run_end(qid, qstarts, i);
    }
    if (l > h) {
      l = i;
      h = i - 1;
    }
    lo[i] = (int)l;
    hi[i] = (int)h;
  }
}

// The row each row reads (-1: none, a NULL): kind 0 LAG, 1 LEAD (k rows back or ahead, inside
// the partition), 2 FIRST_VALUE, 3 LAST_VALUE, 4 NTH_VALUE (the k-th row of the frame).
extern "C" __global__ void window_value_map_kernel(int kind, long long k, long long n, const long long* pid,
                                                   const long long* pstarts, const int* lo, const int* hi, int* map) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long at;
    bool inside;
    if (kind <= 1) {
      at = kind == 0 ? i - k : i + k;
      inside = at >= gpudf_window::run_start(pid, pstarts, i) && at <= gpudf_window::run_end(pid, pstarts, i);
    } else {
      at = kind == 2 ? lo[i] : kind == 3 ? hi[i] : lo[i] + k - 1;
      inside = lo[i] <= hi[i] && at >= lo[i] && at <= hi[i];
    }
    map[i] = inside ? (int)at : -1;
  }
}

// Segmented prefix sums and counts of valid values, restarted at every partition head, in three
// launches: each chunk's total, the chunks' carries (one thread: at most a few thousand chunks),
// then each chunk rescanned from its carry. Integers sum in int64 (int64 in int128, which no run
// of 2^31 rows overflows), floats in float64, DECIMAL128 in int128 (the host bounds the values so
// no prefix overflows). A null data pointer counts valid rows only.
#define GPUDF_WINDOW_SCAN(NAME, T, A)                                                                            \
  extern "C" __global__ void window_scan_totals_##NAME##_kernel(const T* d, const uint32_t* v, const int* head,  \
                                                                 long long n, long long chunk, Seg<A>* totals) { \
    Seg<A> t = gpudf_window::scan_chunk<T, A>(d, v, head, n, chunk, Seg<A>{(A)0, 0, 0}, nullptr, nullptr);       \
    if (threadIdx.x == 0) totals[blockIdx.x] = t;                                                                \
  }                                                                                                              \
  extern "C" __global__ void window_scan_carries_##NAME##_kernel(Seg<A>* totals, int blocks) {                   \
    if (threadIdx.x != 0 || blockIdx.x != 0) return;                                                             \
    Seg<A> carry{(A)0, 0, 0};                                                                                    \
    for (int b = 0; b < blocks; b++) {                                                                           \
      Seg<A> t = totals[b];                                                                                      \
      totals[b] = carry;                                                                                         \
      carry = SegOp<A>()(carry, t);                                                                              \
    }                                                                                                            \
  }                                                                                                              \
  extern "C" __global__ void window_scan_apply_##NAME##_kernel(const T* d, const uint32_t* v, const int* head,   \
                                                                long long n, long long chunk,                    \
                                                                const Seg<A>* carries, A* sums, long long* counts) { \
    gpudf_window::scan_chunk<T, A>(d, v, head, n, chunk, carries[blockIdx.x], sums, counts);                     \
  }

GPUDF_WINDOW_SCAN(i8, int8_t, long long)
GPUDF_WINDOW_SCAN(i16, int16_t, long long)
GPUDF_WINDOW_SCAN(i32, int32_t, long long)
GPUDF_WINDOW_SCAN(i64, long long, __int128)
GPUDF_WINDOW_SCAN(f32, float, double)
GPUDF_WINDOW_SCAN(f64, double, double)
GPUDF_WINDOW_SCAN(d128, __int128, __int128)

namespace gpudf_window {
// 10^38: the first magnitude a DECIMAL(38, s) cannot hold.
__device__ __forceinline__ __int128 ten_to_38() {
  __int128 p = 1;
  for (int k = 0; k < 38; k++) p *= 10;
  return p;
}

// Frame sums from the prefixes, 32 rows a thread so each validity word is written whole. kind:
// 0 COUNT, 1 SUM, 2 SUM0, 3 AVG. out_kind: 0 int64, 1 float64, 2 DECIMAL128 (AVG always float64,
// its sum divided by `unscale` first). A SUM that leaves its type counts into *bad.
template <typename A>
__device__ void frame_sums(int kind, int out_kind, double unscale, long long n, const long long* pid,
                           const long long* pstarts, const int* lo, const int* hi, const A* sums, const long long* counts,
                           void* out, uint32_t* validity, unsigned long long* bad) {
  long long words = (n + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    uint32_t bits = 0;
    for (int j = 0; j < 32; j++) {
      long long i = w * 32 + j;
      if (i >= n) break;
      long long ps = run_start(pid, pstarts, i);
      long long l = lo[i], h = hi[i];
      long long c = 0;
      A s = 0;
      if (l <= h) {
        c = counts[h] - (l > ps ? counts[l - 1] : 0);
        s = sums[h] - (l > ps ? sums[l - 1] : (A)0);
      }
      bool valid = !((kind == 1 || kind == 3) && c == 0);
      if (valid) bits |= 1u << j;
      if (kind == 0) {
        ((long long*)out)[i] = c;
      } else if (kind == 3) {
        ((double*)out)[i] = valid ? (double)s / unscale / (double)c : 0.0;
      } else if (out_kind == 1) {
        ((double*)out)[i] = (double)s;
      } else if (out_kind == 0) {
        __int128 x = (__int128)s;
        if (x > (__int128)LLONG_MAX || x < (__int128)LLONG_MIN) atomicAdd(bad, 1ull);
        ((long long*)out)[i] = (long long)x;
      } else {
        __int128 x = (__int128)s;
        if (x >= ten_to_38() || x <= -ten_to_38()) atomicAdd(bad, 1ull);
        unsigned long long* o = (unsigned long long*)out + 2 * i;
        o[0] = (unsigned long long)x;
        o[1] = (unsigned long long)(x >> 64);
      }
    }
    if (validity != nullptr) validity[w] = bits;
  }
}
}  // namespace gpudf_window

#define GPUDF_WINDOW_SUMS(NAME, A)                                                                               \
  extern "C" __global__ void window_frame_sums_##NAME##_kernel(                                                  \
      int kind, int out_kind, double unscale, long long n, const long long* pid, const long long* pstarts,       \
      const int* lo, const int* hi, const A* sums, const long long* counts, void* out, uint32_t* validity,      \
      unsigned long long* bad) {                                                                                 \
    gpudf_window::frame_sums<A>(kind, out_kind, unscale, n, pid, pstarts, lo, hi, sums, counts, out, validity,   \
                                bad);                                                                            \
  }

GPUDF_WINDOW_SUMS(i64, long long)
GPUDF_WINDOW_SUMS(i128, __int128)
GPUDF_WINDOW_SUMS(f64, double)

// The widest frame (hi - lo + 1), into *out by atomicMax: how many sparse-table levels MIN/MAX need.
extern "C" __global__ void window_widest_kernel(const int* lo, const int* hi, long long n, unsigned long long* out) {
  using BR = cub::BlockReduce<unsigned long long, gpudf::kBlock>;
  __shared__ typename BR::TempStorage temp;
  unsigned long long widest = 0;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long w = (long long)hi[i] - lo[i] + 1;
    if (w > 0 && (unsigned long long)w > widest) widest = (unsigned long long)w;
  }
  unsigned long long r = BR(temp).Reduce(widest, ::cuda::maximum<>{});
  if (threadIdx.x == 0 && r != 0) atomicMax(out, r);
}

// Level 0 of the sparse table: every row is its own best.
extern "C" __global__ void window_iota_kernel(long long n, int* out) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) out[i] = (int)i;
}

// Level k from level k - 1: the best row of rows i .. i + 2^k - 1 (clipped at the end).
extern "C" __global__ void window_best_level_kernel(const KeyCol* col, int max, long long n, long long half,
                                                    const int* prev, int* next) {
  KeyCol c = col[0];
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    next[i] = gpudf_window::better(c, prev[i], i + half < n ? prev[i + half] : prev[i], max != 0);
  }
}

// Each frame's best row from two overlapping power-of-two spans (levels: the level buffers'
// addresses); -1 where the frame is empty or holds only NULLs.
extern "C" __global__ void window_best_query_kernel(const KeyCol* col, int max, long long n, const long long* levels,
                                                    const int* lo, const int* hi, int* map) {
  KeyCol c = col[0];
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    int l = lo[i], h = hi[i];
    if (l > h) {
      map[i] = -1;
      continue;
    }
    int k = 31 - __clz(h - l + 1);
    const int* best = (const int*)levels[k];
    int r = gpudf_window::better(c, best[l], best[h - (1 << k) + 1], max != 0);
    map[i] = gpudf_keys::is_null(c, r) ? -1 : r;
  }
}
