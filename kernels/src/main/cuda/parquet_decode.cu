// Parquet column chunks decoded on the device (ParquetDecode): the pages' bytes are uploaded as
// stored, a warp decompresses each page (Snappy, or a copy), then a warp decodes each data page's
// definition levels into validity bits and its values (PLAIN, or dictionary indexes looked up in
// the chunk's dictionary page) into fixed-width rows; a string column's rows take codes (into its
// dictionaries, which the host decodes, or into pairs of offsets of its PLAIN values), by which
// the caller gathers the strings. Every length, run, index and offset comes from a file and is
// checked before use; the first problem found is recorded as (code, page) and
// the page is left, never read or written past its bounds.
#include <cstdint>
#include "common.cuh"

namespace gpudf_parquet {
// A page's description, kFields int64 each (ParquetDecode lays them out); one launch decodes the
// pages of several columns, each page naming its column's output, validity and index scratch.
constexpr int kSrc = 0, kSrcLen = 1, kDst = 2, kDstLen = 3, kRow0 = 4, kRows = 5, kFlags = 6, kDict = 7, kOut = 8,
              kValidity = 9, kIndexes = 10, kBase = 11, kFields = 12;
// kFlags: kind (bits 0-7), codec (8-15), whether definition levels precede the values (16),
// whether the rows take codes rather than values (17: strings, gathered by code afterwards), the
// stored value's width (24-31) and the column's (32-39).
// kBase: a string column's dictionary page's first code (its entries' place among all the
// column's dictionaries, which the host decodes), or a PLAIN string page's column's first byte in
// the decompressed pages. kIndexes: the column's index scratch (a dictionary column with NULLs),
// or a PLAIN string column's pairs of offsets (plain_strings).
constexpr int kDictionaryPage = 0, kPlainPage = 1;  // 2: a data page of dictionary indexes
constexpr int kSnappy = 1;  // 0: stored uncompressed
// Problems (ParquetDecode.Problem lists them in this order, from 1).
constexpr int kBadSnappy = 1, kBadLength = 2, kBadLevels = 3, kBadIndexes = 4, kIndexRange = 5, kShortValues = 6;

struct Page {
  long long src, src_len, dst, dst_len, row0, rows;
  int kind, codec, in_width, out_width;
  bool levels, codes;
  long long dict, base;
  uint8_t* out;
  uint32_t* validity;
  int32_t* indexes;
};

__device__ __forceinline__ Page page_at(const long long* table, long long p) {
  const long long* t = table + p * kFields;
  Page g;
  g.src = t[kSrc];
  g.src_len = t[kSrcLen];
  g.dst = t[kDst];
  g.dst_len = t[kDstLen];
  g.row0 = t[kRow0];
  g.rows = t[kRows];
  g.kind = (int)(t[kFlags] & 0xff);
  g.codec = (int)((t[kFlags] >> 8) & 0xff);
  g.levels = ((t[kFlags] >> 16) & 1) != 0;
  g.codes = ((t[kFlags] >> 17) & 1) != 0;
  g.base = t[kBase];
  g.in_width = (int)((t[kFlags] >> 24) & 0xff);
  g.out_width = (int)((t[kFlags] >> 32) & 0xff);
  g.dict = t[kDict];
  g.out = reinterpret_cast<uint8_t*>(t[kOut]);
  g.validity = reinterpret_cast<uint32_t*>(t[kValidity]);
  g.indexes = reinterpret_cast<int32_t*>(t[kIndexes]);
  return g;
}

// Records the first problem of the launch (lane 0 of the warp that found it calls this).
__device__ __forceinline__ void fail(int* error, int code, long long page) {
  if (atomicCAS(error, 0, code) == 0) {
    reinterpret_cast<long long*>(error)[1] = page;
  }
}

// A ULEB128 varint of at most 5 bytes (a 32-bit value) from [p, end); false when it runs past end or is longer.
__device__ __forceinline__ bool varint(const uint8_t*& p, const uint8_t* end, unsigned long long& out) {
  out = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (p >= end) return false;
    uint8_t b = *p++;
    out |= (unsigned long long)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return out <= 0xffffffffull;
  }
  return false;
}

// [unsnap begin] (scripts/emulate-unsnap.sh runs what lies between the markers on the host)
// Bytes of output a warp keeps in shared memory (copies read it there; a copy reaching further
// back reads the output in global memory), the part of it written out to global memory at once,
// and bytes of input it stages there.
constexpr int kWindow = 8192, kFlush = 4096, kStage = 1024;
// A batch is the elements whose tags lie in 32 consecutive bytes of input (at most one a lane),
// writing at most kBatch bytes of output; a literal longer than kShort goes alone, straight out.
// Before a batch the stage holds its 32 bytes of tags, a header's 4 more and a short literal.
constexpr int kBatch = 1024, kShort = 64, kAhead = 32 + 4 + kShort;
constexpr unsigned kAll = 0xffffffffu;

// Writes output [from, to) from the window to global memory with the warp; a lane's bytes are
// consecutive across the warp, so the stores coalesce.
__device__ __forceinline__ void flush(const uint8_t* window, uint8_t* out, int from, int to, int lane) {
  for (int k = from + lane; k < to; k += 32) out[k] = window[k & (kWindow - 1)];
}

// What one lane reads of the element that would start at input byte q (a byte the stage holds):
// its type, output length, copy offset and header length, and whether it is a short element a
// batch takes (kind 0), a long literal (1) or a header or literal cut off by the input's end (2).
struct Element {
  int type, len, offset, head, kind;
};

