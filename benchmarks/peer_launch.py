"""Peer figures for LaunchBenchmark, in the same run: CuPy's fixed costs per operation (an empty
raw kernel with 4 and 15 arguments queued, a launch waited for, one int64 read back, a 1 MiB
allocation from its pool and its release), in microseconds, median of 5 rounds after a warm-up."""
import statistics
import sys
import time

import cupy as cp

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
SRC = r"""
extern "C" __global__ void empty4(long long* a, long long* b, long long n, long long* c) {
  if (n > 0) a[0] = b[0] + c[0];
}
extern "C" __global__ void empty15(long long* a, long long* b, int x, long long n, long long k, long long* c,
                                   long long m, long long* d, long long* e, long long* f, int y, long long* g,
                                   long long* h, long long* i, long long* j) {
  if (n > 0) a[0] = b[0] + c[0] + d[0] + e[0] + f[0] + g[0] + h[0] + i[0] + j[0] + x + y + k + m;
}
"""
mod = cp.RawModule(code=SRC)
k4, k15 = mod.get_function("empty4"), mod.get_function("empty15")
w = cp.zeros(8, dtype=cp.int64)
stream = cp.cuda.Stream(non_blocking=True)
zero, one = cp.int64(0), cp.int64(1)


def report(what, count, op, drain):
    rounds = []
    for r in range(6):
        t0 = time.perf_counter()
        for _ in range(count):
            op()
        drain()
        if r:
            rounds.append((time.perf_counter() - t0) * 1e6 / count)
    print(f"PEER cupy {what:40s} {statistics.median(rounds):8.2f} us per operation "
          f"(rounds {min(rounds):.2f} .. {max(rounds):.2f})")


with stream:
    report("launch, 4 arguments, queued", COUNT, lambda: k4((1,), (256,), (w, w, zero, w)), stream.synchronize)
    report("launch, 15 arguments, queued", COUNT,
           lambda: k15((1,), (256,), (w, w, cp.int32(1), zero, one, w, zero, w, w, w, cp.int32(0), w, w, w, w)),
           stream.synchronize)

    def launch_and_wait():
        k4((1,), (256,), (w, w, zero, w))
        stream.synchronize()

    report("launch, 4 arguments, waited for", COUNT // 4, launch_and_wait, lambda: None)
    report("read one long back", COUNT // 4, lambda: int(w[0]), lambda: None)
    report("allocate and free 1 MiB from the pool", COUNT, lambda: cp.empty(1 << 17, dtype=cp.int64), stream.synchronize)
