// The warp code of parquet_decode.cu's Snappy decompression (between its [unsnap begin] and
// [unsnap end] markers, included as unsnap_section.inc) run on the host: 32 threads play the
// lanes, and the warp intrinsics it uses are barriers over a shared slot array, so a lane that
// reads another's value or shared memory before a __syncwarp sees what the GPU would. Checked
// against libsnappy's compressor on blocks of several shapes and sizes, with truncated blocks
// and wrong sizes, which must be rejected. Built and run by scripts/emulate-unsnap.sh.
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <snappy.h>

#define __device__
#define __forceinline__ inline
static std::barrier<>* warp;
static thread_local int tl_lane;
static int slots[32];
static void __syncwarp() { warp->arrive_and_wait(); }
static int __shfl_sync(unsigned, int v, int src) {
  warp->arrive_and_wait();
  slots[tl_lane] = v;
  warp->arrive_and_wait();
  int r = slots[src & 31];
  warp->arrive_and_wait();
  return r;
}
static long long __shfl_up_sync(unsigned, long long v, int delta) {
  static long long wide[32];
  warp->arrive_and_wait();
  wide[tl_lane] = v;
  warp->arrive_and_wait();
  long long r = tl_lane >= delta ? wide[tl_lane - delta] : v;
  warp->arrive_and_wait();
  return r;
}
static unsigned __ballot_sync(unsigned, bool v) {
  warp->arrive_and_wait();
  slots[tl_lane] = v;
  warp->arrive_and_wait();
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= (slots[i] != 0 ? 1u : 0u) << i;
  warp->arrive_and_wait();
  return r;
}
static unsigned __reduce_or_sync(unsigned, unsigned v) {
  warp->arrive_and_wait();
  slots[tl_lane] = (int)v;
  warp->arrive_and_wait();
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= (unsigned)slots[i];
  warp->arrive_and_wait();
  return r;
}
static long long __shfl_sync(unsigned, long long v, int src) {
  static long long wide[32];
  warp->arrive_and_wait();
  wide[tl_lane] = v;
  warp->arrive_and_wait();
  long long r = wide[src & 31];
  warp->arrive_and_wait();
  return r;
}
// only lane 0 of the one warp running calls it
static unsigned atomicOr(unsigned* a, unsigned v) {
  unsigned old = *a;
  *a = old | v;
  return old;
}
static int __ffs(unsigned v) { return __builtin_ffs((int)v); }
static int __clz(unsigned v) { return v == 0 ? 32 : __builtin_clz(v); }
static int __popc(unsigned v) { return __builtin_popcount(v); }
static bool __any_sync(unsigned, bool v) {
  warp->arrive_and_wait();
  slots[tl_lane] = v;
  warp->arrive_and_wait();
  bool r = false;
  for (int i = 0; i < 32; i++) r |= slots[i] != 0;
  warp->arrive_and_wait();
  return r;
}
#include "unsnap_section.inc"

// Runs unsnap with 32 lanes; every lane must give the same verdict.
static bool run(const std::string& in, std::vector<uint8_t>& out) {
  std::barrier<> b(32);
  warp = &b;
  static uint8_t window[kWindow], stage[kStage];
  static int from[kBatch];
  bool verdict[32];
  std::vector<std::thread> lanes;
  for (int l = 0; l < 32; l++) {
    lanes.emplace_back([&, l] {
      tl_lane = l;
      verdict[l] = unsnap((const uint8_t*)in.data(), (int)in.size(), out.data(), (int)out.size(), l, window, stage, from);
    });
  }
  for (auto& t : lanes) t.join();
  for (int l = 1; l < 32; l++) {
    if (verdict[l] != verdict[0]) {
      std::printf("lanes disagree\n");
      return false;
    }
  }
  return verdict[0];
}