__device__ __forceinline__ Element element_at(const uint8_t* stage, int staged, int staged_end, int in_len, int q) {
  Element e{0, 0, 0, 0, 2};
  int avail = staged_end - q;
  if (avail <= 0) return e;
  const uint8_t* h = stage + (q - staged);
  unsigned b0 = h[0];
  unsigned b1 = avail > 1 ? h[1] : 0, b2 = avail > 2 ? h[2] : 0, b3 = avail > 3 ? h[3] : 0, b4 = avail > 4 ? h[4] : 0;
  unsigned v4 = b1 | (b2 << 8) | (b3 << 16) | (b4 << 24);
  e.type = (int)(b0 & 3);
  e.len = (int)(b0 >> 2) + 1;
  if (e.type == 0) {
    e.head = 1;
    bool ok = true;
    if (e.len > 60) {
      int extra = e.len - 60;
      unsigned v = extra == 4 ? v4 : v4 & ((1u << (8 * extra)) - 1u);
      e.head += extra;
      ok = avail >= e.head && v < 0x7fffffffu;
      e.len = (int)v + 1;
    }
    if (ok && in_len - (q + e.head) >= e.len) e.kind = e.len <= kShort && q + e.head + e.len <= staged_end ? 0 : 1;
  } else {
    if (e.type == 1) {
      e.len = 4 + ((b0 >> 2) & 7);
      e.offset = (int)(((b0 >> 5) << 8) | b1);
      e.head = 2;
    } else if (e.type == 2) {
      e.offset = (int)(v4 & 0xffffu);
      e.head = 3;
    } else {
      // an offset past 2^31 is past any output: 0 is rejected the same way
      e.offset = v4 > 0x7fffffffu ? 0 : (int)v4;
      e.head = 5;
    }
    if (avail >= e.head) e.kind = 0;
  }
  return e;
}

// Keeps the stage holding the input from p on: when fewer than kAhead of its bytes lie past p
// (and the input goes on), the next kStage bytes from p are staged with the warp.
__device__ __forceinline__ void stage_from(const uint8_t* in, int in_len, int p, int lane, uint8_t* stage, int& staged,
                                           int& staged_end) {
  if (staged_end < in_len && staged_end - p < kAhead) {
    __syncwarp();
    staged = p;
    staged_end = in_len - p > kStage ? p + kStage : in_len;
    for (int k = lane; k < staged_end - staged; k += 32) stage[k] = in[staged + k];
    __syncwarp();
  }
}

// Decompresses one Snappy block [in, in + in_len) into [out, out + out_len) (sizes below 2^31,
// which the host checks) with the whole warp. A page is one long chain of elements of a few bytes
// each, so the warp takes them a batch at a time rather than one by one:
// - every lane reads the element that would start at its byte of the next 32, and a walk over
//   shuffles from lane 0 picks those that do (each names where the next one starts);
// - each element's lane writes its literal bytes into the window in shared memory and, for
//   every byte of the batch, where it comes from (itself, or an earlier position: a copy's byte k
//   is the byte `offset` before it, also when the copy overlaps itself);
// - pointer jumping follows those sources to a literal of the batch or to output before it, in
//   about log2(chain) rounds, and each byte takes its value from there.
// The output goes from the window to global memory kFlush bytes at a time; a source before the
// window's reach is read back there. It makes the checks Google's Snappy (the CPU twin's, through
// snappy-java) makes: the declared size is the page's, no copy reaches before the start, no
// element runs past either end; the tests run both on the same valid and corrupt pages.
//
// unsnap_elements decodes the elements of [in + p, in + in_len) into exactly [out, out + out_len):
// a whole block after its preamble, or one fragment of it (split_fragments).
__device__ bool unsnap_elements(const uint8_t* in, int p, int in_len, uint8_t* out, int out_len, int lane,
                                uint8_t* window, uint8_t* stage, int* from) {
  int staged = 0, staged_end = 0;
  int pos = 0;
  // output before `flushed` is in global memory; pos - flushed < kFlush between batches
  int flushed = 0;
  while (p < in_len) {
    stage_from(in, in_len, p, lane, stage, staged, staged_end);
    Element e = element_at(stage, staged, staged_end, in_len, p + lane);
    // next element's byte (relative to p; at most 31 + 5 + kShort), output length, kind; a long
    // literal's next byte is past the byte the field holds (and is not read from here: its length
    // once spilled into the kind, so that a literal of 128 KiB or more sent the warp round forever)
    int packed = (e.kind == 0 ? lane + e.head + (e.type == 0 ? e.len : 0) : 0) | ((e.len & 0xff) << 8) | (e.kind << 16);
    int at = -1;  // where this lane's element writes in the batch, when one starts at its byte
    int cur = 0, total = 0, consumed = 0, stop = 0;
    while (cur < 32 && p + cur < in_len) {
      int info = __shfl_sync(kAll, packed, cur);
      int kind = info >> 16, len = (info >> 8) & 0xff;
      if (kind != 0) {
        // a bad header is an error wherever it is; a long literal waits for its own turn
        stop = kind == 2 || cur == 0 ? kind : 0;
        break;
      }
      if (total + len > kBatch) break;
      if (lane == cur) at = total;
      total += len;
      cur = info & 0xff;
      consumed = cur;
    }
    if (stop == 2) return false;
    if (stop == 1) {
      // a long literal alone: what is pending first, then the literal straight out, its last
      // bytes kept in the window (a lane writes every kWindow-th byte in order, so the last wins)
      int head = __shfl_sync(kAll, e.head, 0), len = __shfl_sync(kAll, e.len, 0);
      if (out_len - pos < len) return false;
      flush(window, out, flushed, pos, lane);
      // the literal's window writes reach slots the flush reads when it is over kWindow - kFlush long
      __syncwarp();
      const uint8_t* lit = in + p + head;
      for (int k = lane; k < len; k += 32) {
        uint8_t b = lit[k];
        out[pos + k] = b;
        window[(pos + k) & (kWindow - 1)] = b;
      }
      pos += len;
      flushed = pos;
      p += head + len;
      __syncwarp();
      continue;
    }
    if (out_len - pos < total) return false;
    bool copy = at >= 0 && e.type != 0;
    if (__any_sync(kAll, copy && (e.offset <= 0 || e.offset > pos + at))) return false;
    if (at >= 0) {
      if (e.type == 0) {
        const uint8_t* lit = stage + (p + lane + e.head - staged);
        for (int k = 0; k < e.len; k++) {
          window[(pos + at + k) & (kWindow - 1)] = lit[k];
          from[at + k] = at + k;
        }
      } else {
        for (int k = 0; k < e.len; k++) from[at + k] = at + k - e.offset;
      }
    }
    __syncwarp();
    // each round a source inside the batch that is not a literal is replaced by its own source,
    // always an earlier byte, so a chain of n bytes takes about log2(n) rounds
    for (int round = 0; round < kBatch; round++) {
      bool moved = false;
      for (int r = lane; r < total; r += 32) {
        int d = from[r];
        if (d >= 0 && d != r) {
          int dd = from[d];
          if (dd != d) {
            from[r] = dd;
            moved = true;
          }
        }
      }
      __syncwarp();
      if (!__any_sync(kAll, moved)) break;
    }
    // the window holds output from `reach` on, after this batch's writes
    int reach = pos + total - kWindow;
    for (int r = lane; r < total; r += 32) {
      int d = from[r];
      if (d != r) {
        int a = pos + d;
        window[(pos + r) & (kWindow - 1)] = a >= reach ? window[a & (kWindow - 1)] : out[a];
      }
    }
    pos += total;
    p += consumed;
    __syncwarp();
    if (pos - flushed >= kFlush) {
      flush(window, out, flushed, flushed + kFlush, lane);
      flushed += kFlush;
      __syncwarp();
    }
  }
  flush(window, out, flushed, pos, lane);
  return pos == out_len;
}

