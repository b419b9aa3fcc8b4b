// Reductions: each block writes one partial result for its grid-stride share of the rows, and
// the last block to finish (counted on a ticket the caller zeroes) combines those partials in
// block order into the slot after them, so the host reads back one partial in one small copy and
// results do not depend on the order in which blocks finish.
#include <cub/block/block_reduce.cuh>
#include <cstdint>
#include <climits>
#include "common.cuh"

namespace gpudf_reduce {
using gpudf::kBlock;

// Another block's partial, read past L1 (the partials are written by other SMs).
template <typename P>
__device__ __forceinline__ P load_partial(const P* p) {
  static_assert(sizeof(P) % 8 == 0, "partials are made of 8-byte fields");
  P r;
  long long* dst = reinterpret_cast<long long*>(&r);
  const volatile long long* src = reinterpret_cast<const volatile long long*>(p);
  for (int k = 0; k < (int)(sizeof(P) / 8); k++) dst[k] = src[k];
  return r;
}

// Thread 0 holds the block's partial; stores it, and the last block combines all gridDim.x of them
// into partials[gridDim.x].
template <typename P, typename Op>
__device__ void finish(const P& mine, P* partials, unsigned int* ticket, const P& identity, Op op) {
  using BR = cub::BlockReduce<P, kBlock>;
  __shared__ typename BR::TempStorage temp;
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = mine;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  P acc = identity;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) acc = op(acc, load_partial(partials + b));
  P r = BR(temp).Reduce(acc, op);
  if (threadIdx.x == 0) partials[gridDim.x] = r;
}

// Exact integer sum: 128-bit two's complement accumulator plus the count of valid rows.
struct Sum128 {
  unsigned long long lo;
  long long hi;
  long long count;
};
struct AddSum128 {
  __device__ Sum128 operator()(const Sum128& a, const Sum128& b) const {
    Sum128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
    r.count = a.count + b.count;
    return r;
  }
};
__device__ __forceinline__ void add128(Sum128& s, long long vlo, long long vhi) {
  unsigned long long old = s.lo;
  s.lo += (unsigned long long)vlo;
  s.hi += vhi + (s.lo < old ? 1 : 0);
  s.count++;
}

template <typename T>
__device__ void sum_int(const T* data, const uint32_t* validity, long long n, Sum128* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<Sum128, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const Sum128 none{0, 0, 0};
  Sum128 s = none;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      long long v = (long long)data[i];
      add128(s, v, v < 0 ? -1 : 0);
    }
  }
  finish(BR(temp).Reduce(s, AddSum128()), partials, ticket, none, AddSum128());
}

// DECIMAL128 sum: 192-bit accumulator, so the host can tell a result that overflows 128 bits
// from one that fits, however the partial sums run.
struct Sum192 {
  unsigned long long lo;
  unsigned long long mid;
  long long hi;
  long long count;
};
struct AddSum192 {
  __device__ Sum192 operator()(const Sum192& a, const Sum192& b) const {
    Sum192 r;
    r.lo = a.lo + b.lo;
    unsigned long long c1 = r.lo < a.lo ? 1 : 0;
    unsigned long long m = a.mid + b.mid;
    unsigned long long c2 = m < a.mid ? 1 : 0;
    r.mid = m + c1;
    c2 += r.mid < m ? 1 : 0;
    r.hi = a.hi + b.hi + (long long)c2;
    r.count = a.count + b.count;
    return r;
  }
};

__device__ void sum_dec128(const long long* data, const uint32_t* validity, long long n, Sum192* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<Sum192, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const Sum192 none{0, 0, 0, 0};
  Sum192 s = none;
  AddSum192 add;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      long long vhi = data[2 * i + 1];
      Sum192 v{(unsigned long long)data[2 * i], (unsigned long long)vhi, vhi < 0 ? -1 : 0, 1};
      s = add(s, v);
    }
  }
  finish(BR(temp).Reduce(s, add), partials, ticket, none, add);
}

// Float sum: double accumulator; without nulls, 16-byte loads.
struct SumF {
  double sum;
  long long count;
};
struct AddSumF {
  __device__ SumF operator()(const SumF& a, const SumF& b) const { return SumF{a.sum + b.sum, a.count + b.count}; }
};

