// Hash join. The build side's distinct keys go into an open-addressing table of (tag, row) slots
// (keys.cuh), one slot per key, whose row is the first to claim it; each slot counts its rows, and
// the rows of a key held by more than one row are listed together in `rows`, in the range that
// ends at slot_end[slot]. Rows with a NULL key are left out (they match nothing). So a probe costs
// one walk over distinct keys however many rows share a key: a table of many equal keys is not a
// long run of slots that every probe of a missing key must cross.
//
// The probe side runs twice over the same blocks of rows: the count pass stores each row's number
// of output rows, its match (for kinds that pair rows) and each block's total, the host scans the
// totals, and the write pass places every row's output at its block's offset plus a block-wide
// scan of the counts, without probing again. So output follows
// the probe side's row order; a probe row's matches come in their key's list order, which the
// build's atomics decide (any order of them is a right answer).
//
// Kinds: 0 INNER, 1 LEFT, 2 RIGHT, 3 FULL, 4 SEMI, 5 ANTI, 6 null-aware ANTI (NOT IN: a probe row
// with a NULL key is kept only when the build side is empty). RIGHT and FULL also mark the slots
// that matched, so the host can append the build rows of the others. A SEMI or ANTI join whose
// kept side is the smaller builds on that side instead: the other side's rows only mark the keys
// they hold (join_mark_kernel), and no count or write pass runs.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>
#include "common.cuh"
#include "keys.cuh"

using gpudf_keys::KeyCol;