// A block's preamble: its output size, a varint of at most 5 bytes (32 bits), read by every lane;
// p is left at its first element.
__device__ __forceinline__ bool preamble(const uint8_t* in, int in_len, int& p, unsigned& declared) {
  declared = 0;
  for (int shift = 0;; shift += 7) {
    if (shift >= 35 || p >= in_len) return false;
    unsigned b = in[p++];
    if (shift == 28 && (b & 0x7fu) > 15) return false;
    declared |= (b & 0x7fu) << shift;
    if ((b & 0x80u) == 0) return true;
  }
}

__device__ bool unsnap(const uint8_t* in, int in_len, uint8_t* out, int out_len, int lane, uint8_t* window,
                       uint8_t* stage, int* from) {
  int p = 0;
  unsigned declared;
  if (!preamble(in, in_len, p, declared) || (long long)declared != out_len) return false;
  return unsnap_elements(in, p, in_len, out, out_len, lane, window, stage, from);
}

// Output bytes a fragment holds. Snappy's compressor (Google's library, which DuckDB, Arrow and
// parquet-mr use) compresses its input kFragment bytes at a time, each part on its own: no element
// spans two parts and no copy reaches into an earlier one. A page's parts can then decode at once,
// a warp each, where one warp would take the page's elements one batch after another; a launch
// lasts as long as its longest page, and pages run to megabytes.
constexpr int kFragment = 65536;

// What a warp's walk over a block's elements found (walk): where it stopped (the first element
// that starts at or past its stop), the output before that element, how many fragments it found
// opening, where its last chain began (a speculative walk's), and whether it met an element that
// is not whole or breaks the fragments' rules.
struct Walked {
  int q;
  long long pos;
  int opened;
  int restart;
  bool bad;
};

// How a walk treats the elements it meets. kSpeculate starts at a byte not known to begin one,
// marks the bytes its chain reaches, and starts a new chain past an element that is not whole;
// kJoin stops at the first element whose byte is marked (its q, with opened 1); kCount adds up
// their output; kPlace checks them against the fragments too and records where each fragment
// starts.
constexpr int kSpeculate = 0, kJoin = 1, kCount = 2, kPlace = 3;

