// Checks of columns that came from outside the process as device memory (another process's CUDA
// IPC buffers), run on gpudf's own copy of them: every later kernel trusts offsets, text and
// digits, so a column is checked whole before it becomes a table. Each kernel lowers *first_bad
// to the first position that breaks its rule (atomicMin), so the caller can name it; it starts
// at ~0 (nothing wrong). The CPU twin is dev.gpudf.kernels.InputCheck's host path.
#include <cstdint>
#include "common.cuh"

// Offsets 0..rows of a STRING column: position i is bad when offsets[i] is negative, past
// data_bytes, or below offsets[i - 1] (the row i - 1 would end before it starts).
extern "C" __global__ void check_offsets_kernel(const int32_t* __restrict__ offsets, long long rows,
                                                long long data_bytes, unsigned long long* __restrict__ first_bad) {
  for (long long i = gpudf::global_thread(); i <= rows; i += gpudf::grid_threads()) {
    int32_t o = offsets[i];
    bool bad = o < 0 || o > data_bytes || (i > 0 && offsets[i - 1] > o);
    if (bad) atomicMin(first_bad, (unsigned long long)i);
  }
}

// Whether bytes [start, end) are well-formed UTF-8: no stray or missing continuation bytes, no
// overlong forms, no surrogates, nothing past U+10FFFF.
__device__ bool utf8_ok(const uint8_t* __restrict__ data, int32_t start, int32_t end) {
  int32_t i = start;
  while (i < end) {
    uint32_t b = data[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    int length;
    uint32_t least;
    if ((b & 0xe0) == 0xc0) {
      length = 2;
      least = 0x80;
    } else if ((b & 0xf0) == 0xe0) {
      length = 3;
      least = 0x800;
    } else if ((b & 0xf8) == 0xf0) {
      length = 4;
      least = 0x10000;
    } else {
      return false;
    }
    if (end - i < length) return false;
    uint32_t point = b & (0x7fu >> length);
    for (int k = 1; k < length; k++) {
      uint32_t c = data[i + k];
      if ((c & 0xc0) != 0x80) return false;
      point = point << 6 | (c & 0x3f);
    }
    if (point < least || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

// The first non-NULL row of a STRING column whose bytes are not UTF-8 (offsets already checked).
extern "C" __global__ void check_utf8_kernel(const int32_t* __restrict__ offsets, const uint8_t* __restrict__ data,
                                             const uint32_t* __restrict__ validity, long long rows,
                                             unsigned long long* __restrict__ first_bad) {
  for (long long r = gpudf::global_thread(); r < rows; r += gpudf::grid_threads()) {
    if (gpudf::is_valid(validity, r) && !utf8_ok(data, offsets[r], offsets[r + 1])) {
      atomicMin(first_bad, (unsigned long long)r);
    }
  }
}

// The first non-NULL row of a DECIMAL column of 8-byte values with `precision` digits or fewer
// (at most 18) whose magnitude reaches 10^precision.
extern "C" __global__ void check_decimal64_kernel(const int64_t* __restrict__ values, const uint32_t* __restrict__ validity,
                                                  long long rows, int64_t limit, unsigned long long* __restrict__ first_bad) {
  for (long long r = gpudf::global_thread(); r < rows; r += gpudf::grid_threads()) {
    int64_t v = values[r];
    if (gpudf::is_valid(validity, r) && (v >= limit || v <= -limit)) atomicMin(first_bad, (unsigned long long)r);
  }
}

// The same for 16-byte values (two's complement, little-endian), against 10^precision given as
// its low and high 64-bit words.
extern "C" __global__ void check_decimal128_kernel(const uint64_t* __restrict__ values, const uint32_t* __restrict__ validity,
                                                   long long rows, uint64_t limit_low, uint64_t limit_high,
                                                   unsigned long long* __restrict__ first_bad) {
  unsigned __int128 limit = ((unsigned __int128)limit_high << 64) | limit_low;
  for (long long r = gpudf::global_thread(); r < rows; r += gpudf::grid_threads()) {
    if (!gpudf::is_valid(validity, r)) continue;
    unsigned __int128 v = ((unsigned __int128)values[2 * r + 1] << 64) | values[2 * r];
    bool negative = (values[2 * r + 1] >> 63) != 0;
    // the magnitude of -2^127 wraps to itself, which is past every limit too
    unsigned __int128 magnitude = negative ? ~v + 1 : v;
    if (magnitude >= limit) atomicMin(first_bad, (unsigned long long)r);
  }
}

// Offsets 0..rows less `first`, so that a column's offsets start at 0 (its data copied from there).
extern "C" __global__ void rebase_offsets_kernel(int32_t* __restrict__ offsets, long long rows, int32_t first) {
  for (long long i = gpudf::global_thread(); i <= rows; i += gpudf::grid_threads()) {
    offsets[i] -= first;
  }
}