// Runs f(lane) on 32 threads as one warp; false unless every lane returns the same.
template <class F>
static bool warp_run(F f, bool& verdict) {
  std::barrier<> b(32);
  warp = &b;
  bool v[32];
  std::vector<std::thread> lanes;
  for (int l = 0; l < 32; l++) {
    lanes.emplace_back([&, l] {
      tl_lane = l;
      v[l] = f(l);
    });
  }
  for (auto& t : lanes) t.join();
  verdict = v[0];
  for (int l = 1; l < 32; l++) {
    if (v[l] != v[0]) return false;
  }
  return true;
}

// Splits the block as parquet_split_*_kernel do, its input cut into segments of seg bytes, each
// kernel's warps one after another; the verdict, and the starts where it splits, must be
// split_fragments' (run on the same block). bit0 puts the block at an odd bit of the marks.
static bool segmented_run(const std::string& block, int out_len, long long seg, std::vector<int>& starts, bool& agree) {
  const uint8_t* in = (const uint8_t*)block.data();
  int in_len = (int)block.size(), n = out_len == 0 ? 1 : (out_len + kFragment - 1) / kFragment;
  int m = (int)std::max<long long>(1, (in_len + seg - 1) / seg);
  const long long bit0 = 13;
  std::vector<unsigned> marks((bit0 + in_len) / 32 + 2, 0u);
  std::vector<long long> stopped(m), restart(m), entry(m), counts(m);
  static uint8_t stage[kStage];
  starts.assign(n, -1);
  bool bad = false, v;
  int opened = 0;
  agree = true;
  for (int j = 0; j < m; j++) {
    int end = segment_end(in_len, seg, j, m);
    agree &= warp_run([&](int lane) {
      if (j == 0) {
        Walked w = split_first(in, in_len, out_len, end, lane, stage, starts.data(), n);
        if (lane == 0) {
          stopped[0] = w.q;
          counts[0] = w.pos;
          bad = w.bad;
          opened = w.opened;
        }
        return w.bad;
      }
      Walked w = walk<kSpeculate>(in, in_len, out_len, (int)(j * seg), end, 0, lane, stage, nullptr, n, marks.data(), bit0);
      if (lane == 0) {
        stopped[j] = w.q;
        restart[j] = w.restart;
      }
      return w.bad;
    }, v);
  }
  if (m == 1) return !bad && counts[0] == out_len && opened + 1 == n;
  if (bad) return false;
  agree &= warp_run([&](int lane) {
    return split_join(in, in_len, seg, m, marks.data(), bit0, stopped.data(), restart.data(), entry.data(), lane, stage);
  }, v);
  if (!v) return false;
  for (int j = 1; j < m; j++) {
    int end = segment_end(in_len, seg, j, m);
    agree &= warp_run([&](int lane) {
      Walked w = walk<kCount>(in, in_len, out_len, (int)entry[j], end, 0, lane, stage, nullptr, n, nullptr, 0);
      if (lane == 0) counts[j] = w.pos;
      return w.bad;
    }, v);
    if (v) return false;
  }
  long long total = 0;
  agree &= warp_run([&](int lane) {
    long long t = split_bases(counts.data(), m, lane);
    if (lane == 0) total = t;
    return t == out_len;
  }, v);
  if (!v) return false;
  for (int j = 1; j < m; j++) {
    int end = segment_end(in_len, seg, j, m);
    agree &= warp_run([&](int lane) {
      Walked w = walk<kPlace>(in, in_len, out_len, (int)entry[j], end, counts[j], lane, stage, starts.data(), n, nullptr, 0);
      if (lane == 0) opened += w.bad ? 0 : w.opened;
      return w.bad;
    }, v);
    if (v) return false;
  }
  return opened + 1 == n;
}