template <typename T>
__device__ void sum_float(const T* data, const uint32_t* validity, long long n, SumF* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<SumF, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const SumF none{0.0, 0};
  SumF s = none;
  if (validity == nullptr && sizeof(T) == 8) {
    // four independent 16-byte loads in flight per thread: the loop is bound by memory latency
    const double2* d2 = reinterpret_cast<const double2*>(data);
    long long pairs = n / 2;
    long long stride = gpudf::grid_threads();
    long long i = gpudf::global_thread();
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (; i + 3 * stride < pairs; i += 4 * stride) {
      double2 v0 = __ldcs(d2 + i);
      double2 v1 = __ldcs(d2 + i + stride);
      double2 v2 = __ldcs(d2 + i + 2 * stride);
      double2 v3 = __ldcs(d2 + i + 3 * stride);
      a0 += v0.x + v0.y;
      a1 += v1.x + v1.y;
      a2 += v2.x + v2.y;
      a3 += v3.x + v3.y;
    }
    for (; i < pairs; i += stride) {
      double2 v = __ldcs(d2 + i);
      a0 += v.x + v.y;
    }
    s.sum = (a0 + a1) + (a2 + a3);
    if ((n & 1) && gpudf::global_thread() == 0) s.sum += (double)data[n - 1];
    s.count = 0;  // the host knows the count: n - nullCount
  } else {
    for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
      if (gpudf::is_valid(validity, i)) {
        s.sum += (double)data[i];
        s.count++;
      }
    }
  }
  finish(BR(temp).Reduce(s, AddSumF()), partials, ticket, none, AddSumF());
}

// Min and max of integers (also dates, timestamps, DECIMAL64) with the count of valid rows.
struct MinMaxI {
  long long min;
  long long max;
  long long count;
};
struct CombineMinMaxI {
  __device__ MinMaxI operator()(const MinMaxI& a, const MinMaxI& b) const {
    return MinMaxI{a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max, a.count + b.count};
  }
};

template <typename T>
__device__ void minmax_int(const T* data, const uint32_t* validity, long long n, MinMaxI* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<MinMaxI, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const MinMaxI none{LLONG_MAX, LLONG_MIN, 0};
  MinMaxI s = none;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      long long v = (long long)data[i];
      s.min = v < s.min ? v : s.min;
      s.max = v > s.max ? v : s.max;
      s.count++;
    }
  }
  finish(BR(temp).Reduce(s, CombineMinMaxI()), partials, ticket, none, CombineMinMaxI());
}

// Min and max of floats. NaN sorts above every number (as in PostgreSQL and DuckDB): max is NaN
// when any valid value is NaN, min is NaN only when every valid value is.
struct MinMaxF {
  double min;  // smallest non-NaN, +inf if none
  double max;  // largest non-NaN, -inf if none
  long long count;
  long long nans;
};
struct CombineMinMaxF {
  __device__ MinMaxF operator()(const MinMaxF& a, const MinMaxF& b) const {
    return MinMaxF{fmin(a.min, b.min), fmax(a.max, b.max), a.count + b.count, a.nans + b.nans};
  }
};

template <typename T>
__device__ void minmax_float(const T* data, const uint32_t* validity, long long n, MinMaxF* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<MinMaxF, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const MinMaxF none{INFINITY, -INFINITY, 0, 0};
  MinMaxF s = none;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      double v = (double)data[i];
      if (isnan(v)) {
        s.nans++;
      } else {
        s.min = fmin(s.min, v);
        s.max = fmax(s.max, v);
      }
      s.count++;
    }
  }
  finish(BR(temp).Reduce(s, CombineMinMaxF()), partials, ticket, none, CombineMinMaxF());
}

// DECIMAL128 min and max: signed 128-bit compares.
struct MinMax128 {
  long long minLo, minHi, maxLo, maxHi, count;
};
__device__ __forceinline__ bool less128(long long alo, long long ahi, long long blo, long long bhi) {
  return ahi < bhi || (ahi == bhi && (unsigned long long)alo < (unsigned long long)blo);
}
struct CombineMinMax128 {
  __device__ MinMax128 operator()(const MinMax128& a, const MinMax128& b) const {
    MinMax128 r;
    bool amin = less128(a.minLo, a.minHi, b.minLo, b.minHi);
    r.minLo = amin ? a.minLo : b.minLo;
    r.minHi = amin ? a.minHi : b.minHi;
    bool bmax = less128(a.maxLo, a.maxHi, b.maxLo, b.maxHi);
    r.maxLo = bmax ? b.maxLo : a.maxLo;
    r.maxHi = bmax ? b.maxHi : a.maxHi;
    r.count = a.count + b.count;
    return r;
  }
};

__device__ void minmax_dec128(const long long* data, const uint32_t* validity, long long n, MinMax128* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<MinMax128, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const MinMax128 none{-1, LLONG_MAX, 0, LLONG_MIN, 0};
  MinMax128 s = none;
  CombineMinMax128 combine;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      long long lo = data[2 * i], hi = data[2 * i + 1];
      s = combine(s, MinMax128{lo, hi, lo, hi, 1});
    }
  }
  finish(BR(temp).Reduce(s, combine), partials, ticket, none, combine);
}