// Walks the elements of a block [in, in + in_len) of out_len bytes in n fragments from input byte
// q, which begins one (speculating: is taken to), while they start before stop. pos is the output
// before q's element; starts[k] is where fragment k starts (kPlace); marks holds a bit for each
// byte of input, in[0]'s at bit0 (kSpeculate, kJoin).
//
// The walk takes 32 bytes of input at a time with no loop over their elements: every lane reads
// the element that would start at its byte and where the next one would; the elements that do
// start there are those reached from the first by following those links, found by pointer
// doubling (a mask of lanes reached, each round's jumps twice the last's), and each one's place in
// the output is a prefix sum over them. An element takes at least two bytes (a literal's tag and
// one byte, a copy's tag and offset), so at most 16 start in 32 bytes and four rounds reach them.
// Taking the elements one by one, a warp spent about 47 ns a byte of a page (session 45); this walk
// about 16 (session 52).
template <int kMode>
__device__ Walked walk(const uint8_t* in, int in_len, int out_len, int q, int stop, long long pos, int lane,
                       uint8_t* stage, int* starts, int n, unsigned* marks, long long bit0) {
  Walked w{q, pos, 0, q, false};
  int staged = 0, staged_end = 0;
  while (q < stop) {
    stage_from(in, in_len, q, lane, stage, staged, staged_end);
    Element e = element_at(stage, staged, staged_end, in_len, q + lane);
    bool here = q + lane < stop;
    // where the element after this lane's starts, relative to q; an element that is not whole
    // (kind 2) ends the chain, and is an error where the chain reaches it. A whole element ends by
    // in_len, so q + next fits an int.
    int next = here && e.kind != 2 ? lane + e.head + (e.type == 0 ? e.len : 0) : 32;
    int jump = next < 32 ? next : 32;
    unsigned reached = 1u;  // lane 0's byte starts an element
    for (int round = 0; round < 4; round++) {
      unsigned mine = ((reached >> lane) & 1u) && jump < 32 ? 1u << jump : 0u;
      reached |= __reduce_or_sync(kAll, mine);
      int further = __shfl_sync(kAll, jump, jump & 31);
      jump = jump < 32 ? further : 32;
    }
    bool member = here && ((reached >> lane) & 1u);
    unsigned members = __ballot_sync(kAll, member);
    // the last element here (lane 0's byte starts one) names where the next 32 bytes begin
    int last = 31 - __clz(members);
    if (kMode == kSpeculate) {
      if (lane == 0) {
        long long bit = bit0 + q;
        unsigned shift = (unsigned)(bit & 31);
        atomicOr(marks + (bit >> 5), members << shift);
        if (shift != 0) atomicOr(marks + (bit >> 5) + 1, members >> (32 - shift));
      }
      // a chain ends at an element that is not whole; the next one starts at the byte after it
      if (__shfl_sync(kAll, e.kind, last) == 2) {
        q += last + 1;
        w.restart = q;
      } else {
        q += __shfl_sync(kAll, next, last);
      }
      continue;
    }
    if (kMode == kJoin) {
      long long bit = bit0 + q + lane;
      unsigned met = __ballot_sync(kAll, member && ((marks[bit >> 5] >> (bit & 31)) & 1u));
      if (met != 0) {
        w.q = q + __ffs(met) - 1;
        w.opened = 1;
        return w;
      }
    }
    // this element's output, clipped past any page's size so that 32 of them sum in a long long
    long long len = member ? (e.len <= out_len ? e.len : (long long)out_len + 1) : 0;
    long long end = len;
    for (int d = 1; d < 32; d <<= 1) {
      long long before = __shfl_up_sync(kAll, end, d);
      if (lane >= d) end += before;
    }
    long long start = pos + end - len;
    end += pos;
    bool bad = member && e.kind == 2;
    if (kMode == kPlace) {
      long long fragment = start / kFragment, first = fragment * kFragment;
      // an element past the output, one that crosses into the next fragment, a copy from before its
      // fragment or of offset 0, or a fragment past the n said
      bad = bad || (member && (end > out_len || (fragment + 1 < n && end > first + kFragment) ||
                               (e.type != 0 && (e.offset <= 0 || e.offset > start - first)) || fragment >= n));
      bool opens = member && !bad && start == first && start > 0;
      if (opens) starts[fragment] = q + lane;
      w.opened += __popc(__ballot_sync(kAll, opens));
    }
    if (__any_sync(kAll, bad)) {
      w.bad = true;
      return w;
    }
    pos = __shfl_sync(kAll, end, last);
    q += __shfl_sync(kAll, next, last);
  }
  w.q = q;
  w.pos = pos;
  return w;
}

// The block's preamble, then its elements walked (kPlace) from the first while they start before
// stop: fragment 0's start goes to starts[0], and a block whose preamble is corrupt or does not
// declare out_len is bad.
__device__ Walked split_first(const uint8_t* in, int in_len, int out_len, int stop, int lane, uint8_t* stage,
                              int* starts, int n) {
  int q = 0;
  unsigned declared;
  if (!preamble(in, in_len, q, declared) || (long long)declared != out_len) return Walked{q, 0, 0, q, true};
  if (lane == 0) starts[0] = q;
  return walk<kPlace>(in, in_len, out_len, q, stop, 0, lane, stage, starts, n, nullptr, 0);
}

// Finds where each of a block's n = ceil(out_len / kFragment) fragments starts in its input
// (starts[k]) by walking its elements' headers only, with one warp. False unless the block decodes
// to out_len bytes with every element inside one fragment and every copy inside its own; such a
// block (another compressor's, or a corrupt one) decodes whole, by unsnap, which reports what is
// wrong.
__device__ bool split_fragments(const uint8_t* in, int in_len, int out_len, int lane, uint8_t* stage, int* starts,
                                int n) {
  Walked w = split_first(in, in_len, out_len, in_len, lane, stage, starts, n);
  return !w.bad && w.pos == out_len && w.opened + 1 == n;
}

// A long block is split by several warps at once, its input cut into m segments of seg bytes
// (segment j: [j * seg, segment_end), the first from the preamble): one warp walks a block's chain
// in order, and a launch lasts as long as its longest block (a string column's page of one row
// group runs to megabytes: TPC-H SF10's supplier comments). Segment 0's warp walks from the first
// element; every other segment's starts at the segment's first byte as if an element began there
// (kSpeculate), marking the bytes its chain reaches. Two chains that reach one byte go on as one,
// and a wrong start mostly meets the true chain within a few elements (not always: two-byte
// elements whose second bytes read as such elements too keep two chains apart): split_join
// follows the true chain from segment to segment, walking it only until it meets a marked byte,
// so that at worst it walks the block as one warp would. Then each
// segment counts its output from where the true chain enters it (kCount), split_bases sums those
// per segment, and each segment places its fragments (kPlace), with the same checks the one warp
// makes: a block splits here exactly where split_fragments splits it.
__device__ __forceinline__ int segment_end(int in_len, long long seg, int j, int m) {
  return j + 1 < m ? (int)((j + 1) * seg) : in_len;
}

