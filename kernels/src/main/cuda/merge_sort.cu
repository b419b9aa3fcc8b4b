// Sorting by comparisons, for few rows: a radix sort makes 8 passes per 64 bits of key (a string
// key is 8 passes per 8 bytes of its longest value), each a launch, which on a few thousand rows
// costs far more than the work; a merge sort here makes one launch per doubling of the sorted run
// length whatever the keys. Rows are compared through all sort columns in the same normal forms as
// the radix sort (sort.cuh), with the row id last, so the order is total and stable.
//
// Tiles of kTile row ids are sorted in shared memory (merge_sort_tiles_kernel), then each pass
// merges runs pairwise (merge_sort_pass_kernel): a row's place in the merged run is its place in
// its own run plus the number of rows of the other run that sort before it, a binary search.
#include <cub/block/block_merge_sort.cuh>
#include <cstdint>
#include "common.cuh"
#include "sort.cuh"

namespace gpudf_merge_sort {
// SortCol.kind: the width in bytes for signed integer-like values, or one of these (as keys.cuh).
constexpr long long kBits = 0, kString = 3, kF32 = 5, kF64 = 9, kD128 = 16;
constexpr int kItems = 8;
constexpr int kTile = gpudf::kBlock * kItems;
// pads a partial tile; sorts after every row
constexpr int kPad = 0x7fffffff;

struct SortCol {
  long long kind;
  const uint8_t* data;
  const uint32_t* validity;  // null: no nulls
  const int* offsets;        // strings only
  long long desc;
  long long nulls_first;
};

// -1, 0 or 1 as non-null values of rows a and b compare ascending.
__device__ __forceinline__ int compare_values(const SortCol& c, int a, int b) {
  switch (c.kind) {
    case 1:
    case 2:
    case 4:
    case 8: {
      long long x, y;
      if (c.kind == 1) {
        x = ((const int8_t*)c.data)[a], y = ((const int8_t*)c.data)[b];
      } else if (c.kind == 2) {
        x = ((const int16_t*)c.data)[a], y = ((const int16_t*)c.data)[b];
      } else if (c.kind == 4) {
        x = ((const int32_t*)c.data)[a], y = ((const int32_t*)c.data)[b];
      } else {
        x = ((const long long*)c.data)[a], y = ((const long long*)c.data)[b];
      }
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case kBits: {
      const uint32_t* w = (const uint32_t*)c.data;
      int x = (w[a >> 5] >> (a & 31)) & 1, y = (w[b >> 5] >> (b & 31)) & 1;
      return x - y;
    }
    case kF32: {
      unsigned int x = gpudf_sort::norm_f32(((const float*)c.data)[a], false);
      unsigned int y = gpudf_sort::norm_f32(((const float*)c.data)[b], false);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case kF64: {
      unsigned long long x = gpudf_sort::norm_f64(((const double*)c.data)[a], false);
      unsigned long long y = gpudf_sort::norm_f64(((const double*)c.data)[b], false);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case kD128: {
      const long long* x = (const long long*)c.data + 2 * (long long)a;
      const long long* y = (const long long*)c.data + 2 * (long long)b;
      if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
      unsigned long long lx = (unsigned long long)x[0], ly = (unsigned long long)y[0];
      return lx < ly ? -1 : lx > ly ? 1 : 0;
    }
    default: {  // kString: unsigned bytes, then the shorter first
      int sa = c.offsets[a], la = c.offsets[a + 1] - sa;
      int sb = c.offsets[b], lb = c.offsets[b + 1] - sb;
      int common = min(la, lb);
      for (int k = 0; k < common; k++) {
        int d = (int)c.data[sa + k] - (int)c.data[sb + k];
        if (d != 0) return d < 0 ? -1 : 1;
      }
      return la < lb ? -1 : la > lb ? 1 : 0;
    }
  }
}

// Whether row a sorts before row b: column by column (NULLs placed as each column says, whatever
// its direction), then by row id.
struct RowLess {
  const SortCol* cols;
  int ncols;

  __device__ __forceinline__ bool operator()(int a, int b) const {
    if (a == kPad || b == kPad) return a != kPad && b == kPad;
    for (int k = 0; k < ncols; k++) {
      const SortCol& c = cols[k];
      bool va = gpudf::is_valid(c.validity, a), vb = gpudf::is_valid(c.validity, b);
      if (va != vb) return va != (c.nulls_first != 0);
      if (!va) continue;
      int d = compare_values(c, a, b);
      if (d != 0) return c.desc ? d > 0 : d < 0;
    }
    return a < b;
  }
};
}  // namespace gpudf_merge_sort

// Block b sorts row ids [b * kTile, (b + 1) * kTile) of `rows` (the ids themselves when rows is
// null) into out.
extern "C" __global__ void __launch_bounds__(gpudf::kBlock)
    merge_sort_tiles_kernel(const gpudf_merge_sort::SortCol* cols, int ncols, const int* rows, long long n, int* out) {
  using namespace gpudf_merge_sort;
  using Sort = cub::BlockMergeSort<int, gpudf::kBlock, kItems>;
  __shared__ typename Sort::TempStorage temp;
  long long base = (long long)blockIdx.x * kTile;
  int valid = (int)min((long long)kTile, n - base);
  int items[kItems];
  for (int k = 0; k < kItems; k++) {
    int i = threadIdx.x * kItems + k;  // blocked arrangement
    items[k] = i < valid ? (rows == nullptr ? (int)(base + i) : rows[base + i]) : kPad;
  }
  Sort(temp).Sort(items, RowLess{cols, ncols}, valid, kPad);
  for (int k = 0; k < kItems; k++) {
    int i = threadIdx.x * kItems + k;
    if (i < valid) out[base + i] = items[k];
  }
}

// Merges sorted runs of `width` row ids pairwise, from `in` into `out`.
extern "C" __global__ void merge_sort_pass_kernel(const gpudf_merge_sort::SortCol* cols, int ncols, const int* in,
                                                  long long n, long long width, int* out) {
  gpudf_merge_sort::RowLess less{cols, ncols};
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    long long start = i / (2 * width) * (2 * width);
    long long mid = min(start + width, n);
    long long end = min(start + 2 * width, n);
    int row = in[i];
    bool first = i < mid;
    // rows of the other run that sort before this one (no two rows compare equal)
    long long lo = first ? mid : start, hi = first ? end : mid;
    while (lo < hi) {
      long long m = (lo + hi) / 2;
      if (less(in[m], row)) {
        lo = m + 1;
      } else {
        hi = m;
      }
    }
    long long before = lo - (first ? mid : start);
    long long own = i - (first ? start : mid);
    out[start + own + before] = row;
  }
}