// Count, mean and sum of squared deviations (Welford per thread, Chan et al. to combine), for
// mean, variance and standard deviation in double precision.
struct Moments {
  double count;
  double mean;
  double m2;
};
struct CombineMoments {
  __device__ Moments operator()(const Moments& a, const Moments& b) const {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    double n = a.count + b.count;
    double d = b.mean - a.mean;
    return Moments{n, a.mean + d * (b.count / n), a.m2 + b.m2 + d * d * (a.count * b.count / n)};
  }
};

template <typename T>
__device__ __forceinline__ double as_double(const T* data, long long i) {
  return (double)data[i];
}
// DECIMAL128 rows are (lo, hi) pairs of a two's complement 128-bit integer.
struct D128 {
  unsigned long long lo;
  long long hi;
};
template <>
__device__ __forceinline__ double as_double<D128>(const D128* data, long long i) {
  return (double)data[i].hi * 18446744073709551616.0 + (double)data[i].lo;
}

template <typename T>
__device__ void moments(const T* data, const uint32_t* validity, long long n, double scale, Moments* partials, unsigned int* ticket) {
  using BR = cub::BlockReduce<Moments, kBlock>;
  __shared__ typename BR::TempStorage temp;
  const Moments none{0, 0, 0};
  Moments s = none;
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, i)) {
      // __dmul_rn keeps the scaled value rounded once: a contracted fma would see the exact
      // product in one use and the rounded one in the next, and a single row's variance would
      // come out nonzero
      double v = __dmul_rn(as_double(data, i), scale);
      s.count += 1;
      double d = v - s.mean;
      s.mean += d / s.count;
      s.m2 += d * (v - s.mean);
    }
  }
  finish(BR(temp).Reduce(s, CombineMoments()), partials, ticket, none, CombineMoments());
}
}  // namespace gpudf_reduce

// KIND int or float picks the sum and min/max of the type family (and their partial layouts)
#define GPUDF_REDUCE(NAME, T, KIND, SUM_P, MINMAX_P)                                                       \
  extern "C" __global__ void reduce_sum_##NAME##_kernel(const T* d, const uint32_t* v, long long n,         \
                                                         gpudf_reduce::SUM_P* p, unsigned int* t) {         \
    gpudf_reduce::sum_##KIND<T>(d, v, n, p, t);                                                             \
  }                                                                                                         \
  extern "C" __global__ void reduce_minmax_##NAME##_kernel(const T* d, const uint32_t* v, long long n,      \
                                                            gpudf_reduce::MINMAX_P* p, unsigned int* t) {   \
    gpudf_reduce::minmax_##KIND<T>(d, v, n, p, t);                                                          \
  }                                                                                                         \
  extern "C" __global__ void reduce_moments_##NAME##_kernel(const T* d, const uint32_t* v, long long n,     \
                                                             double scale, gpudf_reduce::Moments* p,        \
                                                             unsigned int* t) {                             \
    gpudf_reduce::moments<T>(d, v, n, scale, p, t);                                                         \
  }

GPUDF_REDUCE(i8, int8_t, int, Sum128, MinMaxI)
GPUDF_REDUCE(i16, int16_t, int, Sum128, MinMaxI)
GPUDF_REDUCE(i32, int32_t, int, Sum128, MinMaxI)
GPUDF_REDUCE(i64, long long, int, Sum128, MinMaxI)
GPUDF_REDUCE(f32, float, float, SumF, MinMaxF)
GPUDF_REDUCE(f64, double, float, SumF, MinMaxF)

extern "C" __global__ void reduce_sum_d128_kernel(const long long* d, const uint32_t* v, long long n,
                                                  gpudf_reduce::Sum192* p, unsigned int* t) {
  gpudf_reduce::sum_dec128(d, v, n, p, t);
}
extern "C" __global__ void reduce_minmax_d128_kernel(const long long* d, const uint32_t* v, long long n,
                                                     gpudf_reduce::MinMax128* p, unsigned int* t) {
  gpudf_reduce::minmax_dec128(d, v, n, p, t);
}
extern "C" __global__ void reduce_moments_d128_kernel(const gpudf_reduce::D128* d, const uint32_t* v, long long n,
                                                      double scale, gpudf_reduce::Moments* p, unsigned int* t) {
  gpudf_reduce::moments<gpudf_reduce::D128>(d, v, n, scale, p, t);
}
