// Rows seen through their key columns, for the hash group-by and the hash join: a 64-bit hash
// of a row's keys and key equality between rows of two tables with key columns of the same
// types. The host describes each key column by a KeyCol (GpuKeys.java packs them). Floats compare
// as numbers (-0.0 equals 0.0, NaNs equal each other), so they hash through a normal form.
//
// Hash tables of both operators are open-addressing arrays of 64-bit slots holding
// (tag << 32) | row, where the tag is the hash's high half and the slot index comes from its low
// bits, so most mismatches are rejected without reading the other row's keys.
#pragma once
#include <cstdint>
#include "common.cuh"

namespace gpudf_keys {
// KeyCol.kind: the width in bytes for raw integer-like values, or one of these.
constexpr long long kBits = 0, kString = 3, kF32 = 5, kF64 = 9, kD128 = 16;
constexpr unsigned long long kEmpty = ~0ull;

struct KeyCol {
  long long kind;
  const uint8_t* data;
  const uint32_t* validity;  // null: no nulls
  const int* offsets;        // strings only
};

__device__ __forceinline__ unsigned long long mix(unsigned long long h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

__device__ __forceinline__ bool is_null(const KeyCol& c, long long i) { return !gpudf::is_valid(c.validity, i); }

// The value of a non-null cell as 64 bits (floats in normal form); strings and DECIMAL128 are
// folded, which only hashing uses.
__device__ __forceinline__ unsigned long long cell_bits(const KeyCol& c, long long i) {
  switch (c.kind) {
    case 1: return (unsigned long long)(long long)((const int8_t*)c.data)[i];
    case 2: return (unsigned long long)(long long)((const int16_t*)c.data)[i];
    case 4: return (unsigned long long)(long long)((const int32_t*)c.data)[i];
    case 8: return ((const unsigned long long*)c.data)[i];
    case kBits: return (((const uint32_t*)c.data)[i >> 5] >> (i & 31)) & 1u;
    case kF32:
    case kF64: {
      double x = c.kind == kF32 ? (double)((const float*)c.data)[i] : ((const double*)c.data)[i];
      if (x != x) return 0x7ff8000000000000ull;
      if (x == 0.0) return 0;
      return (unsigned long long)__double_as_longlong(x);
    }
    case kD128: {
      const unsigned long long* w = (const unsigned long long*)c.data + 2 * i;
      return w[0] * 31 + w[1];
    }
    default: {  // kString: FNV-1a over the bytes
      int s = c.offsets[i], e = c.offsets[i + 1];
      unsigned long long h = 0xcbf29ce484222325ull;
      for (int b = s; b < e; b++) h = (h ^ c.data[b]) * 0x100000001b3ull;
      return h;
    }
  }
}

// The hash of row i over `count` key columns; *any_null tells whether some key is NULL.
__device__ __forceinline__ unsigned long long row_hash(const KeyCol* cols, int count, long long i, bool* any_null) {
  unsigned long long h = 0x9E3779B97F4A7C15ull;
  bool nul = false;
  for (int k = 0; k < count; k++) {
    unsigned long long v;
    if (is_null(cols[k], i)) {
      nul = true;
      v = 0x5bd1e995ull;
    } else {
      v = cell_bits(cols[k], i);
    }
    h = mix(h ^ v ^ (unsigned long long)k);
  }
  *any_null = nul;
  return h;
}

__device__ __forceinline__ bool cells_equal(const KeyCol& a, long long i, const KeyCol& b, long long j) {
  switch (a.kind) {
    case kD128: {
      const unsigned long long* x = (const unsigned long long*)a.data + 2 * i;
      const unsigned long long* y = (const unsigned long long*)b.data + 2 * j;
      return x[0] == y[0] && x[1] == y[1];
    }
    case kString: {
      int sa = a.offsets[i], la = a.offsets[i + 1] - sa;
      int sb = b.offsets[j], lb = b.offsets[j + 1] - sb;
      if (la != lb) return false;
      for (int k = 0; k < la; k++) {
        if (a.data[sa + k] != b.data[sb + k]) return false;
      }
      return true;
    }
    default: return cell_bits(a, i) == cell_bits(b, j);
  }
}

// Whether row i of `a` and row j of `b` have equal keys; with nulls_equal two NULLs are equal
// (grouping), otherwise a NULL equals nothing (joins).
__device__ __forceinline__ bool rows_equal(const KeyCol* a, long long i, const KeyCol* b, long long j, int count,
                                           bool nulls_equal) {
  for (int k = 0; k < count; k++) {
    bool ni = is_null(a[k], i), nj = is_null(b[k], j);
    if (ni || nj) {
      if (!nulls_equal || ni != nj) return false;
      continue;
    }
    if (!cells_equal(a[k], i, b[k], j)) return false;
  }
  return true;
}

__device__ __forceinline__ unsigned long long slot_entry(unsigned long long hash, long long row) {
  return (hash & 0xffffffff00000000ull) | (unsigned long long)row;
}

__device__ __forceinline__ long long entry_row(unsigned long long e) { return (long long)(e & 0xffffffffull); }
}  // namespace gpudf_keys