// The true chain from where segment 0's walk stopped (stopped[0]) through segments 1 .. m - 1,
// with the warp: entry[j] is where it enters segment j (at or past the segment's end where a
// literal spans it). Within a segment it is walked (kJoin) until it reaches a byte that segment's
// speculative walk marked, then follows that walk's chain to where it stopped (stopped[j]); a
// chain that began before that walk's last restart (restart[j]) ended at an element that is not
// whole. False where the block does not split. Where the chains never meet, the join walks the
// whole block as one warp would.
__device__ bool split_join(const uint8_t* in, int in_len, long long seg, int m, const unsigned* marks, long long bit0,
                           const long long* stopped, const long long* restart, long long* entry, int lane,
                           uint8_t* stage) {
  long long e = stopped[0];
  long long ahead_stop = 0, ahead_restart = 0;  // lane k's: segment j0 + k's, 32 at a time
  for (int j = 1; j < m; j++) {
    int k = (j - 1) & 31;
    if (k == 0 && j + lane < m) {
      ahead_stop = stopped[j + lane];
      ahead_restart = restart[j + lane];
    }
    long long stop_j = __shfl_sync(kAll, ahead_stop, k), restart_j = __shfl_sync(kAll, ahead_restart, k);
    if (lane == 0) entry[j] = e;
    int end = segment_end(in_len, seg, j, m);
    if (e >= end) continue;
    // most chains meet the marks at once: one load, and no walk
    long long bit = bit0 + e;
    bool met = (marks[bit >> 5] >> (bit & 31)) & 1u;
    if (!met) {
      Walked w = walk<kJoin>(in, in_len, 0, (int)e, end, 0, lane, stage, nullptr, 0, const_cast<unsigned*>(marks), bit0);
      if (w.bad) return false;
      e = w.q;
      met = w.opened != 0;
    }
    if (met) {
      if (e < restart_j) return false;
      e = stop_j;
    }
  }
  return e == in_len;
}

// Turns each of m segments' output (counts[j]) into the output before it, with the warp, and
// gives their sum.
__device__ long long split_bases(long long* counts, int m, int lane) {
  long long carry = 0;
  for (int j0 = 0; j0 < m; j0 += 32) {
    int j = j0 + lane;
    long long c = j < m ? counts[j] : 0, sum = c;
    for (int d = 1; d < 32; d <<= 1) {
      long long before = __shfl_up_sync(kAll, sum, d);
      if (lane >= d) sum += before;
    }
    if (j < m) counts[j] = carry + sum - c;
    carry += __shfl_sync(kAll, sum, 31);
  }
  return carry;
}

// [unsnap end]

// Decodes `count` values of bit width w (0..32) of Parquet's RLE / bit-packed hybrid from [p, end)
// with the whole warp: run(i, n, v) for a repeated run, one(i, v) for each bit-packed value (lane
// by lane). False when the runs end before `count` values or are malformed. Each run consumes at
// least one byte, so the loop ends.
template <class Run, class One>
__device__ bool hybrid(const uint8_t* p, const uint8_t* end, int w, long long count, int lane, Run run, One one) {
  long long i = 0;
  int value_bytes = (w + 7) / 8;
  while (i < count) {
    unsigned long long h;
    if (!varint(p, end, h)) return false;
    if (h & 1) {
      long long groups = (long long)(h >> 1);
      long long bytes = groups * w;
      if (groups == 0 || end - p < bytes) return false;
      long long n = groups * 8;
      long long take = n < count - i ? n : count - i;
      for (long long k = lane; k < take; k += 32) {
        long long bit = k * w;
        unsigned long long word = 0;
        long long first = bit >> 3;
        // the bytes of this value, inside the run (its bits end within groups * w bytes)
        for (int b = 0; b < 5 && first + b < bytes; b++) word |= (unsigned long long)p[first + b] << (8 * b);
        unsigned v = w == 0 ? 0u : (unsigned)((word >> (bit & 7)) & ((w == 32) ? 0xffffffffull : ((1ull << w) - 1)));
        one(i + k, v);
      }
      p += bytes;
      i += take;
    } else {
      long long n = (long long)(h >> 1);
      if (end - p < value_bytes) return false;
      unsigned v = 0;
      for (int b = 0; b < value_bytes; b++) v |= (unsigned)p[b] << (8 * b);
      p += value_bytes;
      if (n == 0) continue;
      long long take = n < count - i ? n : count - i;
      run(i, take, v);
      i += take;
    }
  }
  return true;
}

// Sets validity bits [from, from + n) with the warp (words shared with other pages by atomicOr).
__device__ void set_bits(uint32_t* validity, long long from, long long n, int lane) {
  long long to = from + n;
  long long first_word = from >> 5, last_word = (to - 1) >> 5;
  for (long long wd = first_word + lane; wd <= last_word; wd += 32) {
    long long lo = wd << 5 > from ? wd << 5 : from;
    long long hi = (wd << 5) + 32 < to ? (wd << 5) + 32 : to;
    uint32_t bits = (hi - lo == 32) ? 0xffffffffu : (((1u << (hi - lo)) - 1u) << (lo & 31));
    if (hi - lo == 32) {
      validity[wd] = bits;
    } else {
      atomicOr(&validity[wd], bits);
    }
  }
}

// A stored little-endian value of `width` bytes, sign-extended: PLAIN values follow the levels at
// any byte, so a value is read whole only where it is aligned.
__device__ __forceinline__ long long load(const uint8_t* value, int width) {
  if (width == 4) {
    if ((reinterpret_cast<uintptr_t>(value) & 3) == 0) return *reinterpret_cast<const int32_t*>(value);
    return (int32_t)(value[0] | (value[1] << 8) | (value[2] << 16) | ((unsigned)value[3] << 24));
  }
  if ((reinterpret_cast<uintptr_t>(value) & 7) == 0) return *reinterpret_cast<const long long*>(value);
  unsigned long long v = 0;
  for (int b = 0; b < 8; b++) v |= (unsigned long long)value[b] << (8 * b);
  return (long long)v;
}

// Row `row` of a column of out_width bytes (4 or 8; a 4-byte value into 8 is sign-extended).
__device__ __forceinline__ void store(uint8_t* out, int out_width, long long row, const uint8_t* value, int in_width) {
  long long v = load(value, in_width);
  if (out_width == 4) {
    reinterpret_cast<int32_t*>(out)[row] = (int32_t)v;
  } else {
    reinterpret_cast<long long*>(out)[row] = v;
  }
}
}  // namespace gpudf_parquet