// The block's split by split_fragments and by segments of each size in segs: the same verdict,
// and the same starts where it splits; false (saying why) otherwise.
static bool splits_agree(const std::string& block, int out_len, std::initializer_list<long long> segs, const char* what) {
  int n = out_len == 0 ? 1 : (out_len + kFragment - 1) / kFragment;
  std::vector<int> whole(n, -1);
  bool expect;
  static uint8_t stage[kStage];
  if (!warp_run([&](int lane) {
        return split_fragments((const uint8_t*)block.data(), (int)block.size(), out_len, lane, stage,
                               whole.data(), n);
      }, expect)) {
    std::printf("%s: lanes disagree on the whole split\n", what);
    return false;
  }
  for (long long seg : segs) {
    std::vector<int> starts;
    bool agree;
    bool got = segmented_run(block, out_len, seg, starts, agree);
    if (!agree || got != expect || (got && starts != whole)) {
      std::printf("%s: segments of %lld bytes: %s (whole: %s)%s\n", what, seg, got ? "split" : "not split",
                  expect ? "split" : "not split", agree ? (got == expect ? ", other starts" : "") : ", lanes disagree");
      return false;
    }
  }
  return true;
}

// Splits the block with 32 lanes (split_fragments), then decodes each fragment on its own
// (unsnap_elements); false when it does not split. A split block must decode as written.
static bool split_run(const std::string& in, std::vector<uint8_t>& out) {
  int n = out.empty() ? 1 : (int)((out.size() + kFragment - 1) / kFragment);
  std::vector<int> starts(n, -1);
  bool verdict[32];
  {
    std::barrier<> b(32);
    warp = &b;
    static uint8_t stage[kStage];
    std::vector<std::thread> lanes;
    for (int l = 0; l < 32; l++) {
      lanes.emplace_back([&, l] {
        tl_lane = l;
        verdict[l] = split_fragments((const uint8_t*)in.data(), (int)in.size(), (int)out.size(), l, stage, starts.data(), n);
      });
    }
    for (auto& t : lanes) t.join();
  }
  for (int l = 1; l < 32; l++) {
    if (verdict[l] != verdict[0]) {
      std::printf("lanes disagree on the split\n");
      return false;
    }
  }
  if (!verdict[0]) return false;
  for (int k = 0; k < n; k++) {
    std::barrier<> b(32);
    warp = &b;
    static uint8_t window[kWindow], stage[kStage];
    static int from[kBatch];
    int len = (int)std::min<long long>(kFragment, (long long)out.size() - (long long)k * kFragment);
    int end = k + 1 < n ? starts[k + 1] : (int)in.size();
    bool ok[32];
    std::vector<std::thread> lanes;
    for (int l = 0; l < 32; l++) {
      lanes.emplace_back([&, l] {
        tl_lane = l;
        ok[l] = unsnap_elements((const uint8_t*)in.data(), starts[k], end, out.data() + (long long)k * kFragment, len, l,
                                window, stage, from);
      });
    }
    for (auto& t : lanes) t.join();
    if (!ok[0]) {
      std::printf("fragment %d of %d did not decode\n", k, n);
      return false;
    }
  }
  return true;
}