namespace gpudf_join {
constexpr int kInner = 0, kLeft = 1, kRight = 2, kFull = 3, kSemi = 4, kAnti = 5, kNullAwareAnti = 6;

// The slot holding probe row i's key, or -1 when the build side lacks it.
__device__ __forceinline__ long long find(const KeyCol* pk, const KeyCol* bk, int nkeys, long long i,
                                          unsigned long long h, const unsigned long long* table, long long mask) {
  unsigned long long tag = h >> 32;
  for (long long s = (long long)(h & (unsigned long long)mask);; s = (s + 1) & mask) {
    unsigned long long e = table[s];
    if (e == gpudf_keys::kEmpty) return -1;
    if ((e >> 32) == tag && gpudf_keys::rows_equal(pk, i, bk, gpudf_keys::entry_row(e), nkeys, false)) return s;
  }
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

// The slot of build row j's key: the first empty slot of its walk, claimed, or the slot an equal
// key claimed before (then *dups becomes 1). A slot is written once, from empty, so a plain read
// that sees it empty (even a stale one) costs only the atomic that follows; most rows of a table
// with repeated keys find their slot without one.
__device__ __forceinline__ long long claim(const KeyCol* keys, int nkeys, long long j, unsigned long long h,
                                           unsigned long long* table, long long mask, int* dups) {
  unsigned long long mine = gpudf_keys::slot_entry(h, j);
  for (long long s = (long long)(h & (unsigned long long)mask);; s = (s + 1) & mask) {
    unsigned long long e = table[s];
    if (e == gpudf_keys::kEmpty) {
      e = atomicCAS(&table[s], gpudf_keys::kEmpty, mine);
      if (e == gpudf_keys::kEmpty) return s;
    }
    if ((e >> 32) == (h >> 32) && gpudf_keys::rows_equal(keys, j, keys, gpudf_keys::entry_row(e), nkeys, false)) {
      *dups = 1;
      return s;
    }
  }
}
}  // namespace gpudf_join

// Claims a slot per distinct key, counts each slot's rows into slot_rows (zeroed by the host), and
// stores each row's slot in row_slot (-1 for a NULL key); *dups becomes 1 when a key has two rows.
// A warp's rows of one key (fact tables often come sorted by it: lineitem by order) claim once,
// through the first of them, and count with one atomic; a row whose hash but not key equals that
// row's claims its own slot.
extern "C" __global__ void join_build_kernel(const KeyCol* keys, int nkeys, long long m, unsigned long long* table,
                                             long long mask, int* slot_rows, int* row_slot, int* dups) {
  int lane = threadIdx.x & 31;
  long long warps = gpudf::grid_threads() / 32;
  // every lane of a warp runs every step, so the warp-wide votes below see the whole warp
  for (long long base = gpudf::global_thread() / 32 * 32; base < m; base += warps * 32) {
    long long j = base + lane;
    bool any_null = true;
    unsigned long long h = j < m ? gpudf_keys::row_hash(keys, nkeys, j, &any_null) : 0;
    if (j < m && any_null) row_slot[j] = -1;
    bool inserts = j < m && !any_null;
    unsigned inserting = __ballot_sync(0xffffffffu, inserts);
    if (inserts) {
      unsigned peers = __match_any_sync(inserting, h);
      int leader = __ffs(peers) - 1;
      bool own = lane == leader || !gpudf_keys::rows_equal(keys, j, keys, base + leader, nkeys, false);
      unsigned riders = __ballot_sync(peers, !own);
      long long s = own ? gpudf_join::claim(keys, nkeys, j, h, table, mask, dups) : -1;
      long long led = __shfl_sync(peers, s, leader);
      if (!own) s = led;
      if (lane == leader && riders != 0) *dups = 1;
      if (own) atomicAdd(&slot_rows[s], 1 + (lane == leader ? __popc(riders) : 0));
      row_slot[j] = (int)s;
    }
    __syncwarp();
  }
}

// Gives each slot of more than one row a range of `rows`: slot_end[s] gets the range's start, which
// join_list_kernel advances to its end. Nothing to do when no key has two rows.
extern "C" __global__ void join_ranges_kernel(const int* slot_rows, long long cap, const int* dups, int* slot_end,
                                              int* cursor) {
  using BS = cub::BlockScan<int, gpudf::kBlock>;
  __shared__ typename BS::TempStorage temp;
  __shared__ int base;
  if (*dups == 0) return;
  for (long long tile = blockIdx.x * (long long)gpudf::kBlock; tile < cap; tile += gpudf::grid_threads()) {
    long long s = tile + threadIdx.x;
    int c = s < cap ? slot_rows[s] : 0;
    int want = c > 1 ? c : 0;
    int at, total;
    BS(temp).ExclusiveSum(want, at, total);
    if (threadIdx.x == 0) base = total > 0 ? atomicAdd(cursor, total) : 0;
    __syncthreads();
    if (want > 0) slot_end[s] = base + at;
    __syncthreads();
  }
}

// Lists each row of a slot of more than one row in that slot's range.
extern "C" __global__ void join_list_kernel(const int* row_slot, long long m, const int* slot_rows, const int* dups,
                                            int* slot_end, int* rows) {
  if (*dups == 0) return;
  for (long long j = gpudf::global_thread(); j < m; j += gpudf::grid_threads()) {
    int s = row_slot[j];
    if (s >= 0 && slot_rows[s] > 1) rows[atomicAdd(&slot_end[s], 1)] = (int)j;
  }
}

// Block b owns probe rows [b * chunk, (b + 1) * chunk). RIGHT and FULL mark matched slots in
// slot_matched (zeroed by the host; null for the other kinds). Where the kind pairs rows, each row's
// match goes to `found` for the write pass, which then neither hashes nor walks the table again
// (a random read of the table and one of the build keys a row, for joins of large build sides): -1
// for none, else the build row where every key has one row, the slot otherwise.
extern "C" __global__ void join_count_kernel(const KeyCol* pk, const KeyCol* bk, int nkeys, long long n,
                                             long long chunk, const unsigned long long* table, long long mask,
                                             const int* slot_rows, const int* dups, int kind, long long build_rows,
                                             int* counts, long long* block_totals, uint8_t* slot_matched,
                                             int* found) {
  using BR = cub::BlockReduce<long long, gpudf::kBlock>;
  __shared__ typename BR::TempStorage temp;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  bool unique = *dups == 0;
  long long total = 0;
  for (long long i = begin + threadIdx.x; i < end; i += gpudf::kBlock) {
    bool null_key;
    unsigned long long h = gpudf_keys::row_hash(pk, nkeys, i, &null_key);
    long long matches = 0;
    long long s = null_key ? -1 : gpudf_join::find(pk, bk, nkeys, i, h, table, mask);
    if (s >= 0) {
      matches = unique ? 1 : slot_rows[s];
      if (slot_matched != nullptr) slot_matched[s] = 1;
    }
    if (found != nullptr) found[i] = s < 0 ? -1 : unique ? (int)gpudf_keys::entry_row(table[s]) : (int)s;
    long long out = gpudf_join::output_rows(kind, matches, null_key, build_rows);
    if (out > 0x7fffffff) out = 0x7fffffff;  // the host refuses totals past 2^31 - 1 anyway
    counts[i] = (int)out;
    total += out;
  }
  long long sum = BR(temp).Sum(total);
  if (threadIdx.x == 0) block_totals[blockIdx.x] = sum;
}

// Writes each probe row's output: (i, j) per match, or (i, -1) for a kept unmatched or SEMI/ANTI
// row. `right` may be null when only the probe side is wanted (SEMI, ANTI); where the kind pairs
// rows, `found` holds what the count pass found.
extern "C" __global__ void join_write_kernel(long long n, long long chunk, const unsigned long long* table,
                                             const int* slot_rows, const int* slot_end, const int* rows,
                                             const int* dups, int kind, const int* counts, const long long* offsets,
                                             const int* found, int* left, int* right) {
  using BS = cub::BlockScan<long long, gpudf::kBlock>;
  __shared__ typename BS::TempStorage temp;
  __shared__ long long carry;
  long long begin = blockIdx.x * chunk;
  long long end = min(n, begin + chunk);
  if (threadIdx.x == 0) carry = offsets[blockIdx.x];
  __syncthreads();
  bool pairs = kind == gpudf_join::kInner || kind == gpudf_join::kLeft || kind == gpudf_join::kRight ||
               kind == gpudf_join::kFull;
  bool unique = *dups == 0;
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
        int s = found[i];
        if (s < 0) {
          left[at] = (int)i;
          right[at] = -1;
        } else if (unique) {
          left[at] = (int)i;
          right[at] = s;
        } else if (slot_rows[s] == 1) {
          left[at] = (int)i;
          right[at] = (int)gpudf_keys::entry_row(table[s]);
        } else {
          // c is the slot's row count, capped where the host refuses the join anyway
          const int* listed = rows + (slot_end[s] - slot_rows[s]);
          for (long long k = 0; k < c; k++) {
            left[at + k] = (int)i;
            right[at + k] = listed[k];
          }
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) carry += tile;
    __syncthreads();
  }
}