using namespace gpudf_parquet;

// Where each Snappy page of more than one fragment splits (split_fragments), by the segments of
// seg bytes of input its page is cut into (segment_end): segs[p] is page p's first segment
// (segs[pages] their count), segs[pages + 1 + s] segment s's page. frags[p] is page p's first
// fragment among all the pages' (frags[pages] their count), starts[f] where fragment f starts in
// its page's bytes, and split[p] = 1 where the page splits (each such page counted in error[1]:
// the bytes after the problem's code). The host walks some pages itself (SnappySplit.java, the
// twin of split_fragments) and gives their starts with split[p] 1, or 2 where such a page does
// not split; those and the pages it leaves whole have no segments. walked holds four long longs a
// segment (where its walk stopped, its last restart, where the true chain enters it, its output),
// each [segments] long; state two ints a page of more than one segment (whether it is found not
// to split, fragments found opening); marks a bit a byte of src, zeroed.
struct Split {
  const uint8_t* src;
  const long long* table;
  const int* segs;
  long long pages, segments, seg;
  const int* frags;
  int *starts, *split;
  long long* walked;
  unsigned* marks;
  int *state, *error;
};

// Segment s of a launch: its page p (g, its bytes from in), its place j among the page's m
// segments, the page's n fragments, and where the segment's input ends.
struct Segment {
  int p, j, m, n;
  Page g;
  const uint8_t* in;
  int in_len, out_len, end;
};

__device__ __forceinline__ Segment segment_at(const Split& t, long long s) {
  Segment x;
  x.p = t.segs[t.pages + 1 + s];
  x.j = (int)(s - t.segs[x.p]);
  x.m = t.segs[x.p + 1] - t.segs[x.p];
  x.n = t.frags[x.p + 1] - t.frags[x.p];
  x.g = page_at(t.table, x.p);
  x.in = t.src + x.g.src;
  x.in_len = (int)x.g.src_len;
  x.out_len = (int)x.g.dst_len;
  x.end = segment_end(x.in_len, t.seg, x.j, x.m);
  return x;
}

// A page of one segment is walked whole and done; segment 0 of a longer page from its first
// element, the others speculatively.
extern "C" __global__ void parquet_split_walk_kernel(Split t) {
  __shared__ uint8_t stage[kStage];
  long long s = blockIdx.x;
  int lane = threadIdx.x & 31;
  if (s >= t.segments) return;
  Segment x = segment_at(t, s);
  int p = x.p, j = x.j, m = x.m, n = x.n, in_len = x.in_len, out_len = x.out_len, end = x.end;
  const uint8_t* in = x.in;
  if (m == 1) {
    if (split_fragments(in, in_len, out_len, lane, stage, t.starts + t.frags[p], n) && lane == 0) {
      t.split[p] = 1;
      atomicAdd(t.error + 1, 1);
    }
  } else if (j == 0) {
    Walked w = split_first(in, in_len, out_len, end, lane, stage, t.starts + t.frags[p], n);
    if (lane == 0) {
      t.walked[s] = w.q;
      t.walked[3 * t.segments + s] = w.pos;
      t.state[2 * p] = w.bad;
      t.state[2 * p + 1] = w.opened;
    }
  } else {
    Walked w = walk<kSpeculate>(in, in_len, out_len, (int)(j * t.seg), end, 0, lane, stage, nullptr, n, t.marks, x.g.src);
    if (lane == 0) {
      t.walked[s] = w.q;
      t.walked[t.segments + s] = w.restart;
    }
  }
}

// A warp a page of more than one segment, not yet found not to split: phase 0 joins its segments'
// chains (split_join), phase 1 sums their outputs (split_bases), phase 2 says whether it
// splits.
extern "C" __global__ void parquet_split_pages_kernel(Split t, int phase) {
  __shared__ uint8_t stage[kStage];
  long long p = blockIdx.x;
  int lane = threadIdx.x & 31;
  if (p >= t.pages) return;
  int first = t.segs[p], m = t.segs[p + 1] - first;
  if (m < 2 || t.state[2 * p] != 0) return;
  Page g = page_at(t.table, p);
  bool bad = false;
  if (phase == 0) {
    bad = !split_join(t.src + g.src, (int)g.src_len, t.seg, m, t.marks, g.src, t.walked + first,
                      t.walked + t.segments + first, t.walked + 2 * t.segments + first, lane, stage);
  } else if (phase == 1) {
    bad = split_bases(t.walked + 3 * t.segments + first, m, lane) != g.dst_len;
  } else if (lane == 0 && t.state[2 * p + 1] + 1 == t.frags[p + 1] - t.frags[p]) {
    t.split[p] = 1;
    atomicAdd(t.error + 1, 1);
  }
  if (bad && lane == 0) t.state[2 * p] = 1;
}

// A warp a segment past the first of a page not yet found not to split, from where the true chain
// enters it: its output counted (place 0), or its fragments placed (1) after the page's.
extern "C" __global__ void parquet_split_segments_kernel(Split t, int place) {
  __shared__ uint8_t stage[kStage];
  long long s = blockIdx.x;
  int lane = threadIdx.x & 31;
  if (s >= t.segments) return;
  Segment x = segment_at(t, s);
  int p = x.p, n = x.n, in_len = x.in_len, out_len = x.out_len, end = x.end;
  const uint8_t* in = x.in;
  // a page another segment finds not to split during the launch is walked on, to no harm
  if (x.j == 0 || t.state[2 * p] != 0) return;
  int entry = (int)t.walked[2 * t.segments + s];
  long long* output = t.walked + 3 * t.segments + s;
  if (place == 0) {
    Walked w = walk<kCount>(in, in_len, out_len, entry, end, 0, lane, stage, nullptr, n, nullptr, 0);
    if (lane == 0) {
      *output = w.pos;
      if (w.bad) t.state[2 * p] = 1;
    }
  } else {
    Walked w = walk<kPlace>(in, in_len, out_len, entry, end, *output, lane, stage, t.starts + t.frags[p], n, nullptr, 0);
    if (lane == 0) {
      if (w.bad) {
        t.state[2 * p] = 1;
      } else {
        atomicAdd(t.state + 2 * p + 1, w.opened);
      }
    }
  }
}