int main(int argc, char** argv) {
  int blocks = argc > 1 ? std::atoi(argv[1]) : 100;
  std::mt19937_64 rng(42);
  int failures = 0;
  for (int t = 0; t < blocks; t++) {
    int n = t < 40 ? t : t % 10 == 0 ? (int)(rng() % 300000) : t % 10 == 1 ? kFragment * (1 + t % 3) - 1 + t % 3
        : (int)(rng() % 20000);
    std::string raw(n, '\0');
    // the blocks of more than one fragment (t % 10 < 2) take every shape in turn too
    int shape = t >= 40 && t % 10 < 2 ? (t / 10 + t % 10) % 5 : t % 5;
    for (int i = 0; i < n; i++) {
      if (shape == 0) raw[i] = (char)(rng() % 256);  // incompressible: long literals
      else if (shape == 1) raw[i] = (i % 8 < 3) ? (char)(rng() % 256) : (char)(i / 100000);  // 8-byte integers
      else if (shape == 2) raw[i] = (char)('a' + rng() % 3);  // short copies
      else if (shape == 3) raw[i] = (char)((i / 1000) % 256);  // runs: copies that overlap themselves
      else raw[i] = i < 20000 ? (char)(rng() % 256) : raw[i - 20000 + (i % 7 == 0)];  // copies from past the window
    }
    std::string block;
    snappy::Compress(raw.data(), raw.size(), &block);
    std::vector<uint8_t> out(n);
    if (!run(block, out) || std::memcmp(out.data(), raw.data(), n) != 0) {
      std::printf("FAIL: block %d (%d bytes, shape %d) not decompressed as written\n", t, n, shape);
      failures++;
    }
    // libsnappy's blocks of more than one fragment split, and their fragments decode as written
    if (n > kFragment) {
      std::vector<uint8_t> parts(n);
      if (!split_run(block, parts) || std::memcmp(parts.data(), raw.data(), n) != 0) {
        std::printf("FAIL: block %d (%d bytes, shape %d) not split and decoded as written\n", t, n, shape);
        failures++;
      }
      // cut into segments, it splits where one warp splits it: as written, cut short, for a size it
      // does not declare, and with a byte changed
      long long fine = std::max<long long>(48, (long long)block.size() / 100);
      if (!splits_agree(block, n, {fine, (long long)block.size() / 9 + 1, 4096LL}, "as written")
          || !splits_agree(block.substr(0, block.size() - 1), n, {fine}, "cut") || !splits_agree(block, n + 1, {fine}, "longer")) {
        std::printf("FAIL: block %d (%d bytes, shape %d) split by segments otherwise\n", t, n, shape);
        failures++;
      }
      for (int c = 0; c < 2; c++) {
        std::string changed = block;
        changed[rng() % changed.size()] ^= (char)(1 + rng() % 255);
        if (!splits_agree(changed, n, {fine}, "changed")) {
          std::printf("FAIL: block %d with a byte changed split by segments otherwise\n", t);
          failures++;
        }
      }
      std::vector<uint8_t> wrong(n + 1);
      if (split_run(block, wrong) || split_run(block.substr(0, block.size() - 1), parts)) {
        std::printf("FAIL: block %d split for a size it does not declare, or cut short\n", t);
        failures++;
      }
      // the same bytes as one literal (as another compressor may write them) span the fragments: not split
      std::string literal;
      for (unsigned v = (unsigned)n; v >= 0x80; v >>= 7) literal += (char)(v | 0x80);
      literal += (char)(n >> (7 * ((int)literal.size())));
      literal += (char)(63 << 2);
      for (int b = 0; b < 4; b++) literal += (char)((unsigned)(n - 1) >> (8 * b));
      literal += raw;
      std::vector<uint8_t> whole(n);
      if (split_run(literal, parts) || !run(literal, whole) || std::memcmp(whole.data(), raw.data(), n) != 0) {
        std::printf("FAIL: block %d as one literal split, or not decoded whole\n", t);
        failures++;
      }
    }
    std::vector<uint8_t> longer(n + 1);
    if (run(block, longer)) {
      std::printf("FAIL: block %d accepted for a size it does not declare\n", t);
      failures++;
    }
    if (n > 0 && run(block.substr(0, block.size() - 1), out)) {
      std::printf("FAIL: block %d accepted without its last byte\n", t);
      failures++;
    }
  }
  // one-byte literals whose data bytes are tags too: a chain from an odd byte never meets the true
  // one, and the join takes every element of every segment one by one
  {
    int n = kFragment + 70;
    std::string block;
    for (unsigned v = (unsigned)n; v >= 0x80; v >>= 7) block += (char)(v | 0x80);
    block += (char)(n >> (7 * ((int)block.size())));
    if (block.size() % 2 == 0) std::printf("note: the preamble is even\n");
    for (int i = 0; i < n; i++) block += std::string(2, '\0');
    std::vector<uint8_t> out(n);
    if (!splits_agree(block, n, {512}, "one-byte literals") || !split_run(block, out)) {
      std::printf("FAIL: a block of one-byte literals split otherwise, or not at all\n");
      failures++;
    }
  }
  std::printf("%d blocks, %d failures\n", blocks, failures);
  return failures != 0;
}