// Marks in slot_matched (zeroed by the host) the slots of the build keys some probe row holds, and
// writes nothing else: a SEMI or ANTI join whose larger side probes (join_marked_rows_kernel then
// lists the build rows to keep).
extern "C" __global__ void join_mark_kernel(const KeyCol* pk, const KeyCol* bk, int nkeys, long long n,
                                            const unsigned long long* table, long long mask, uint8_t* slot_matched) {
  for (long long i = gpudf::global_thread(); i < n; i += gpudf::grid_threads()) {
    bool null_key;
    unsigned long long h = gpudf_keys::row_hash(pk, nkeys, i, &null_key);
    if (null_key) continue;
    long long s = gpudf_join::find(pk, bk, nkeys, i, h, table, mask);
    // a plain store: every writer stores the same 1
    if (s >= 0 && !slot_matched[s]) slot_matched[s] = 1;
  }
}

// A bitmap of the build rows whose slot a probe row matched (matched = 1: a SEMI join's kept rows)
// or did not (matched = 0: the unmatched rows of RIGHT and FULL, an ANTI join's kept rows); a row
// with a NULL key never matched.
extern "C" __global__ void join_marked_rows_kernel(const int* row_slot, const uint8_t* slot_matched, long long m,
                                                   int matched, uint32_t* out) {
  long long words = (m + 31) / 32;
  for (long long w = gpudf::global_thread(); w < words; w += gpudf::grid_threads()) {
    uint32_t bits = 0;
    for (int b = 0; b < 32; b++) {
      long long j = w * 32 + b;
      if (j >= m) break;
      int s = row_slot[j];
      bool hit = s >= 0 && slot_matched[s];
      if (hit == (matched != 0)) bits |= 1u << b;
    }
    out[w] = bits;
  }
}

// Every pair of a join without keys, left row major.
extern "C" __global__ void join_cross_kernel(long long n, long long m, int* left, int* right) {
  for (long long p = gpudf::global_thread(); p < n * m; p += gpudf::grid_threads()) {
    left[p] = (int)(p / m);
    right[p] = (int)(p % m);
  }
}