// Decompresses (or copies) each page of the table into `scratch` at its dst: a block of one warp
// per fragment (frags[pages + 1 + f] names fragment f's page), with its window and stage in
// shared memory. A page that did not split decodes whole, by the warp of its first fragment.
extern "C" __global__ void parquet_unsnap_kernel(const uint8_t* __restrict__ src, uint8_t* __restrict__ scratch,
                                                 const long long* __restrict__ table, long long pages,
                                                 const int* __restrict__ frags, const int* __restrict__ starts,
                                                 const int* __restrict__ split, long long fragments, int* error) {
  __shared__ uint8_t window[kWindow];
  __shared__ uint8_t stage[kStage];
  __shared__ int from[kBatch];
  long long f = blockIdx.x;
  int lane = threadIdx.x & 31;
  if (f >= fragments) return;
  int p = frags[pages + 1 + f];
  int k = (int)(f - frags[p]), n = frags[p + 1] - frags[p];
  Page g = page_at(table, p);
  long long at = (long long)k * kFragment;
  int len = (int)(g.dst_len - at < kFragment ? g.dst_len - at : kFragment);
  bool ok;
  if (g.codec == kSnappy) {
    if (split[p] == 1) {
      ok = unsnap_elements(src + g.src, starts[f], k + 1 < n ? starts[f + 1] : (int)g.src_len, scratch + g.dst + at, len,
                           lane, window, stage, from);
    } else if (k == 0) {
      ok = unsnap(src + g.src, (int)g.src_len, scratch + g.dst, (int)g.dst_len, lane, window, stage, from);
    } else {
      return;
    }
  } else {
    ok = g.src_len == g.dst_len;
    if (ok) {
      for (int i = lane; i < len; i += 32) scratch[g.dst + at + i] = src[g.src + at + i];
    }
  }
  if (!ok && lane == 0) fail(error, g.codec == kSnappy ? kBadSnappy : kBadLength, p);
}

// Bytes of a page of PLAIN strings a warp stages in shared memory at once (plain_strings).
constexpr int kPlainStage = 4096;
// Warps a block of parquet_decode_kernel holds (ParquetDecode.WARPS_PER_BLOCK).
constexpr int kDecodeWarps = 4;

// A page of PLAIN strings (each value its 4-byte length, then its bytes), in the column's bytes
// from g.base of the decompressed pages. Each value's place depends on the one before, so lane 0
// walks them in order, but over a stage of the page's bytes that the warp copies to shared memory
// at once: a walk through global memory waited out a load's latency per row (TPC-H SF10's supplier
// table, 100,000 rows a page, took most of a cold q2's 36 ms of decoding, session 45). Row r takes
// the pair of offsets (2r, 2r + 1) of the column's pairs: [start, end) of its value (a NULL row an
// empty pair where the next value would start), and the code 2r (-1 for NULL); the gather by code
// copies the values out, and the odd entries (the next value's length) are never gathered. Offsets
// grow from page to page, as the pages lie in order.
__device__ void plain_strings(const Page& g, const uint8_t* scratch, const uint8_t* data, const uint8_t* end,
                              const uint32_t* validity, long long p, int* error, int lane, uint8_t* stage) {
  int32_t* codes = reinterpret_cast<int32_t*>(g.out);
  int32_t* pairs = g.indexes;
  long long bytes = end - data, at = 0, row = 0;
  int32_t first = (int32_t)((data - scratch) - g.base);
  bool bad = false;
  // each round stages the bytes from the next value's length on and walks the values whose length
  // lies there; a round takes at least one row, as the bytes left hold a length (or it fails)
  while (row < g.rows && !bad) {
    long long staged_end = bytes - at > kPlainStage ? at + kPlainStage : bytes;
    __syncwarp();
    for (long long k = lane; k < staged_end - at; k += 32) stage[k] = data[at + k];
    __syncwarp();
    if (lane == 0) {
      long long staged = at;
      for (; row < g.rows; row++) {
        long long r = g.row0 + row;
        int32_t start = first + (int32_t)at;
        if (g.levels && !gpudf::is_valid(validity, r)) {
          pairs[2 * r] = start;
          pairs[2 * r + 1] = start;
          codes[r] = -1;
          continue;
        }
        if (bytes - at < 4) {
          bad = true;
          break;
        }
        if (at + 4 > staged_end) break;
        const uint8_t* h = stage + (at - staged);
        unsigned len = h[0] | (h[1] << 8) | (h[2] << 16) | ((unsigned)h[3] << 24);
        if (len > (unsigned long long)(bytes - at - 4)) {
          bad = true;
          break;
        }
        pairs[2 * r] = start + 4;
        pairs[2 * r + 1] = start + 4 + (int32_t)len;
        codes[r] = (int32_t)(2 * r);
        at += 4 + len;
      }
    }
    row = __shfl_sync(kAll, row, 0);
    at = __shfl_sync(kAll, at, 0);
    bad = __shfl_sync(kAll, bad, 0);
  }
  if (bad && lane == 0) fail(error, kShortValues, p);
}

// Decodes each data page (a warp per page) into its column's rows (out_width bytes each, from
// stored values of in_width bytes) and validity (zeroed by the caller; bits set for rows present),
// and writes the page's count of present values to valid[p]. A page with NULL rows puts its
// dictionary indexes in its column's index scratch (one int32 a row) first.
extern "C" __global__ void parquet_decode_kernel(const uint8_t* __restrict__ scratch, const long long* __restrict__ table,
                                                 long long pages, long long* valid, int* error) {
  __shared__ uint8_t plain_stage[kDecodeWarps][kPlainStage];
  long long p = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (p >= pages) return;
  Page g = page_at(table, p);
  uint8_t* out = g.out;
  uint32_t* validity = g.validity;
  int32_t* indexes = g.indexes;
  int in_width = g.in_width;
  int ow = g.out_width;
  if (g.kind == kDictionaryPage) {
    if (lane == 0) valid[p] = 0;
    return;
  }
  const uint8_t* data = scratch + g.dst;
  const uint8_t* end = data + g.dst_len;
  long long present = g.rows;
  if (g.levels) {
    // V1 page: a 4-byte length, then the levels (bit width 1: a flat optional column)
    if (g.dst_len < 4) {
      if (lane == 0) fail(error, kBadLevels, p);
      return;
    }
    unsigned len = data[0] | (data[1] << 8) | (data[2] << 16) | ((unsigned)data[3] << 24);
    if (len > g.dst_len - 4) {
      if (lane == 0) fail(error, kBadLevels, p);
      return;
    }
    long long mine = 0;
    bool ok = hybrid(
        data + 4, data + 4 + len, 1, g.rows, lane,
        [&](long long i, long long n, unsigned v) {
          if (v > 1) {
            mine = -(1ll << 40);
          } else if (v == 1) {
            set_bits(validity, g.row0 + i, n, lane);
            if (lane == 0) mine += n;
          }
        },
        [&](long long i, unsigned v) {
          if (v) {
            atomicOr(&validity[(g.row0 + i) >> 5], 1u << ((g.row0 + i) & 31));
            mine++;
          }
        });
    for (int d = 16; d > 0; d >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, d);
    if (!ok || mine < 0) {
      if (lane == 0) fail(error, kBadLevels, p);
      return;
    }
    present = mine;
    data += 4 + len;
  } else {
    set_bits(validity, g.row0, g.rows, lane);
  }
  if (lane == 0) valid[p] = present;
  // rows present take the page's values in order: value k goes to the k-th row whose bit is set
  bool dense = present == g.rows;
  long long codes_base = 0;
  const uint8_t* values;
  int width = in_width;
  if (g.kind == kPlainPage) {
    if ((end - data) / in_width < present) {
      if (lane == 0) fail(error, kShortValues, p);
      return;
    }
    if (g.codes) {
      // the levels' bits, set by every lane, are read by lane 0
      __syncwarp();
      plain_strings(g, scratch, data, end, validity, p, error, lane, plain_stage[threadIdx.x >> 5]);
      return;
    }
    values = data;
    if (dense) {
      for (long long k = lane; k < present; k += 32) store(out, ow, g.row0 + k, values + k * in_width, in_width);
      return;
    }
  } else {
    Page d = page_at(table, g.dict);
    long long dict_count = d.rows;
    if ((d.dst_len / in_width) < dict_count || end - data < 1 || data[0] > 32) {
      if (lane == 0) fail(error, kBadIndexes, p);
      return;
    }
    const uint8_t* dict = scratch + d.dst;
    int w = data[0];
    bool range_ok = true;
    codes_base = d.base;
    // a page with no NULL row looks its values up at once; else its indexes wait for their rows
    auto put = [&](long long i, unsigned v) {
      if (dense && g.codes) {
        reinterpret_cast<int32_t*>(out)[g.row0 + i] = (int32_t)(codes_base + v);
      } else if (dense) {
        store(out, ow, g.row0 + i, dict + (long long)v * in_width, in_width);
      } else {
        indexes[g.row0 + i] = (int32_t)v;
      }
    };
    bool ok = hybrid(
        data + 1, end, w, present, lane,
        [&](long long i, long long n, unsigned v) {
          if (v >= dict_count) {
            range_ok = false;
            return;
          }
          for (long long k = lane; k < n; k += 32) put(i + k, v);
        },
        [&](long long i, unsigned v) {
          if (v >= dict_count) {
            range_ok = false;
            return;
          }
          put(i, v);
        });
    range_ok = __all_sync(0xffffffffu, range_ok);
    if (!ok || !range_ok) {
      if (lane == 0) fail(error, ok ? kIndexRange : kBadIndexes, p);
      return;
    }
    if (dense) return;
    values = dict;
    width = -1;  // values come through indexes
  }
  // a page with NULL rows: walk its rows 32 at a time, counting present ones by ballot
  __syncwarp();
  long long k0 = 0;
  for (long long base = 0; base < g.rows; base += 32) {
    long long r = base + lane;
    bool here = r < g.rows && gpudf::is_valid(validity, g.row0 + r);
    unsigned mask = __ballot_sync(0xffffffffu, here);
    long long k = k0 + __popc(mask & ((1u << lane) - 1u));
    if (r < g.rows) {
      if (g.codes) {
        // a NULL row's code is -1: the gather of the dictionary by code makes it NULL
        reinterpret_cast<int32_t*>(out)[g.row0 + r] = here ? (int32_t)(codes_base + indexes[g.row0 + k]) : -1;
      } else if (here) {
        const uint8_t* v = width < 0 ? values + (long long)indexes[g.row0 + k] * in_width : values + k * in_width;
        store(out, ow, g.row0 + r, v, in_width);
      } else if (ow == 4) {
        reinterpret_cast<int32_t*>(out)[g.row0 + r] = 0;
      } else {
        reinterpret_cast<int64_t*>(out)[g.row0 + r] = 0;
      }
    }
    k0 += __popc(mask);
  }
}

